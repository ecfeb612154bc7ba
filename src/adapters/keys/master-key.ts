/**
 * @module
 * Master keys of connection credentials (design §11). Kept outside the database: someone with a
 * copy of the database (or a backup of it) cannot open the credentials in it.
 *
 * - `PROVENANT_MASTER_KEY`: 32 bytes as base64 or hex. `PROVENANT_MASTER_KEY_PREVIOUS` (comma list)
 *   holds older keys that still open credentials sealed before a rotation. The key file is then
 *   not read.
 * - Otherwise the key file `<data>/master.key`, made at first start with mode 0600: one base64 key
 *   a line, newest LAST (`provenant keys rotate` appends). A file readable by group or others is
 *   refused. The file is re-read when it changes, so a running server picks up a rotation made by
 *   `provenant keys rotate` in another process.
 *
 * With PostgreSQL every process of one server must hold the same keys: set the same
 * PROVENANT_MASTER_KEY everywhere, or share the key file.
 */
import { randomBytes } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { type MasterKey, type MasterKeyring, masterKeyId, staticKeyring } from '../../domain/credentials/credential-cipher.js'
import { registerSecret } from '../../shared/secret-scrubber.js'

export const MASTER_KEY_FILE = 'master.key'
export const MASTER_KEY_ENV = 'PROVENANT_MASTER_KEY'
export const MASTER_KEY_PREVIOUS_ENV = 'PROVENANT_MASTER_KEY_PREVIOUS'

/** A clear start-up error about the master key (printed as is; never contains key material). */
export class MasterKeyError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MasterKeyError'
  }
}

export interface MasterKeyOptions {
  /** The data directory (where `master.key` lives). */
  readonly dataDir: string
  /** Environment to read PROVENANT_MASTER_KEY(_PREVIOUS) from (default process.env). */
  readonly env?: NodeJS.ProcessEnv
}

export interface LoadedKeyring extends MasterKeyring {
  /** Where the keys come from: the environment or the key file (path). */
  readonly source: { readonly kind: 'env' } | { readonly kind: 'file'; readonly path: string }
}

/** Parses one key: 64 hex digits or base64 of exactly 32 bytes. `what` names it in errors. */
export function parseMasterKey(text: string, what: string): Buffer {
  const t = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex')
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(t)) {
    const key = Buffer.from(t.replace(/-/g, '+').replace(/_/g, '/'), 'base64')
    if (key.length === 32) return key
    throw new MasterKeyError(
      `${what} must be 32 bytes, written as base64 (44 characters) or hex (64 characters); it decodes to ${key.length} bytes. Make one with: openssl rand -base64 32`,
    )
  }
  throw new MasterKeyError(
    `${what} must be 32 bytes, written as base64 (44 characters) or hex (64 characters). Make one with: openssl rand -base64 32`,
  )
}

export function masterKeyFileOf(dataDir: string): string {
  return join(dataDir, MASTER_KEY_FILE)
}

function checkMode(file: string): void {
  const mode = statSync(file).mode & 0o777
  if (mode & 0o077) {
    throw new MasterKeyError(
      `the master key file ${file} is readable or writable by group or others (mode ${mode.toString(8).padStart(4, '0')}); run: chmod 600 ${file}`,
    )
  }
}

/** Master keys are secrets too: scrubbed from log lines and error answers like credential values. */
function scrubbed(keys: Buffer[]): Buffer[] {
  for (const key of keys) {
    registerSecret(key.toString('base64'))
    registerSecret(key.toString('hex'))
  }
  return keys
}

/** Keys of a key file, newest first. */
function readKeyFile(file: string): Buffer[] {
  checkMode(file)
  const lines = readFileSync(file, 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'))
  if (lines.length === 0) throw new MasterKeyError(`the master key file ${file} holds no key`)
  return scrubbed(lines.map((line, i) => parseMasterKey(line, `line ${i + 1} of ${file}`)).reverse())
}

/** Writes the key file atomically (temporary file, then rename), mode 0600; keys newest first. */
export function writeKeyFile(file: string, keysNewestFirst: readonly Buffer[]): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 })
  const text = `# Provenant master keys for connection credentials: one base64 key a line, newest last.\n# Back this file up separately from the database; without it stored credentials cannot be opened.\n${[
    ...keysNewestFirst,
  ]
    .reverse()
    .map((k) => k.toString('base64'))
    .join('\n')}\n`
  const temporary = `${file}.${process.pid}.tmp`
  writeFileSync(temporary, text, { mode: 0o600, flag: 'w' })
  chmodSync(temporary, 0o600)
  renameSync(temporary, file)
}

function fileKeyring(file: string): LoadedKeyring {
  let stamp = ''
  let ring: MasterKeyring = staticKeyring(readKeyFile(file))
  const refresh = () => {
    let s: string
    try {
      const st = statSync(file)
      s = `${st.mtimeMs}:${st.size}:${st.ino}`
    } catch {
      return // the file went away: keep the keys already held
    }
    if (s === stamp) return
    ring = staticKeyring(readKeyFile(file))
    stamp = s
  }
  refresh()
  return {
    source: { kind: 'file', path: file },
    current: () => {
      refresh()
      return ring.current()
    },
    find: (id) => {
      refresh()
      return ring.find(id)
    },
    ids: () => {
      refresh()
      return ring.ids()
    },
  }
}

/**
 * The keyring of this server. Throws MasterKeyError with a message to act on (bad length, loose
 * file permissions). Creates the key file at first start when no environment key is set.
 */
export function loadMasterKeyring(options: MasterKeyOptions): LoadedKeyring {
  const env = options.env ?? process.env
  const fromEnv = env[MASTER_KEY_ENV]?.trim()
  if (fromEnv) {
    const keys = [parseMasterKey(fromEnv, MASTER_KEY_ENV)]
    const previous = (env[MASTER_KEY_PREVIOUS_ENV] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean)
    previous.forEach((p, i) => {
      keys.push(parseMasterKey(p, `${MASTER_KEY_PREVIOUS_ENV} (key ${i + 1})`))
    })
    return { ...staticKeyring(scrubbed(keys)), source: { kind: 'env' } }
  }
  const file = masterKeyFileOf(options.dataDir)
  if (!existsSync(file)) {
    mkdirSync(options.dataDir, { recursive: true, mode: 0o700 })
    try {
      // wx: when two processes start on a fresh data directory at once, one key wins and both use it.
      writeFileSync(file, `${randomBytes(32).toString('base64')}\n`, { mode: 0o600, flag: 'wx' })
      chmodSync(file, 0o600)
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error
    }
  }
  return fileKeyring(file)
}

/**
 * Adds a fresh key to the key file as the newest (rotation step 1). Returns it. Only for a
 * file-backed keyring: with PROVENANT_MASTER_KEY the operator supplies the new key.
 */
export function addKeyToFile(file: string): MasterKey {
  const keys = readKeyFile(file)
  const key = randomBytes(32)
  writeKeyFile(file, [key, ...keys])
  return { id: masterKeyId(key), key }
}

/** Leaves only the newest key in the key file (after every credential is re-sealed under it). */
export function retireOldKeysInFile(file: string): string[] {
  const [newest, ...older] = readKeyFile(file)
  writeKeyFile(file, [newest!])
  return older.map((k) => masterKeyId(k))
}
