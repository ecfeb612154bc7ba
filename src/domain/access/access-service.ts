/**
 * @module
 * Authentication of bearer tokens and the life of a token: create (portal, CLI), list, revoke
 * (spec 5; design §6). Revocation is read from the store on every request, so it holds at once in
 * every process sharing the database.
 */
import type { Clock } from '../../shared/clock.js'
import { newId } from '../../shared/ids.js'
import type { ActivityLog, Actor } from '../activity/index.js'
import { ForbiddenError, InvalidInputError, NotFoundError, UnauthenticatedError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { TokenRecord } from './access-store.js'
import type { Caller, TokenScopes } from './caller.js'
import { type ApiRight, apiRightsOf, isApiRight, roleHas } from './rights.js'
import { type Keyring, signToken, type TokenClaims, verifyToken } from './token-codec.js'
import { tokenLifetime } from './token-expiry.js'

export interface AccessServiceDeps {
  /** Accounts, memberships and token rows (`access`); token changes commit with their change row. */
  readonly stores: Pick<Stores, 'access' | 'transaction'>
  readonly keyring: Keyring
  /** The `aud` every token of this server carries (`urn:provenant:<server id>`). */
  readonly audience: string
  readonly clock: Clock
  /** Token creation and revocation are decisions: each is recorded with the change (spec 1). */
  readonly activity: ActivityLog
}

export interface CreateTokenInput {
  readonly workspaceId: string
  readonly accountId: string
  readonly name: string
  /** `15m`, `1h`, `8h`, `24h`, `7d`, `30d` or a custom duration within 15 minutes..30 days. */
  readonly expires: string
  /** A subset of the owner's rights; all of them when omitted. */
  readonly rights?: readonly string[]
  readonly scopes?: TokenScopes
  /** Who creates it (the owner in the portal; the operator's account or "cli" in the CLI). */
  readonly createdBy: { readonly id: string; readonly name: string; readonly via?: Actor['via'] }
}

export interface CreatedToken {
  /** The JWT: shown once, never stored. */
  readonly token: string
  readonly record: TokenRecord
}

/** How often `last used` is written per token (it is a hint, not an audit record). */
const TOUCH_INTERVAL_MS = 60_000

/** The declared contract of authentication and tokens (spec 5); `createAccessService` is checked against it. */
export interface AccessService {
  /**
   * Verifies a bearer token (spec 5.1-5.2) and returns the caller with its effective rights: the
   * token's rights narrowed to the owner's current role, never widened (spec 5.4). The token row
   * MUST be read on every call, so a revocation holds at once in every process (spec 5.8). Throws
   * UnauthenticatedError for every reason a token is not valid (spec 5.5).
   */
  authenticate(authorizationHeader: string | undefined): Promise<Caller>
  /**
   * Creates a token for a member of the workspace, with an expiry choice of spec 5.3. Its rights
   * MUST be a subset of the owner's (all of them when omitted). The creation is recorded as a
   * decision with its change row. Returns the JWT (shown once, never stored) and the record; throws
   * InvalidInputError for a bad name, expiry, right or scope, a disabled account or a non-member,
   * NotFoundError for an unknown account.
   */
  createToken(input: CreateTokenInput): Promise<CreatedToken>
  /**
   * A token of this workspace as `viewer` may see it: its own tokens, or every token when the viewer
   * may manage accounts (the rule `revokeToken` applies); undefined otherwise.
   */
  visibleToken(workspaceId: string, tokenId: string, viewer: TokenViewer): Promise<TokenRecord | undefined>
  /**
   * Revokes a token at once (spec 5.8), recorded as a decision with its change row; revoking a
   * revoked token returns it unchanged. Owners revoke their own; another account's token MUST need
   * `canRevokeOthers` (ForbiddenError). Throws NotFoundError for a token not in this workspace.
   */
  revokeToken(workspaceId: string, tokenId: string, by: TokenViewer & { name: string; via?: Actor['via'] }): Promise<TokenRecord>
  /** The workspace's tokens, only `accountId`'s when given. */
  listTokens(workspaceId: string, accountId?: string): Promise<TokenRecord[]>
  /** Reads the store once, so a health check fails while the database is unreachable. */
  ping(): Promise<void>
}

/** Who looks at or revokes a token: its owner sees their own; `canRevokeOthers` (accounts:manage) sees all. */
export interface TokenViewer {
  readonly id: string
  readonly canRevokeOthers: boolean
}

export function createAccessService(deps: AccessServiceDeps): AccessService {
  const { stores, keyring, audience, clock, activity } = deps
  /** How an account acted when the caller did not say: the CLI acts as the account `cli`. */
  const viaOf = (by: { id: string; via?: Actor['via'] }): Actor['via'] => by.via ?? (by.id === 'cli' ? 'cli' : 'portal')
  const lastTouched = new Map<string, number>()
  // Signature verification (Ed25519) is the costliest step of a request; a token whose exact text
  // verified before needs only its expiry re-checked. Revocation is still read from the store on
  // every request.
  const verified = new Map<string, TokenClaims>()

  function parseBearer(header: string | undefined): string {
    if (header === undefined || header === '')
      throw new UnauthenticatedError('missing Authorization header; send "Authorization: Bearer <token>"')
    const match = /^Bearer[ ]+([A-Za-z0-9_\-.]+)\s*$/i.exec(header)
    if (!match) throw new UnauthenticatedError('malformed Authorization header; expected "Bearer <token>"')
    return match[1]!
  }

  /**
   * Verifies a bearer token and returns the caller with its effective rights (token rights ∩ the
   * owner's current role rights). Throws UnauthenticatedError for every reason a token is not valid.
   */
  async function authenticate(authorizationHeader: string | undefined): Promise<Caller> {
    const token = parseBearer(authorizationHeader)
    const now = clock.now()
    let claims = verified.get(token)
    if (claims === undefined || claims.exp * 1000 <= now - 5000) {
      claims = await verifyToken(keyring, audience, token, now)
      if (verified.size >= 10_000) verified.delete(verified.keys().next().value!)
      verified.set(token, claims)
    }
    const auth = await stores.access.authRecord(claims.jti)
    if (!auth || auth.token.workspaceId !== claims.wks || auth.token.accountId !== claims.sub) {
      throw new UnauthenticatedError('the token is not known to this server')
    }
    if (auth.token.revokedAt !== undefined) throw new UnauthenticatedError('the token has been revoked')
    if (auth.account.disabled) throw new UnauthenticatedError(`the account ${auth.account.name} is disabled`)
    if (!auth.role) throw new UnauthenticatedError(`the account ${auth.account.name} is no longer a member of this workspace`)
    const role = auth.role
    const stored = new Set(auth.token.rights)
    const rights = new Set<ApiRight>(claims.rights.filter((r): r is ApiRight => isApiRight(r) && stored.has(r) && roleHas(role, r)))
    if ((lastTouched.get(claims.jti) ?? 0) + TOUCH_INTERVAL_MS <= now) {
      lastTouched.set(claims.jti, now)
      if (lastTouched.size > 100_000) lastTouched.clear()
      await stores.access.touchToken(claims.jti, now)
    }
    return {
      accountId: auth.account.id,
      accountName: auth.account.name,
      workspaceId: auth.token.workspaceId,
      role,
      tokenId: auth.token.id,
      rights,
      scopes: auth.token.scopes,
      expiresAt: claims.exp * 1000,
    }
  }

  function checkScopes(scopes: TokenScopes | undefined): TokenScopes {
    const out: { scopeKeys?: string[]; connections?: string[]; surfaces?: string[] } = {}
    for (const dimension of ['scopeKeys', 'connections', 'surfaces'] as const) {
      const values = scopes?.[dimension]
      if (values === undefined) continue
      if (!Array.isArray(values) || values.some((v) => typeof v !== 'string' || v.trim() === '' || v.length > 200)) {
        throw new InvalidInputError(`scopes.${dimension} must be a list of non-empty names`)
      }
      out[dimension] = [...new Set(values.map((v) => v.trim()))]
    }
    return out
  }

  async function createToken(input: CreateTokenInput): Promise<CreatedToken> {
    const name = input.name.trim()
    if (name === '' || name.length > 100) throw new InvalidInputError('a token needs a name of 1 to 100 characters')
    const lifetime = tokenLifetime(input.expires)
    const account = await stores.access.accountById(input.accountId)
    if (!account) throw new NotFoundError('no such account')
    if (account.disabled) throw new InvalidInputError(`the account ${account.name} is disabled`)
    const membership = await stores.access.membership(input.workspaceId, account.id)
    if (!membership) throw new InvalidInputError(`the account ${account.name} is not a member of this workspace`)
    const ownerRights = apiRightsOf(membership.role)
    let rights: ApiRight[] = ownerRights
    if (input.rights !== undefined) {
      const unknown = input.rights.filter((r) => !isApiRight(r))
      if (unknown.length)
        throw new InvalidInputError(
          `unknown right${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; rights are ${ownerRights.join(', ')}`,
        )
      const beyond = input.rights.filter((r) => !ownerRights.includes(r as ApiRight))
      if (beyond.length) {
        throw new InvalidInputError(
          `a token cannot exceed its owner's rights: the ${membership.role} role of ${account.name} does not include ${beyond.join(', ')}`,
        )
      }
      if (input.rights.length === 0) throw new InvalidInputError('a token needs at least one right')
      rights = [...new Set(input.rights as ApiRight[])]
    }
    const now = clock.now()
    const iat = Math.floor(now / 1000)
    const record: TokenRecord = {
      id: newId('tok'),
      workspaceId: input.workspaceId,
      accountId: account.id,
      name,
      rights,
      scopes: checkScopes(input.scopes),
      createdAt: now,
      expiresAt: (iat + Math.floor(lifetime / 1000)) * 1000,
      createdBy: input.createdBy.id,
      revokedAt: undefined,
      revokedBy: undefined,
      lastUsedAt: undefined,
    }
    const token = await signToken(keyring, audience, {
      jti: record.id,
      sub: account.id,
      wks: input.workspaceId,
      name,
      rights,
      ...(Object.keys(record.scopes).length ? { scopes: record.scopes } : {}),
      iat,
      exp: record.expiresAt / 1000,
    })
    await stores.transaction(async (tx) => {
      await tx.access.insertToken(record)
      await tx.changes.append({
        workspaceId: input.workspaceId,
        kind: 'token',
        entityType: 'token',
        entityId: record.id,
        action: 'created',
        actorId: input.createdBy.id,
        actorName: input.createdBy.name,
        at: now,
        commitId: undefined,
        summary: `token "${name}" created for ${account.name}, expires ${new Date(record.expiresAt).toISOString()}`,
      })
      await activity.recordDecision(
        {
          workspaceId: input.workspaceId,
          entityType: 'token',
          entityId: record.id,
          actionType: 'created',
          actor: { id: input.createdBy.id, name: input.createdBy.name, via: viaOf(input.createdBy) },
          details: {
            name,
            ownerId: account.id,
            owner: account.name,
            rights,
            scopes: { ...record.scopes },
            expiresAt: new Date(record.expiresAt).toISOString(),
          },
        },
        tx,
      )
    })
    return { token, record }
  }

  /**
   * A token of this workspace as `viewer` may see it: its own tokens, or every token when the
   * viewer may manage accounts (the rule revokeToken applies); undefined otherwise.
   */
  async function visibleToken(workspaceId: string, tokenId: string, viewer: TokenViewer): Promise<TokenRecord | undefined> {
    const token = await stores.access.tokenById(tokenId)
    if (!token || token.workspaceId !== workspaceId) return undefined
    return token.accountId === viewer.id || viewer.canRevokeOthers ? token : undefined
  }

  async function revokeToken(
    workspaceId: string,
    tokenId: string,
    by: TokenViewer & { name: string; via?: Actor['via'] },
  ): Promise<TokenRecord> {
    const token = await stores.access.tokenById(tokenId)
    if (!token || token.workspaceId !== workspaceId) throw new NotFoundError(`no token ${tokenId} in this workspace`)
    if (!(await visibleToken(workspaceId, tokenId, by)))
      throw new ForbiddenError('only the owner or an administrator can revoke this token')
    if (token.revokedAt !== undefined) return token
    const now = clock.now()
    await stores.transaction(async (tx) => {
      await tx.access.revokeToken(tokenId, by.id, now)
      await tx.changes.append({
        workspaceId,
        kind: 'token',
        entityType: 'token',
        entityId: tokenId,
        action: 'revoked',
        actorId: by.id,
        actorName: by.name,
        at: now,
        commitId: undefined,
        summary: `token "${token.name}" revoked`,
      })
      await activity.recordDecision(
        {
          workspaceId,
          entityType: 'token',
          entityId: tokenId,
          actionType: 'revoked',
          actor: { id: by.id, name: by.name, via: viaOf(by) },
          details: { name: token.name, ownerId: token.accountId, revokedAt: new Date(now).toISOString() },
        },
        tx,
      )
    })
    return { ...token, revokedAt: now, revokedBy: by.id }
  }

  function listTokens(workspaceId: string, accountId?: string): Promise<TokenRecord[]> {
    return stores.access.listTokens(workspaceId, accountId)
  }

  /** Reads the store once, so a health check fails while the database is unreachable. */
  async function ping(): Promise<void> {
    await stores.access.workspaceById('health-check')
  }

  return { authenticate, createToken, visibleToken, revokeToken, listTokens, ping }
}
