/**
 * @module
 * The only way to a credential's plaintext (design §11: "decrypted only inside the connector").
 * Created in main.ts and handed to the connector supervisor as `runtime.credentialVault`; it is
 * deliberately not on Services, which the HTTP API, the portal and MCP are given. Every value it
 * reveals is registered with the process-wide secret scrubber first, so an error or log line that
 * later quotes it is cleaned.
 */
import { registerSecret } from '../../shared/secret-scrubber.js'
import type { Stores } from '../stores.js'
import { type MasterKeyring, openValues } from './credential-cipher.js'

export interface CredentialVault {
  /**
   * The decrypted values of a connection's credentials, or undefined when none are set. Throws
   * CredentialDecryptError (message without any value) when they cannot be opened.
   */
  reveal(workspaceId: string, lookup: string): Promise<Readonly<Record<string, string>> | undefined>
}

export function createCredentialVault(deps: {
  /** Only the sealed credentials are read. */
  readonly stores: Pick<Stores, 'credentials'>
  readonly keyring: MasterKeyring
  readonly onReveal?: (value: string) => void
}): CredentialVault {
  const { stores, keyring } = deps
  const onReveal = deps.onReveal ?? registerSecret
  return {
    async reveal(workspaceId, lookup) {
      const record = await stores.credentials.get(workspaceId, lookup)
      if (!record) return undefined
      const values = openValues(keyring, workspaceId, lookup, record.sealed)
      for (const value of Object.values(values)) onReveal(value)
      return Object.freeze(values)
    },
  }
}
