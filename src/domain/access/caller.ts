/**
 * @module
 * Who is calling: the result of authenticating a bearer token (or a portal session).
 */
import type { ApiRight, Role } from './rights.js'

/** Optional narrowing of a token to some scope keys, connections and surfaces (absent = all). */
export interface TokenScopes {
  readonly scopeKeys?: readonly string[]
  readonly connections?: readonly string[]
  readonly surfaces?: readonly string[]
}

export interface Caller {
  readonly accountId: string
  readonly accountName: string
  readonly workspaceId: string
  readonly role: Role
  /** The token's id (JWT `jti`), or undefined for a portal session or the CLI. */
  readonly tokenId: string | undefined
  /** Effective rights: the token's rights ∩ the owner's current role rights. */
  readonly rights: ReadonlySet<ApiRight>
  readonly scopes: TokenScopes
  /** Expiry of the token or session, ms since the epoch. */
  readonly expiresAt: number | undefined
  /** Set when an AI client acts for the caller (MCP), so the activity log can say so. */
  readonly via?: 'mcp'
}

export function hasRight(caller: Caller, right: ApiRight): boolean {
  return caller.rights.has(right)
}

/** True when the caller's scopes allow this value in the given dimension. */
export function inScope(scopes: TokenScopes, dimension: keyof TokenScopes, value: string): boolean {
  const allowed = scopes[dimension]
  return allowed === undefined || allowed.includes(value)
}
