/**
 * @module
 * What access control needs from persistence. Implemented once over the SQL port in
 * src/adapters/sql/sql-stores.ts (portable SQL for both backends).
 */
import type { Workspace } from '../workspaces/index.js'
import type { TokenScopes } from './caller.js'
import type { ApiRight, Role } from './rights.js'

export interface Account {
  readonly id: string
  /** Unique login name. */
  readonly name: string
  readonly displayName: string
  readonly disabled: boolean
  readonly createdAt: number
}

export interface Membership {
  readonly workspaceId: string
  readonly accountId: string
  readonly role: Role
}

export interface TokenRecord {
  /** The JWT `jti`. */
  readonly id: string
  readonly workspaceId: string
  readonly accountId: string
  readonly name: string
  /** The rights asked for at creation (the effective rights are narrowed again on every request). */
  readonly rights: readonly ApiRight[]
  readonly scopes: TokenScopes
  readonly createdAt: number
  readonly expiresAt: number
  readonly createdBy: string
  readonly revokedAt: number | undefined
  readonly revokedBy: string | undefined
  readonly lastUsedAt: number | undefined
}

/** Everything authentication needs about a token, in one read. */
export interface AuthRecord {
  readonly token: TokenRecord
  readonly account: Account
  /** The owner's current role in the token's workspace, or undefined when no longer a member. */
  readonly role: Role | undefined
}

export interface AccessStore {
  insertWorkspace(workspace: Workspace): Promise<void>
  workspaceById(id: string): Promise<Workspace | undefined>
  workspaceByName(name: string): Promise<Workspace | undefined>
  listWorkspaces(): Promise<Workspace[]>

  insertAccount(account: Account): Promise<void>
  accountByName(name: string): Promise<Account | undefined>
  accountById(id: string): Promise<Account | undefined>
  listAccounts(): Promise<Account[]>
  setAccountDisabled(accountId: string, disabled: boolean): Promise<void>
  /** The stored password hash (scrypt, self-describing string), or undefined when none is set. */
  passwordHash(accountId: string): Promise<string | undefined>
  setPasswordHash(accountId: string, hash: string): Promise<void>

  /** Inserts or replaces the account's role in the workspace. */
  setMembership(membership: Membership): Promise<void>
  membership(workspaceId: string, accountId: string): Promise<Membership | undefined>
  listMemberships(workspaceId: string): Promise<Membership[]>

  insertToken(token: TokenRecord): Promise<void>
  tokenById(id: string): Promise<TokenRecord | undefined>
  listTokens(workspaceId: string, accountId?: string): Promise<TokenRecord[]>
  /** Marks the token revoked; returns false when it was already revoked or does not exist. */
  revokeToken(id: string, by: string, at: number): Promise<boolean>
  touchToken(id: string, at: number): Promise<void>
  /** MUST read token, account and membership consistently in one round trip (it runs per request). */
  authRecord(tokenId: string): Promise<AuthRecord | undefined>
  /** authRecord for many tokens in one read (the stream guard's periodic check); unknown ids are absent. */
  authRecords(tokenIds: readonly string[]): Promise<Map<string, AuthRecord>>
}
