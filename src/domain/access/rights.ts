/**
 * @module
 * The rights catalogue and the roles that bundle them (design §6).
 *
 * API rights are what a token can carry and what each /oi-api operation requires. Administrative
 * capabilities are held by roles only: they are exercised in the portal and the CLI, never with a
 * bearer token, so a token can never carry them (docs/decisions.md, "Rights").
 */

export const API_RIGHTS = [
  'warm-queries:read',
  'queries:run',
  'exports:create',
  'streams:live',
  'streams:changes',
  'mcp:use',
  'proposals:create',
  'provenance:read',
  'provenance:append',
  'provenance:verify',
  'amendments:read',
  'amendments:create',
  'amendments:approve',
  'ingest:write',
] as const
export type ApiRight = (typeof API_RIGHTS)[number]

export const ADMIN_CAPABILITIES = [
  /** Apply a workspace configuration document (CLI `apply`, portal). */
  'config:apply',
  /** Approve warm queries: applying or accepting one makes this account its approver. */
  'warm-queries:approve',
  /** Accept or reject proposals (portal only). */
  'proposals:review',
  /** Set connection credentials and see connector status. */
  'connections:manage',
  /** Create and manage accounts and their roles; revoke other people's tokens. */
  'accounts:manage',
] as const
export type AdminCapability = (typeof ADMIN_CAPABILITIES)[number]

export type Right = ApiRight | AdminCapability

export const ROLES = ['viewer', 'analyst', 'editor', 'approver', 'admin'] as const
export type Role = (typeof ROLES)[number]

const VIEWER: readonly Right[] = ['warm-queries:read', 'streams:live', 'streams:changes', 'provenance:read', 'amendments:read']
const ANALYST: readonly Right[] = [...VIEWER, 'queries:run', 'exports:create', 'mcp:use', 'proposals:create', 'provenance:verify']
const EDITOR: readonly Right[] = [...ANALYST, 'provenance:append', 'amendments:create', 'ingest:write', 'config:apply']
const APPROVER: readonly Right[] = [...EDITOR, 'amendments:approve', 'warm-queries:approve', 'proposals:review']
const ADMIN: readonly Right[] = [...APPROVER, 'connections:manage', 'accounts:manage']

/** Roles are cumulative: each one holds everything of the role before it. */
export const ROLE_RIGHTS = {
  viewer: VIEWER,
  analyst: ANALYST,
  editor: EDITOR,
  approver: APPROVER,
  admin: ADMIN,
} as const satisfies Record<Role, readonly Right[]>

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value)
}

export function isApiRight(value: string): value is ApiRight {
  return (API_RIGHTS as readonly string[]).includes(value)
}

/** The API rights of a role (what a token of an account with this role may carry at most). */
export function apiRightsOf(role: Role): ApiRight[] {
  return ROLE_RIGHTS[role].filter(isApiRight)
}

export function roleHas(role: Role, right: Right): boolean {
  return (ROLE_RIGHTS[role] as readonly Right[]).includes(right)
}
