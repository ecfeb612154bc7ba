/**
 * @module
 * Connection credentials (issue 6 item 1, design §11). The service sets, clears and describes them
 * and never returns a value; the separate CredentialVault (credential-vault.ts) is the only way to
 * plaintext and is handed to the connector supervisor alone, never put on Services. Every change
 * is a decision recorded with the key NAMES only, in the change's transaction, and announced as a
 * workspace change of kind `credentials`.
 */
import type { Clock } from '../../shared/clock.js'
import { registerSecret } from '../../shared/secret-scrubber.js'
import type { ActivityLog, Actor } from '../activity/index.js'
import { InvalidInputError, NotFoundError } from '../errors.js'
import type { Stores } from '../stores.js'
import { LOOKUP_RE } from '../workspace-config/index.js'
import { type MasterKeyring, openValues, sealValues } from './credential-cipher.js'
import type { StoredCredential } from './credential-store.js'

export const MAX_CREDENTIAL_KEYS = 32
export const MAX_CREDENTIAL_VALUE_BYTES = 16 * 1024
const KEY_NAME_RE = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/

export const CREDENTIALS_ENTITY_TYPE = 'connection-credentials'
export const MASTER_KEY_ENTITY_TYPE = 'master-key'

export interface CredentialStatus {
  readonly connection: string
  readonly set: boolean
  readonly keys: readonly string[]
  /** ISO 8601. */
  readonly updatedAt?: string
  /** The account (or `provenant CLI`) that last set them. */
  readonly updatedBy?: string
  /** The master key id the values are sealed under (not secret). */
  readonly keyId?: string
  /** Present (false) only in `list` for credentials kept for a lookup no longer in the configuration. */
  readonly configured?: false
}

export interface RotationResult {
  readonly keyId: string
  /** Workspace id → credentials re-sealed there. */
  readonly resealed: Readonly<Record<string, number>>
  /** Credentials already under the current key. */
  readonly alreadyCurrent: number
  /** Credentials under a key this process does not hold (left as they are). */
  readonly unreadable: readonly { readonly workspaceId: string; readonly lookup: string; readonly keyId: string }[]
}

export interface CredentialsServiceDeps {
  /** Sealed credentials, and the configuration head to check a connection exists. */
  readonly stores: Pick<Stores, 'config' | 'credentials' | 'transaction'>
  readonly clock: Clock
  readonly activity: ActivityLog
  readonly keyring: MasterKeyring
}

/**
 * The declared contract of connection credentials (design §11); `createCredentialsService` is
 * checked against it. No method returns, logs or records a credential value: statuses and decisions
 * carry key names only.
 */
export interface CredentialsService {
  /**
   * Seals `values` under the keyring's current key and stores them for a configured connection,
   * replacing earlier ones; the change, its decision and its `credentials` workspace change MUST
   * commit together. Returns the new status; throws InvalidInputError for a bad lookup, key name,
   * too many keys or an oversized value, NotFoundError when the connection is not configured.
   */
  set(actor: Actor, workspaceId: string, lookup: string, values: Readonly<Record<string, string>>): Promise<CredentialStatus>
  /** Removes a connection's credentials (also of a connection no longer configured), recorded as `set`. False when there were none. */
  clear(actor: Actor, workspaceId: string, lookup: string): Promise<boolean>
  /** Whether the connection's credentials are set, their key names and who set them when; throws InvalidInputError for a bad lookup. */
  status(workspaceId: string, lookup: string): Promise<CredentialStatus>
  /**
   * Every configured connection with its status, in configuration order, then any lookup that
   * still holds credentials but is no longer configured (`configured: false`).
   */
  list(workspaceId: string): Promise<CredentialStatus[]>
  /**
   * Re-seals every stored credential under the current key, one transaction per workspace, each
   * with a `master-key`/`rotated` decision (key ids and counts, never key material); workspaces in
   * `alsoRecordIn` get the decision even without credentials. Credentials under a key this process
   * does not hold MUST be left as they are and reported as `unreadable`.
   */
  resealAll(actor: Actor, alsoRecordIn?: readonly string[]): Promise<RotationResult>
}

/** Checks a record of values; messages name keys, never values. */
export function validateCredentialValues(values: unknown): Record<string, string> {
  if (!values || typeof values !== 'object' || Array.isArray(values))
    throw new InvalidInputError('credentials must be a JSON object of string values, e.g. {"user": "...", "password": "..."}')
  const entries = Object.entries(values as Record<string, unknown>)
  if (entries.length === 0) throw new InvalidInputError('credentials must hold at least one key; to remove them use clear-credentials')
  if (entries.length > MAX_CREDENTIAL_KEYS)
    throw new InvalidInputError(`credentials hold at most ${MAX_CREDENTIAL_KEYS} keys, not ${entries.length}`)
  const out: Record<string, string> = {}
  for (const [key, value] of entries) {
    if (!KEY_NAME_RE.test(key))
      throw new InvalidInputError(
        `credential key names are 1-64 letters, digits, dots, dashes or underscores starting with a letter or underscore; ${JSON.stringify(key.slice(0, 64))} is not`,
      )
    if (typeof value !== 'string') throw new InvalidInputError(`credential "${key}" must be a string`)
    if (value.length === 0) throw new InvalidInputError(`credential "${key}" is empty; leave the key out instead`)
    if (Buffer.byteLength(value, 'utf8') > MAX_CREDENTIAL_VALUE_BYTES)
      throw new InvalidInputError(`credential "${key}" is longer than ${MAX_CREDENTIAL_VALUE_BYTES} bytes`)
    out[key] = value
  }
  return out
}

function statusOf(lookup: string, record: StoredCredential | undefined): CredentialStatus {
  if (!record) return { connection: lookup, set: false, keys: [] }
  return {
    connection: lookup,
    set: true,
    keys: [...record.keys],
    updatedAt: new Date(record.updatedAt).toISOString(),
    updatedBy: record.updatedByName,
    keyId: record.sealed.keyId,
  }
}

/** A lookup that cannot name a connection is refused before any storage is touched (404, not a driver error). */
function checkLookup(lookup: string): void {
  if (typeof lookup !== 'string' || !LOOKUP_RE.test(lookup))
    throw new NotFoundError(
      `no connection ${JSON.stringify(String(lookup).slice(0, 64))}: a lookup is 1-64 letters, digits, dots, dashes or underscores`,
    )
}

export function createCredentialsService(deps: CredentialsServiceDeps): CredentialsService {
  const { stores, clock, activity, keyring } = deps

  async function requireConnection(tx: Stores, workspaceId: string, lookup: string): Promise<void> {
    const head = await tx.config.head(workspaceId)
    if (!head?.document.connections.some((c) => c.lookup === lookup)) {
      throw new NotFoundError(
        `no connection ${lookup} in this workspace's configuration; credentials can only be set for a configured connection`,
      )
    }
  }

  /** Seals and stores `values` for a configured connection, replacing any earlier ones. */
  async function set(
    actor: Actor,
    workspaceId: string,
    lookup: string,
    values: Readonly<Record<string, string>>,
  ): Promise<CredentialStatus> {
    checkLookup(lookup)
    const checked = validateCredentialValues(values)
    // From here on this process scrubs the values from its log lines and error messages too.
    for (const value of Object.values(checked)) registerSecret(value)
    const keys = Object.keys(checked).sort()
    const now = clock.now()
    const key = keyring.current()
    const record: StoredCredential = {
      workspaceId,
      lookup,
      sealed: sealValues(key, workspaceId, lookup, checked),
      keys,
      updatedAt: now,
      updatedById: actor.id,
      updatedByName: actor.name,
    }
    await stores.transaction(async (tx) => {
      await requireConnection(tx, workspaceId, lookup)
      const before = await tx.credentials.get(workspaceId, lookup)
      await tx.credentials.put(record)
      await tx.changes.append({
        workspaceId,
        kind: 'credentials',
        entityType: CREDENTIALS_ENTITY_TYPE,
        entityId: lookup,
        action: before ? 'replaced' : 'set',
        actorId: actor.id,
        actorName: actor.name,
        at: now,
        commitId: undefined,
        summary: `credentials of connection ${lookup} ${before ? 'replaced' : 'set'} (keys: ${keys.join(', ')})`,
      })
      await activity.recordDecision(
        {
          workspaceId,
          entityType: CREDENTIALS_ENTITY_TYPE,
          entityId: lookup,
          actionType: 'credentials-set',
          actor,
          details: {
            connection: lookup,
            keys,
            replaced: before !== undefined,
            ...(before ? { previousKeys: [...before.keys] } : {}),
            keyId: key.id,
          },
        },
        tx,
      )
    })
    return statusOf(lookup, record)
  }

  /** Removes a connection's credentials (also of a connection no longer configured). False when there were none. */
  async function clear(actor: Actor, workspaceId: string, lookup: string): Promise<boolean> {
    checkLookup(lookup)
    const now = clock.now()
    return stores.transaction(async (tx) => {
      const before = await tx.credentials.get(workspaceId, lookup)
      if (!before) return false
      await tx.credentials.delete(workspaceId, lookup)
      await tx.changes.append({
        workspaceId,
        kind: 'credentials',
        entityType: CREDENTIALS_ENTITY_TYPE,
        entityId: lookup,
        action: 'cleared',
        actorId: actor.id,
        actorName: actor.name,
        at: now,
        commitId: undefined,
        summary: `credentials of connection ${lookup} cleared`,
      })
      await activity.recordDecision(
        {
          workspaceId,
          entityType: CREDENTIALS_ENTITY_TYPE,
          entityId: lookup,
          actionType: 'credentials-cleared',
          actor,
          details: { connection: lookup, keys: [...before.keys] },
        },
        tx,
      )
      return true
    })
  }

  async function status(workspaceId: string, lookup: string): Promise<CredentialStatus> {
    checkLookup(lookup)
    return statusOf(lookup, await stores.credentials.get(workspaceId, lookup))
  }

  /**
   * Every configured connection with its status (set or not), in configuration order, then any
   * lookup that still holds credentials but is no longer configured (`configured: false`).
   */
  async function list(workspaceId: string): Promise<CredentialStatus[]> {
    const [head, stored] = await Promise.all([stores.config.head(workspaceId), stores.credentials.list(workspaceId)])
    const byLookup = new Map(stored.map((r) => [r.lookup, r]))
    const configured = (head?.document.connections ?? []).map((c) => c.lookup)
    const known = new Set(configured)
    return [
      ...configured.map((lookup) => statusOf(lookup, byLookup.get(lookup))),
      ...stored.filter((r) => !known.has(r.lookup)).map((r) => ({ ...statusOf(r.lookup, r), configured: false as const })),
    ]
  }

  /**
   * Re-seals every stored credential under the keyring's current key, one transaction per
   * workspace, each with a `master-key`/`rotated` decision (key ids and counts, never key material);
   * workspaces in `alsoRecordIn` get the decision even when they hold no credentials (a rotation is
   * visible in every workspace's activity log).
   */
  async function resealAll(actor: Actor, alsoRecordIn: readonly string[] = []): Promise<RotationResult> {
    const key = keyring.current()
    const resealed: Record<string, number> = {}
    const unreadable: { workspaceId: string; lookup: string; keyId: string }[] = []
    let alreadyCurrent = 0
    const workspaceIds = [...new Set([...(await stores.credentials.workspacesWithCredentials()), ...alsoRecordIn])].sort()
    for (const workspaceId of workspaceIds) {
      await stores.transaction(async (tx) => {
        let count = 0
        const fromKeys = new Set<string>()
        for (const record of await tx.credentials.list(workspaceId)) {
          if (record.sealed.keyId === key.id) {
            alreadyCurrent++
            continue
          }
          if (!keyring.find(record.sealed.keyId)) {
            unreadable.push({ workspaceId, lookup: record.lookup, keyId: record.sealed.keyId })
            continue
          }
          const values = openValues(keyring, workspaceId, record.lookup, record.sealed)
          if (await tx.credentials.reseal(workspaceId, record.lookup, record.sealed, sealValues(key, workspaceId, record.lookup, values))) {
            count++
            fromKeys.add(record.sealed.keyId)
          }
        }
        resealed[workspaceId] = count
        await activity.recordDecision(
          {
            workspaceId,
            entityType: MASTER_KEY_ENTITY_TYPE,
            entityId: key.id,
            actionType: 'rotated',
            actor,
            details: { keyId: key.id, fromKeyIds: [...fromKeys].sort(), resealed: count },
          },
          tx,
        )
      })
    }
    return { keyId: key.id, resealed, alreadyCurrent, unreadable }
  }

  return { set, clear, status, list, resealAll }
}
