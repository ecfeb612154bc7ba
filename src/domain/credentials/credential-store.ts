/**
 * @module
 * The storage port of connection credentials: sealed values only (the store never sees a key or a
 * plaintext), keyed by workspace and connection lookup.
 */
import type { SealedCredential } from './credential-cipher.js'

export interface StoredCredential {
  readonly workspaceId: string
  readonly lookup: string
  readonly sealed: SealedCredential
  /** The key NAMES of the record (e.g. user, password): not secret, shown by status. */
  readonly keys: readonly string[]
  readonly updatedAt: number
  readonly updatedById: string
  readonly updatedByName: string
}

export interface CredentialStore {
  get(workspaceId: string, lookup: string): Promise<StoredCredential | undefined>
  /** Inserts or replaces the record of (workspaceId, lookup). */
  put(record: StoredCredential): Promise<void>
  /** True when a record was deleted. */
  delete(workspaceId: string, lookup: string): Promise<boolean>
  /** Every record of a workspace, by lookup. */
  list(workspaceId: string): Promise<StoredCredential[]>
  /** Workspaces holding at least one record (key rotation walks them). */
  workspacesWithCredentials(): Promise<string[]>
  /**
   * Replaces only the sealed value of a record, when it still holds the sealing `expected` (same key
   * id and nonce: rotation must not undo a concurrent `put`). MUST NOT change updatedAt/updatedBy.
   * True when replaced.
   */
  reseal(workspaceId: string, lookup: string, expected: SealedCredential, next: SealedCredential): Promise<boolean>
}
