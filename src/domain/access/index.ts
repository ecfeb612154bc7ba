/**
 * @module
 * Access: tokens, accounts, rights and scopes (spec 5). Other features import from here, never from
 * the files behind it (docs/architecture.md, rule 10).
 */
export {
  type AccessService,
  type AccessServiceDeps,
  type CreatedToken,
  type CreateTokenInput,
  createAccessService,
  type TokenViewer,
} from './access-service.js'
export type { AccessStore, Account, AuthRecord, Membership, TokenRecord } from './access-store.js'
export { type AdminService, type AdminServiceDeps, createAdminService } from './admin-service.js'
export { type Caller, hasRight, inScope, type TokenScopes } from './caller.js'
export { type ApiRight, apiRightsOf, isApiRight, isRole, type Right, type Role, roleHas } from './rights.js'
export { allowedConnections, connectionAllowed, surfaceAllowed } from './scope-rules.js'
export { createStreamGuard, type StreamGuard, type StreamGuardDeps } from './stream-guard.js'
