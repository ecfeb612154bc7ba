/**
 * @module
 * The backend matrix (style notes §6.7): every storage-touching suite runs once per backend.
 * PostgreSQL runs whenever a server is reachable, and always in CI: with CI=true an unreachable
 * PostgreSQL is a failure, never a skip. PROVENANT_TEST_BACKENDS=sqlite narrows the matrix locally.
 */
import { randomBytes } from 'node:crypto'
import { after, test } from 'node:test'
import pg from 'pg'

export const ALL_BACKENDS = ['sqlite', 'postgres'] as const
export type Backend = (typeof ALL_BACKENDS)[number]
/** Expectations typed per backend: adding a backend breaks every test without one. */
export type PerBackend<T> = Record<Backend, T>

export const PG_ADMIN_URL = process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'

async function postgresReachable(): Promise<boolean> {
  // generous: on a loaded machine the first connection can take seconds, and a burst of other
  // suites can briefly hold every connection slot; a refused connection (no server) fails at once
  for (let attempt = 1; ; attempt++) {
    const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 15_000 })
    try {
      await client.connect()
      await client.query('SELECT 1')
      return true
    } catch (error) {
      if ((error as { code?: string }).code === 'ECONNREFUSED' || attempt === 3) return false
      await new Promise((resolve) => setTimeout(resolve, 2_000))
    } finally {
      await client.end().catch(() => {})
    }
  }
}

/**
 * The PostgreSQL half of a suite that cannot run is reported as a skipped test with its reason,
 * so the summary counts it (once per file) instead of the suite looking complete. Only inside
 * node's test runner: a bench importing this module must not start a test of its own.
 */
function skipPostgresVariants(reason: string): void {
  if (process.env['NODE_TEST_CONTEXT'] === undefined) {
    console.warn(`# ${reason}: running the SQLite variants only`)
    return
  }
  test(`PostgreSQL variants of ${process.argv[1] ?? 'this file'}`, { skip: reason }, () => {})
}

async function selectBackends(): Promise<Backend[]> {
  const wanted = (process.env['PROVENANT_TEST_BACKENDS'] ?? 'sqlite,postgres').split(',').map((s) => s.trim())
  const out: Backend[] = []
  if (wanted.includes('sqlite')) out.push('sqlite')
  if (wanted.includes('postgres')) {
    if (await postgresReachable()) out.push('postgres')
    else if (process.env['CI'] === 'true') throw new Error(`CI=true but PostgreSQL is not reachable at ${PG_ADMIN_URL}`)
    else skipPostgresVariants(`PostgreSQL not reachable at ${PG_ADMIN_URL} (set TEST_DATABASE_URL, or CI=true to make it a failure)`)
  }
  return out
}

export const BACKENDS: readonly Backend[] = await selectBackends()

export interface TestDatabase {
  readonly url: string
  drop(): Promise<void>
}

/** A fresh, uniquely named PostgreSQL database (isolates tests, including LISTEN/NOTIFY channels). */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `provenant_t_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL })
  await admin.connect()
  try {
    await admin.query(`CREATE DATABASE ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(PG_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_ADMIN_URL })
      await client.connect()
      try {
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      } finally {
        await client.end()
      }
    },
  }
}

/**
 * Inside node's test runner, databases given to `dropWhenDone` are dropped while the file's next
 * tests run, and the file's last hook waits for every drop (and fails if one did): DROP DATABASE
 * waits on PostgreSQL (other sessions, the disk) for about a second, which each server's stop used
 * to add to its test. Outside the runner (the benchmarks) the drop is awaited at once.
 */
// NODE_TEST_CONTEXT alone is not enough: a test's child processes (a server under another umask, a
// crash child) inherit it, and a hook registered there turns the child into a reporting test file
// that writes the runner's binary protocol onto its stdout.
const IN_TEST_RUNNER = process.env['NODE_TEST_CONTEXT'] !== undefined && /\.test\.[cm]?[jt]s$/.test(process.argv[1] ?? '')
const pendingDrops = new Set<Promise<void>>()
// registered as this module loads, so at the top level of the importing test file
if (IN_TEST_RUNNER)
  after(async () => {
    await Promise.all(pendingDrops)
  })

export async function dropWhenDone(database: TestDatabase): Promise<void> {
  if (!IN_TEST_RUNNER) return database.drop()
  const dropping = database.drop()
  pendingDrops.add(dropping)
  dropping.catch(() => {}) // not lost: the hook above awaits it and reports the failure
}
