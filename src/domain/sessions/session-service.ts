/**
 * @module
 * Portal sign-in and sessions (issue 9): passwords checked by the admin service (scrypt), sessions
 * kept server-side in the database (revocable, shared by every process), a new session secret at
 * every sign-in (no fixation), a per-session CSRF synchronizer token, a sign-in throttle per account
 * name and per client address, and every sign-in, refusal and sign-out recorded in the activity log.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto'
import type { Clock } from '../../shared/clock.js'
import { newId } from '../../shared/ids.js'
import { type Account, type AdminService, apiRightsOf, type Caller, type Right, type Role, roleHas } from '../access/index.js'
import type { ActivityLog, DecisionInput } from '../activity/index.js'
import { NotFoundError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { Workspace } from '../workspaces/index.js'
import { DEFAULT_LOGIN_LIMITS, type LoginLimits, throttleKeys, throttleVerdict } from './login-throttle.js'
import type { SessionRecord, WorkspaceMembership } from './session-store.js'

export interface SessionLimits {
  /** A session ends this long after sign-in, however active. */
  readonly absoluteMs: number
  /** A session ends after this long without a request. */
  readonly idleMs: number
}

export const DEFAULT_SESSION_LIMITS: SessionLimits = { absoluteMs: 12 * 3_600_000, idleMs: 30 * 60_000 }

/** How often `last seen` is written per session (the idle limit is this coarse). */
const TOUCH_INTERVAL_MS = 60_000

export interface SessionServiceDeps {
  /** Sessions and sign-in failures (`sessions`); accounts, password hashes and workspaces (`access`). */
  readonly stores: Pick<Stores, 'access' | 'sessions' | 'transaction'>
  readonly admin: AdminService
  readonly activity: ActivityLog
  readonly clock: Clock
  readonly loginLimits?: LoginLimits
  readonly sessionLimits?: SessionLimits
}

/** A live portal session, as pages see it. */
export interface PortalSession {
  readonly publicId: string
  readonly account: Account
  readonly workspace: Workspace
  /** The account's role in the workspace now (read on every request, so changes hold at once). */
  readonly role: Role
  readonly csrfToken: string
  readonly createdAt: number
  readonly expiresAt: number
}

export interface SignInAttempt {
  readonly accountName: string
  readonly password: string
  readonly clientAddress: string
  readonly userAgent: string
  /** The secret of the session the browser already has, if any: it is ended (a new one is made). */
  readonly replacing?: string | undefined
}

export type SignInOutcome =
  | { readonly outcome: 'signed-in'; readonly secret: string; readonly session: PortalSession }
  | { readonly outcome: 'refused'; readonly reason: 'bad-credentials' | 'no-workspace' }
  | { readonly outcome: 'throttled'; readonly limitedBy: 'account' | 'address'; readonly retryAfterMs: number }

/** The outcome of re-entering the password for an electronic signature (21 CFR Part 11). */
export type SignatureCheck =
  | { readonly outcome: 'confirmed' }
  | { readonly outcome: 'refused' }
  | { readonly outcome: 'throttled'; readonly limitedBy: 'account' | 'address'; readonly retryAfterMs: number }

/** The declared contract of portal sign-in and sessions (issue 9); `createSessionService` is checked against it. */
export interface SessionService {
  /**
   * Checks the account's password under the sign-in throttle (per account name and per client
   * address) and opens a session with a new secret (no fixation), ending the one it replaces. While
   * the throttle holds the password MUST NOT be checked. Every sign-in, refusal and throttling is
   * recorded in the activity log. Returns the outcome; never throws for bad credentials.
   */
  signIn(typed: SignInAttempt): Promise<SignInOutcome>
  /**
   * The live session for a cookie secret, or undefined when it is unknown, expired, idle too long,
   * its account is disabled or no longer a member, or the password changed since sign-in. The role
   * MUST be read now, so a role change holds at once.
   */
  resolve(secret: string | undefined): Promise<PortalSession | undefined>
  /** Ends the session (sign-out), recorded; `everywhere` ends every session of the account. */
  signOut(secret: string, session: PortalSession, options: { everywhere?: boolean; clientAddress: string }): Promise<void>
  /** Moves the session to another workspace the account belongs to; throws NotFoundError otherwise. */
  switchWorkspace(secret: string, session: PortalSession, workspaceName: string): Promise<void>
  /** The workspaces the account belongs to, with its role in each. */
  membershipsOf(accountId: string): Promise<WorkspaceMembership[]>
  /** True when `token` is this session's CSRF token, compared in constant time. */
  csrfMatches(session: PortalSession, token: string | undefined): boolean
  /** The caller a session acts as: the API rights of the account's current role, no scopes. */
  callerOf(session: PortalSession): Caller
  /** Whether the session's current role has `right`. */
  can(session: PortalSession, right: Right): boolean
  /**
   * Checks the password a signed-in person re-enters to sign (21 CFR Part 11). A wrong password
   * MUST count toward the sign-in throttle exactly as a failed sign-in does, and while the throttle
   * holds the password is not checked. The caller records a refusal with what was being signed.
   */
  confirmPassword(session: PortalSession, password: string, clientAddress: string): Promise<SignatureCheck>
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Ties a session to the password it was opened with, without storing anything reversible. */
function passwordStamp(hash: string | undefined): string {
  return sha256(`portal-session\n${hash ?? ''}`).slice(0, 32)
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

export function createSessionService(deps: SessionServiceDeps): SessionService {
  // admin and activity are read at call time (main.ts passes them as getters).
  const { stores, clock } = deps
  const loginLimits = deps.loginLimits ?? DEFAULT_LOGIN_LIMITS
  const limits = deps.sessionLimits ?? DEFAULT_SESSION_LIMITS
  const lastTouched = new Map<string, number>()

  /** Workspaces a refused attempt is recorded in: the account's, or every one for unknown names. */
  async function workspacesToNotify(accountName: string): Promise<{ ids: string[]; account: Account | undefined }> {
    const account = await stores.access.accountByName(accountName)
    if (account) return { ids: (await stores.sessions.membershipsOf(account.id)).map((m) => m.workspace.id), account }
    return { ids: (await stores.access.listWorkspaces()).map((w) => w.id), account: undefined }
  }

  async function recordRefusal(
    attempt: SignInAttempt,
    actionType: 'sign-in-refused' | 'sign-in-throttled',
    details: Record<string, unknown>,
  ): Promise<void> {
    const name = clip(attempt.accountName.trim(), 100)
    const { ids, account } = await workspacesToNotify(attempt.accountName.trim())
    const attemptId = newId('signin')
    for (const workspaceId of ids) {
      await deps.activity.recordDecision({
        workspaceId,
        entityType: 'session',
        entityId: attemptId,
        actionType,
        actor: { id: account?.id ?? 'unknown', name, via: 'portal' },
        details: { accountName: name, clientAddress: attempt.clientAddress, userAgent: clip(attempt.userAgent, 200), ...details },
      })
    }
  }

  /** The throttle's verdict on a password attempt now, from the recent failures of its account and its address. */
  async function throttleNow(keys: ReturnType<typeof throttleKeys>, now: number): Promise<ReturnType<typeof throttleVerdict>> {
    const recent = async (key: string, windowMs: number) => (await stores.sessions.loginFailures([key], now - windowMs)).get(key)
    return throttleVerdict(
      loginLimits,
      {
        account: await recent(keys.account, loginLimits.account.windowMs),
        address: await recent(keys.address, loginLimits.address.windowMs),
      },
      now,
    )
  }

  async function signIn(typed: SignInAttempt): Promise<SignInOutcome> {
    // No account name holds U+0000 (PostgreSQL text cannot): a typed one is a wrong name like any
    // other, never a query error (it was a 500 on PostgreSQL).
    const attempt = { ...typed, accountName: typed.accountName.replace(/\u0000/g, '\uFFFD') }
    const now = clock.now()
    const keys = throttleKeys(attempt.accountName, attempt.clientAddress)
    const window = Math.max(loginLimits.account.windowMs, loginLimits.address.windowMs)
    const verdict = await throttleNow(keys, now)
    if (!verdict.allowed) {
      await recordRefusal(attempt, 'sign-in-throttled', { limitedBy: verdict.limitedBy })
      return { outcome: 'throttled', limitedBy: verdict.limitedBy, retryAfterMs: verdict.retryAfterMs }
    }

    const account = await deps.admin.checkPassword(attempt.accountName.trim(), attempt.password)
    if (!account) {
      await stores.sessions.recordLoginFailure([keys.account, keys.address], now)
      await recordRefusal(attempt, 'sign-in-refused', { reason: 'wrong account name or password' })
      return { outcome: 'refused', reason: 'bad-credentials' }
    }
    const memberships = await stores.sessions.membershipsOf(account.id)
    const first = memberships[0]
    if (!first) {
      await recordRefusal(attempt, 'sign-in-refused', { reason: 'the account is not a member of any workspace' })
      return { outcome: 'refused', reason: 'no-workspace' }
    }
    await stores.sessions.clearLoginFailures(keys.account)

    // A fresh secret at every sign-in: a session id planted before sign-in (fixation) never
    // becomes authenticated, and the browser's previous session ends here.
    const secret = randomBytes(32).toString('base64url')
    const record: SessionRecord = {
      idHash: sha256(secret),
      publicId: newId('ses'),
      accountId: account.id,
      workspaceId: first.workspace.id,
      csrfToken: randomBytes(32).toString('base64url'),
      passwordStamp: passwordStamp(await stores.access.passwordHash(account.id)),
      createdAt: now,
      lastSeenAt: now,
      expiresAt: now + limits.absoluteMs,
      clientAddress: attempt.clientAddress,
      userAgent: clip(attempt.userAgent, 400),
    }
    await stores.transaction(async (tx) => {
      if (attempt.replacing) await tx.sessions.deleteSession(sha256(attempt.replacing))
      await tx.sessions.deleteStaleSessions(now, now - limits.idleMs)
      await tx.sessions.insertSession(record)
      await deps.activity.recordDecision(
        sessionDecision(record, account, 'signed-in', {
          clientAddress: attempt.clientAddress,
          userAgent: clip(attempt.userAgent, 200),
          role: first.role,
          expiresAt: new Date(record.expiresAt).toISOString(),
        }),
        tx,
      )
    })
    await stores.sessions.pruneLoginFailures(now - window)
    return {
      outcome: 'signed-in',
      secret,
      session: {
        publicId: record.publicId,
        account,
        workspace: first.workspace,
        role: first.role,
        csrfToken: record.csrfToken,
        createdAt: now,
        expiresAt: record.expiresAt,
      },
    }
  }

  function sessionDecision(
    record: Pick<SessionRecord, 'publicId' | 'workspaceId'>,
    account: Account,
    actionType: string,
    details: Record<string, unknown>,
  ): DecisionInput {
    return {
      workspaceId: record.workspaceId,
      entityType: 'session',
      entityId: record.publicId,
      actionType,
      actor: { id: account.id, name: account.name, via: 'portal' },
      details,
    }
  }

  /**
   * The live session for a cookie secret, or undefined when it is unknown, expired, idle too long,
   * its account is disabled or no longer a member, or the password changed since sign-in.
   */
  async function resolve(secret: string | undefined): Promise<PortalSession | undefined> {
    if (!secret || secret.length > 200) return undefined
    const idHash = sha256(secret)
    const found = await stores.sessions.lookupSession(idHash)
    if (!found) return undefined
    const now = clock.now()
    const { session, account, role } = found
    const stale = session.expiresAt <= now || session.lastSeenAt + limits.idleMs <= now
    if (stale || account.disabled || !role || passwordStamp(found.passwordHash) !== session.passwordStamp) {
      await stores.sessions.deleteSession(idHash)
      return undefined
    }
    if ((lastTouched.get(idHash) ?? session.lastSeenAt) + TOUCH_INTERVAL_MS <= now) {
      lastTouched.set(idHash, now)
      if (lastTouched.size > 100_000) lastTouched.clear()
      await stores.sessions.touchSession(idHash, now)
    }
    return {
      publicId: session.publicId,
      account,
      workspace: found.workspace,
      role,
      csrfToken: session.csrfToken,
      createdAt: session.createdAt,
      expiresAt: session.expiresAt,
    }
  }

  /** Ends the session (sign-out); `everywhere` ends every session of the account. */
  async function signOut(secret: string, session: PortalSession, options: { everywhere?: boolean; clientAddress: string }): Promise<void> {
    await stores.transaction(async (tx) => {
      const ended = options.everywhere
        ? await tx.sessions.deleteSessionsOf(session.account.id)
        : Number(await tx.sessions.deleteSession(sha256(secret)))
      await deps.activity.recordDecision(
        sessionDecision({ publicId: session.publicId, workspaceId: session.workspace.id }, session.account, 'signed-out', {
          clientAddress: options.clientAddress,
          everywhere: options.everywhere === true,
          sessionsEnded: ended,
        }),
        tx,
      )
    })
  }

  /** Moves the session to another workspace the account belongs to. */
  async function switchWorkspace(secret: string, session: PortalSession, workspaceName: string): Promise<void> {
    const target = (await stores.sessions.membershipsOf(session.account.id)).find((m) => m.workspace.name === workspaceName)
    if (!target) throw new NotFoundError(`you are not a member of a workspace named ${workspaceName}`)
    await stores.sessions.setSessionWorkspace(sha256(secret), target.workspace.id)
  }

  function membershipsOf(accountId: string): Promise<WorkspaceMembership[]> {
    return stores.sessions.membershipsOf(accountId)
  }

  /** True when `token` is this session's CSRF token (constant-time). */
  function csrfMatches(session: PortalSession, token: string | undefined): boolean {
    if (typeof token !== 'string') return false
    const expected = Buffer.from(session.csrfToken)
    const actual = Buffer.from(token)
    return expected.length === actual.length && timingSafeEqual(expected, actual)
  }

  /** The caller a session acts as: the API rights of the account's current role, no scopes. */
  function callerOf(session: PortalSession): Caller {
    return {
      accountId: session.account.id,
      accountName: session.account.name,
      workspaceId: session.workspace.id,
      role: session.role,
      tokenId: undefined,
      rights: new Set(apiRightsOf(session.role)),
      scopes: {},
      expiresAt: session.expiresAt,
    }
  }

  /**
   * Checks the password a signed-in person re-enters to sign (approve or reject in the portal).
   * A wrong password counts toward the sign-in throttle of the account and the address, exactly as
   * a failed sign-in does, so the signature form cannot be used to guess passwords; while the
   * throttle holds, the password is not checked at all. The signatures service (the only caller,
   * src/domain/signatures/) records the refusal with what was being signed.
   */
  async function confirmPassword(session: PortalSession, password: string, clientAddress: string): Promise<SignatureCheck> {
    const now = clock.now()
    const keys = throttleKeys(session.account.name, clientAddress)
    const verdict = await throttleNow(keys, now)
    if (!verdict.allowed) return { outcome: 'throttled', limitedBy: verdict.limitedBy, retryAfterMs: verdict.retryAfterMs }
    const account = password === '' ? undefined : await deps.admin.checkPassword(session.account.name, password)
    if (!account || account.id !== session.account.id) {
      await stores.sessions.recordLoginFailure([keys.account, keys.address], now)
      return { outcome: 'refused' }
    }
    await stores.sessions.clearLoginFailures(keys.account)
    return { outcome: 'confirmed' }
  }

  function can(session: PortalSession, right: Right): boolean {
    return roleHas(session.role, right)
  }

  return { signIn, resolve, signOut, switchWorkspace, membershipsOf, csrfMatches, callerOf, can, confirmPassword }
}
