/**
 * @module
 * The server's identity and token signing keys. The server id lives in the database (every process
 * sharing it is one server: tokens carry `aud = urn:provenant:<id>`). Each process signs with a
 * private Ed25519 key kept outside the database (a 0600 file in the data directory, or the
 * environment) and publishes its public half in `signing_keys`, so tokens verify in every process.
 */
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto'
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Keyring } from '../../domain/access/token-codec.js'
import { newId } from '../../shared/ids.js'
import type { SqlDb } from '../sql/sql-db.js'

export async function serverId(db: SqlDb): Promise<string> {
  await db.run("INSERT INTO server_info (key, value) VALUES ('server_id', ?) ON CONFLICT (key) DO NOTHING", [newId('srv')])
  const row = await db.get<{ value: string }>("SELECT value FROM server_info WHERE key = 'server_id'")
  return row!.value
}

/** Key id: the first 16 hex digits of SHA-256 over the public key's DER (stable, not secret). */
export function keyIdOf(publicKey: KeyObject): string {
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16)
}

/** Reads `<dir>/<prefix>-*.pem` or creates one (0600). Returns the newest key. */
export function loadOrCreatePrivateKey(dir: string, prefix: string): KeyObject {
  mkdirSync(dir, { recursive: true, mode: 0o700 })
  const files = readdirSync(dir)
    .filter((f) => f.startsWith(`${prefix}-`) && f.endsWith('.pem'))
    .sort()
  const newest = files.at(-1)
  if (newest) return createPrivateKey(readFileSync(join(dir, newest), 'utf8'))
  const { privateKey } = generateKeyPairSync('ed25519')
  const file = join(dir, `${prefix}-${new Date().toISOString().replace(/[-:.]/g, '').slice(0, 15)}.pem`)
  writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })
  chmodSync(file, 0o600)
  return privateKey
}

export interface KeyringOptions {
  /** Directory holding this process's private key files (created when missing). */
  readonly keysDir: string
  /** PEM of a private key given by the environment; takes precedence over the key files. */
  readonly privateKeyPem?: string
}

/**
 * Loads this process's signing key and publishes its public half. Keys published later by other
 * processes (another API process, the CLI) are found on first use, at most one lookup per second.
 */
const KID_RE = /^[0-9a-f]{16}$/

export async function loadKeyring(db: SqlDb, options: KeyringOptions, now: number): Promise<Keyring> {
  const privateKey = options.privateKeyPem ? createPrivateKey(options.privateKeyPem) : loadOrCreatePrivateKey(options.keysDir, 'jwt')
  if (privateKey.asymmetricKeyType !== 'ed25519') throw new Error('the token signing key must be an Ed25519 private key')
  const publicKey = createPublicKey(privateKey)
  const kid = keyIdOf(publicKey)
  await db.run("INSERT INTO signing_keys (kid, purpose, public_key, created_at) VALUES (?, 'jwt', ?, ?) ON CONFLICT (kid) DO NOTHING", [
    kid,
    publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    now,
  ])
  const known = new Map<string, KeyObject | null>([[kid, publicKey]])
  const lastMiss = new Map<string, number>()
  return {
    active: { kid, privateKey, publicKey },
    async find(wanted) {
      // Key ids are 16 hex digits (keyIdOf); anything else is unknown without asking the database
      // (a NUL or an over-long id from a forged header would otherwise reach PostgreSQL as text).
      if (typeof wanted !== 'string' || !KID_RE.test(wanted)) return undefined
      const cached = known.get(wanted)
      if (cached !== undefined) return cached ?? undefined
      if (Date.now() - (lastMiss.get(wanted) ?? 0) < 1000) return undefined
      const row = await db.get<{ public_key: string }>(
        "SELECT public_key FROM signing_keys WHERE kid = ? AND purpose = 'jwt' AND retired_at IS NULL",
        [wanted],
      )
      if (!row) {
        if (lastMiss.size > 10_000) lastMiss.clear()
        lastMiss.set(wanted, Date.now())
        return undefined
      }
      const key = createPublicKey(row.public_key)
      known.set(wanted, key)
      return key
    },
  }
}

export function keysDirOf(dataDir: string): string {
  return join(dataDir, 'keys')
}

export function dataDirExists(dataDir: string): boolean {
  return existsSync(dataDir)
}
