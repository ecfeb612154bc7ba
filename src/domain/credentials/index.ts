/**
 * @module
 * Connection credentials, sealed at rest and never returned (spec 1; design §11). Other features
 * import from here, never from the files behind it.
 */
export type { CredentialStore, StoredCredential } from './credential-store.js'
export { type CredentialVault, createCredentialVault } from './credential-vault.js'
export {
  type CredentialStatus,
  type CredentialsService,
  type CredentialsServiceDeps,
  createCredentialsService,
  type RotationResult,
} from './credentials-service.js'
