/**
 * @module
 * What portal sessions and the sign-in throttle need from persistence. Implemented once over the
 * SQL port (src/adapters/sql/sql-session-store.ts) for both backends, so sessions are shared by every
 * process using the database.
 */
import type { Account, Role } from '../access/index.js'
import type { Workspace } from '../workspaces/index.js'

export interface SessionRecord {
  /** SHA-256 (hex) of the cookie secret; the secret itself is never stored. */
  readonly idHash: string
  /** A non-secret id for logs, the activity log and session lists. */
  readonly publicId: string
  readonly accountId: string
  readonly workspaceId: string
  /** The synchronizer token every portal form of this session carries. */
  readonly csrfToken: string
  /** A digest of the password hash at sign-in; a changed password no longer matches. */
  readonly passwordStamp: string
  readonly createdAt: number
  readonly lastSeenAt: number
  readonly expiresAt: number
  readonly clientAddress: string
  readonly userAgent: string
}

/** A session with everything needed to decide whether it still holds, read in one round trip. */
export interface SessionLookup {
  readonly session: SessionRecord
  readonly account: Account
  /** The stored password hash now (undefined when it was cleared). */
  readonly passwordHash: string | undefined
  readonly workspace: Workspace
  /** The account's current role in the session's workspace; undefined when no longer a member. */
  readonly role: Role | undefined
}

export interface WorkspaceMembership {
  readonly workspace: Workspace
  readonly role: Role
}

export interface SessionStore {
  insertSession(session: SessionRecord): Promise<void>
  /** MUST read session, account, workspace and membership consistently in one query (it runs per page). */
  lookupSession(idHash: string): Promise<SessionLookup | undefined>
  touchSession(idHash: string, at: number): Promise<void>
  setSessionWorkspace(idHash: string, workspaceId: string): Promise<void>
  /** Returns false when no such session existed. */
  deleteSession(idHash: string): Promise<boolean>
  /** Ends every session of an account; returns how many there were. */
  deleteSessionsOf(accountId: string): Promise<number>
  /** Removes sessions whose absolute expiry or idle limit passed. */
  deleteStaleSessions(now: number, idleSince: number): Promise<void>
  /** The account's workspaces and roles, ordered by workspace name. */
  membershipsOf(accountId: string): Promise<WorkspaceMembership[]>

  recordLoginFailure(keys: readonly string[], at: number): Promise<void>
  /** Failures per key at or after `since`, with the oldest failure time counted. */
  loginFailures(keys: readonly string[], since: number): Promise<ReadonlyMap<string, { readonly count: number; readonly oldest: number }>>
  clearLoginFailures(key: string): Promise<void>
  /** Drops failures older than `before` (they no longer count). */
  pruneLoginFailures(before: number): Promise<void>
}
