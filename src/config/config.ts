/**
 * @module
 * Server configuration from command-line flags and environment variables (flags win). Every
 * setting is listed in the README's configuration table.
 */
import { join, resolve } from 'node:path'

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
  /** Export files: a directory every process shares (default <data>/exports). */
  readonly exportDir: string
  /** An S3-compatible bucket for export files instead of the directory (downloads are then presigned bucket URLs). */
  readonly exportBucket: ExportBucketConfig | undefined
  /** HMAC key of download URLs (base64 or hex, >= 32 bytes); a key file in the export directory otherwise. */
  readonly downloadUrlKey: string | undefined
  /** Master key of connection credentials (base64 or hex of 32 bytes) instead of `<data>/master.key`. */
  readonly masterKey?: string | undefined
  /** Older master keys (comma list) that still open credentials sealed before a rotation. */
  readonly masterKeyPrevious?: string | undefined
  /** Query capacity (PROVENANT_QUERY_*): unset fields take the pool's defaults (docs/configuration.md). */
  readonly queryCapacity?: QueryCapacityConfig
  /** The columnar analytics tier (PROVENANT_COLUMNAR=on; docs/design/columnar.md); undefined when off (the default). */
  readonly columnar?: ColumnarConfig | undefined
}

/** The columnar tier: DuckDB over Parquet segments (issue 16). */
export interface ColumnarConfig {
  /** Segment files: a directory every process shares (PROVENANT_COLUMNAR_DIR, default <data>/segments). */
  readonly dir: string
  /** DuckDB's threads (PROVENANT_COLUMNAR_THREADS, default 2). */
  readonly threads: number
  /** DuckDB's memory_limit, e.g. 1GB (PROVENANT_COLUMNAR_MEMORY, default 1GB; at least columnarMemoryMinimum). */
  readonly memoryLimit: string
  /** What DuckDB may spill to disk past memoryLimit (PROVENANT_COLUMNAR_SPILL, default 4GB), in `<dir>/.spill/`. */
  readonly spillLimit?: string
  /** Rows per compacted segment at most (PROVENANT_COLUMNAR_SEGMENT_ROWS, default 1,000,000). */
  readonly segmentRows: number
  /** Pause between compactor passes, ms (PROVENANT_COLUMNAR_INTERVAL_MS, default 1,000). */
  readonly intervalMs: number
  /** A tail whose oldest row is this old is compacted though not full, ms (PROVENANT_COLUMNAR_TAIL_AGE_MS, default 60,000). */
  readonly tailAgeMs?: number
}

/**
 * The columnar settings from PROVENANT_COLUMNAR_*; undefined when PROVENANT_COLUMNAR is not on,
 * unless `force` (the `provenant columnar` command works on the segments either way).
 */
export function columnarOf(env: NodeJS.ProcessEnv, dataDir: string, force = false): ColumnarConfig | undefined {
  const mode = (env['PROVENANT_COLUMNAR'] ?? 'off').toLowerCase()
  if (mode !== 'on' && mode !== 'off') throw new Error(`PROVENANT_COLUMNAR must be on or off, not "${env['PROVENANT_COLUMNAR']}"`)
  if (mode === 'off' && !force) return undefined
  const memoryLimit = env['PROVENANT_COLUMNAR_MEMORY'] || '1GB'
  const memoryBytes = sizeBytes(memoryLimit, 'PROVENANT_COLUMNAR_MEMORY', '512MB or 2GB')
  const spillLimit = env['PROVENANT_COLUMNAR_SPILL'] || '4GB'
  sizeBytes(spillLimit, 'PROVENANT_COLUMNAR_SPILL', '4GB or 500GB')
  const segmentRows = positiveInt(env, 'PROVENANT_COLUMNAR_SEGMENT_ROWS', 1_000, 100_000_000) ?? 1_000_000
  const minimum = columnarMemoryMinimum(segmentRows)
  if (memoryBytes < minimum)
    throw new Error(
      `PROVENANT_COLUMNAR_MEMORY is ${memoryLimit}; with PROVENANT_COLUMNAR_SEGMENT_ROWS at ${segmentRows} it must be at least ${Math.ceil(minimum / 1e6)}MB: compaction reads staged rows through an 80 MB buffer (a query reading the uncompacted tail takes another) and sorts a segment in memory at up to about 80 bytes a row, and below that every compaction fails with an out-of-memory error`,
    )
  return {
    dir: resolve(env['PROVENANT_COLUMNAR_DIR'] ?? join(dataDir, 'segments')),
    threads: positiveInt(env, 'PROVENANT_COLUMNAR_THREADS', 1, 256) ?? 2,
    memoryLimit,
    spillLimit,
    segmentRows,
    intervalMs: positiveInt(env, 'PROVENANT_COLUMNAR_INTERVAL_MS', 100, 86_400_000) ?? 1_000,
    tailAgeMs: positiveInt(env, 'PROVENANT_COLUMNAR_TAIL_AGE_MS', 1_000, 86_400_000) ?? 60_000,
  }
}

/**
 * The smallest DuckDB memory_limit (bytes) the tier works under (docs/configuration.md): two
 * 80 MB CSV read buffers (the compactor's staged rows, and a query's tail read at the same time;
 * row-export.ts) and a segment's sort, which DuckDB 1.5 does not spill entirely (up to 80 bytes a
 * row, measured: 200,000-row segments compact in 100MB but not 84MB, 1,000,000-row ones in 160MB but not 128MB).
 */
export function columnarMemoryMinimum(segmentRows: number): number {
  return 160e6 + 80 * segmentRows
}

/** A DuckDB size setting in bytes (KB = 1000, KiB = 1024, as DuckDB reads them); refuses anything else. */
function sizeBytes(text: string, name: string, example: string): number {
  const match = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)$/i.exec(text)
  if (!match) throw new Error(`${name} must be a size such as ${example}, not "${text}"`)
  const unit = match[2]!.toLowerCase()
  const power = { k: 1, m: 2, g: 3, t: 4 }[unit[0] as 'k' | 'm' | 'g' | 't']
  return Number(match[1]) * (unit.endsWith('ib') ? 1024 : 1000) ** power
}

/** How the query workers are shared (issue 15; design §14). */
export interface QueryCapacityConfig {
  /** Worker threads: queries running at once (PROVENANT_QUERY_WORKERS). */
  readonly workers?: number
  /** Queries one account may run at once (PROVENANT_QUERY_PER_CALLER). */
  readonly perCaller?: number
  /** Queries that may wait for a worker, all accounts (PROVENANT_QUERY_QUEUE). */
  readonly queueLimit?: number
  /** Queries one account may have waiting (PROVENANT_QUERY_QUEUE_PER_CALLER). */
  readonly perCallerQueue?: number
  /** One query's memory budget in MB: each worker's heap limit (PROVENANT_QUERY_MEMORY_MB). */
  readonly memoryMb?: number
  /** The query workers' CPU priority as a Linux nice value, 0-19 (PROVENANT_QUERY_WORKER_NICE). */
  readonly workerNice?: number
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, min: number, max: number): number | undefined {
  const text = env[name]
  if (text === undefined || text === '') return undefined
  const n = Number(text)
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be a whole number from ${min} to ${max}, not "${text}"`)
  return n
}

function queryCapacityOf(env: NodeJS.ProcessEnv): QueryCapacityConfig {
  const out: Record<string, number> = {}
  const set = (key: keyof QueryCapacityConfig, value: number | undefined) => {
    if (value !== undefined) out[key] = value
  }
  set('workers', positiveInt(env, 'PROVENANT_QUERY_WORKERS', 1, 64))
  set('perCaller', positiveInt(env, 'PROVENANT_QUERY_PER_CALLER', 1, 64))
  set('queueLimit', positiveInt(env, 'PROVENANT_QUERY_QUEUE', 0, 10_000))
  set('perCallerQueue', positiveInt(env, 'PROVENANT_QUERY_QUEUE_PER_CALLER', 0, 10_000))
  set('memoryMb', positiveInt(env, 'PROVENANT_QUERY_MEMORY_MB', 64, 65_536))
  set('workerNice', positiveInt(env, 'PROVENANT_QUERY_WORKER_NICE', 0, 19))
  return out
}

export interface ExportBucketConfig {
  readonly bucket: string
  readonly region: string
  readonly endpoint: string | undefined
  readonly pathStyle: boolean
  readonly prefix: string
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken: string | undefined
}

/** PROVENANT_EXPORT_S3_*: undefined unless a bucket is named; credentials fall back to AWS_*. */
function exportBucketOf(env: NodeJS.ProcessEnv): ExportBucketConfig | undefined {
  const bucket = env['PROVENANT_EXPORT_S3_BUCKET']
  if (!bucket) return undefined
  const accessKeyId = env['PROVENANT_EXPORT_S3_ACCESS_KEY_ID'] ?? env['AWS_ACCESS_KEY_ID']
  const secretAccessKey = env['PROVENANT_EXPORT_S3_SECRET_ACCESS_KEY'] ?? env['AWS_SECRET_ACCESS_KEY']
  if (!accessKeyId || !secretAccessKey)
    throw new Error(
      'PROVENANT_EXPORT_S3_BUCKET is set but no credentials are: set PROVENANT_EXPORT_S3_ACCESS_KEY_ID and PROVENANT_EXPORT_S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)',
    )
  const endpoint = env['PROVENANT_EXPORT_S3_ENDPOINT'] || undefined
  if (endpoint && !/^https?:\/\/[^/]+\/?$/.test(endpoint))
    throw new Error(`PROVENANT_EXPORT_S3_ENDPOINT must be scheme://host[:port], not "${endpoint}"`)
  const pathStyle = env['PROVENANT_EXPORT_S3_PATH_STYLE']
  return {
    bucket,
    region: env['PROVENANT_EXPORT_S3_REGION'] ?? env['AWS_REGION'] ?? 'us-east-1',
    endpoint: endpoint?.replace(/\/$/, ''),
    pathStyle: pathStyle === undefined ? endpoint !== undefined : pathStyle === '1' || pathStyle === 'true',
    prefix: env['PROVENANT_EXPORT_S3_PREFIX'] ?? '',
    accessKeyId,
    secretAccessKey,
    sessionToken: env['PROVENANT_EXPORT_S3_SESSION_TOKEN'] ?? env['AWS_SESSION_TOKEN'] ?? undefined,
  }
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
  const dataDir = resolve(flags.data ?? env['PROVENANT_DATA_DIR'] ?? './data')
  return {
    dataDir,
    databaseUrl: flags.databaseUrl ?? (env['DATABASE_URL'] || undefined),
    host,
    port,
    publicUrl: (flags.publicUrl ?? env['PROVENANT_PUBLIC_URL'] ?? `http://${shownHost}:${port}`).replace(/\/+$/, ''),
    logLevel: env['PROVENANT_LOG_LEVEL'] ?? 'info',
    jwtPrivateKeyPem: env['PROVENANT_JWT_PRIVATE_KEY'] || undefined,
    allowedOrigins: (env['PROVENANT_ALLOWED_ORIGINS'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    demo: flags.demo ?? env['PROVENANT_DEMO'] === '1',
    ledgerSigningKey: env['PROVENANT_LEDGER_SIGNING_KEY'] || undefined,
    ledgerTrustedKeys: (env['PROVENANT_LEDGER_TRUSTED_KEYS'] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
    exportDir: resolve(env['PROVENANT_EXPORT_DIR'] ?? join(dataDir, 'exports')),
    exportBucket: exportBucketOf(env),
    downloadUrlKey: env['PROVENANT_DOWNLOAD_URL_KEY'] || undefined,
    masterKey: env['PROVENANT_MASTER_KEY'] || undefined,
    masterKeyPrevious: env['PROVENANT_MASTER_KEY_PREVIOUS'] || undefined,
    queryCapacity: queryCapacityOf(env),
    columnar: columnarOf(env, dataDir),
  }
}
