/**
 * @module
 * Server configuration from command-line flags and environment variables (flags win). Every
 * setting is listed in the README's configuration table.
 */
import { resolve } from 'node:path'

export interface Config {
  /** Data directory: SQLite files, keys, exports (default ./data). */
  readonly dataDir: string
  /** postgres://… switches every store to PostgreSQL; undefined = embedded SQLite. */
  readonly databaseUrl: string | undefined
  readonly host: string
  readonly port: number
  /** Base URL clients reach this server at (links, download URLs, OpenAPI servers). */
  readonly publicUrl: string
  readonly logLevel: string
  /** Ed25519 private key (PEM) for signing tokens, instead of a key file in the data directory. */
  readonly jwtPrivateKeyPem: string | undefined
  /** Browser origins allowed to call the MCP endpoint (besides the server's own). */
  readonly allowedOrigins: readonly string[]
  /** Seed a demo workspace on first start. */
  readonly demo: boolean
  /** The activity log's checkpoint signing key (Go signer-key text or PKCS#8 PEM), instead of `<data>/keys/activity-log.key`. */
  readonly ledgerSigningKey?: string | undefined
  /** Verifier keys (C2SP vkeys) of earlier checkpoint signing keys whose checkpoints still count. */
  readonly ledgerTrustedKeys?: readonly string[]
}

export interface ConfigInput {
  readonly data?: string
  readonly databaseUrl?: string
  readonly host?: string
  readonly port?: string | number
  readonly publicUrl?: string
  readonly demo?: boolean
}

export function loadConfig(flags: ConfigInput = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const host = flags.host ?? env['PROVENANT_HOST'] ?? '127.0.0.1'
  const portText = String(flags.port ?? env['PROVENANT_PORT'] ?? env['PORT'] ?? '8080')
  const port = Number(portText)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid port "${portText}"`)
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
  return {
    dataDir: resolve(flags.data ?? env['PROVENANT_DATA_DIR'] ?? './data'),
    databaseUrl: flags.databaseUrl ?? (env['DATABASE_URL'] || undefined),
    host,
    port,
    publicUrl: (flags.publicUrl ?? env['PROVENANT_PUBLIC_URL'] ?? `http://${shownHost}:${port}`).replace(/\/+$/, ''),
    logLevel: env['PROVENANT_LOG_LEVEL'] ?? 'info',
    jwtPrivateKeyPem: env['PROVENANT_JWT_PRIVATE_KEY'] || undefined,
    allowedOrigins: (env['PROVENANT_ALLOWED_ORIGINS'] ?? '').split(',').map((s) => s.trim()).filter(Boolean),
    demo: flags.demo ?? env['PROVENANT_DEMO'] === '1',
    ledgerSigningKey: env['PROVENANT_LEDGER_SIGNING_KEY'] || undefined,
    ledgerTrustedKeys: (env['PROVENANT_LEDGER_TRUSTED_KEYS'] ?? '').split(',').map((s) => s.trim()).filter(Boolean),
  }
}
