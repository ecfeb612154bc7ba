/**
 * @module
 * Shared set-up of the activity-log benchmark scenarios: a real runtime (the same composition as
 * `provenant serve`) on a fresh data directory, SQLite or PostgreSQL, with a workspace, an editor
 * and a token.
 */

import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import pino from 'pino'
import { loadConfig } from '../../src/config/config.js'
import { createRuntime, type Runtime } from '../../src/main.js'

export const PG_URL = process.env['BENCH_DATABASE_URL'] ?? process.env['TEST_DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/test'

export interface BenchRuntime {
  readonly runtime: Runtime
  readonly url: string
  readonly token: string
  readonly workspaceId: string
  close(): Promise<void>
}

export async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

export async function startBenchRuntime(backend: 'sqlite' | 'postgres', role: 'editor' | 'analyst' = 'editor'): Promise<BenchRuntime> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-'))
  let databaseUrl: string | undefined
  let dbName: string | undefined
  if (backend === 'postgres') {
    dbName = `provenant_bench_${randomBytes(5).toString('hex')}`
    const admin = new pg.Client({ connectionString: PG_URL })
    await admin.connect()
    await admin.query(`CREATE DATABASE ${dbName}`)
    await admin.end()
    const u = new URL(PG_URL)
    u.pathname = `/${dbName}`
    databaseUrl = u.toString()
  }
  const runtime = await createRuntime(loadConfig({ data: dir, port: 0, ...(databaseUrl ? { databaseUrl } : {}) }, {}), {
    scryptCost: { log2N: 10, r: 8, p: 1 },
    logger: pino({ level: 'silent' }),
  })
  const workspace = await runtime.services.admin.createWorkspace('bench')
  const account = await runtime.services.admin.addAccount({ name: 'bench', role, workspaceId: workspace.id })
  const { token } = await runtime.services.access.createToken({
    workspaceId: workspace.id,
    accountId: account.id,
    name: 'bench',
    expires: '1h',
    createdBy: { id: account.id, name: account.name },
  })
  const url = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
  return {
    runtime,
    url,
    token,
    workspaceId: workspace.id,
    async close() {
      await runtime.close()
      rmSync(dir, { recursive: true, force: true })
      if (dbName) {
        const admin = new pg.Client({ connectionString: PG_URL })
        await admin.connect()
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
        await admin.end()
      }
    },
  }
}
