/**
 * @module
 * The activity log's checkpoint signing key (design §8, §11). It is kept outside the database, so
 * someone who can rewrite the database still cannot sign a checkpoint over what they wrote: a 0600
 * file `<data>/keys/activity-log.key` made at first start, or PROVENANT_LEDGER_SIGNING_KEY. Both
 * hold Go's signer-key text (`PRIVATE+KEY+<name>+<hash>+<base64>`), which carries the key name, so
 * the log name stays the same for the life of the data; a PKCS#8 PEM key is accepted too and then
 * gets the default name. Every process of one server must use the same key (share the key file or
 * the environment variable): checkpoints by another key are ignored by verify, with a reason.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { LedgerSigning } from '../../domain/ledger/ledger-service.js'
import {
  createNoteSigner,
  formatPrivateNoteKey,
  generateSigningKey,
  importSigningKey,
  parseVerifierKey,
} from '../../domain/ledger/signed-note.js'

export const LEDGER_KEY_FILE = 'activity-log.key'
const KEY_SUFFIX = '/activity-log'

export interface LedgerKeyOptions {
  /** Directory of this server's private key files (created when missing). */
  readonly keysDir: string
  /** Key text from the environment; wins over the file. */
  readonly keyText?: string | undefined
  /** Names the log in a new key: `provenant/<serverId>/activity-log`. */
  readonly serverId: string
  /** Further verifier keys whose checkpoints count (earlier keys after a rotation). */
  readonly extraTrustedKeys?: readonly string[]
}

/** The default key name of a server: `provenant/<serverId>/activity-log`. */
export function defaultLedgerKeyName(serverId: string): string {
  return `provenant/${serverId}${KEY_SUFFIX}`
}

export function loadLedgerSigning(options: LedgerKeyOptions): LedgerSigning {
  let text = options.keyText?.trim()
  if (!text) {
    mkdirSync(options.keysDir, { recursive: true, mode: 0o700 })
    const file = join(options.keysDir, LEDGER_KEY_FILE)
    if (!existsSync(file)) {
      try {
        // wx: when two processes start on a fresh data directory at once, one key wins and both use it.
        writeFileSync(file, `${formatPrivateNoteKey(defaultLedgerKeyName(options.serverId), generateSigningKey())}\n`, {
          mode: 0o600,
          flag: 'wx',
        })
        chmodSync(file, 0o600)
      } catch (error) {
        if ((error as { code?: string }).code !== 'EEXIST') throw error
      }
    }
    text = readFileSync(file, 'utf8').trim()
  }
  const { key, name } = importSigningKey(text)
  const keyName = name ?? defaultLedgerKeyName(options.serverId)
  const signer = createNoteSigner(keyName, key)
  const logName = keyName.endsWith(KEY_SUFFIX) ? keyName.slice(0, -KEY_SUFFIX.length) : keyName
  const own = parseVerifierKey(signer.vkey)
  const extra = (options.extraTrustedKeys ?? []).map((v) => parseVerifierKey(v)).filter((k) => k.vkey !== own.vkey)
  return { signer, key, logName, trustedKeys: [own, ...extra] }
}
