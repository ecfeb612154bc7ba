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
import type { Runtime } from '../../src/main.js'
import { createBenchRuntime, issueBenchToken, scratchDatabase } from '../bench-server.js'

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
  const scratch = backend === 'postgres' ? await scratchDatabase(PG_URL, `provenant_bench_${randomBytes(5).toString('hex')}`) : undefined
  const runtime = await createBenchRuntime(dir, pino({ level: 'silent' }), { databaseUrl: scratch?.url })
  const workspace = await runtime.services.admin.createWorkspace('bench')
  const account = await runtime.services.admin.addAccount({ name: 'bench', role, workspaceId: workspace.id })
  const token = await issueBenchToken(runtime.services, workspace.id, account)
  const url = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
  return {
    runtime,
    url,
    token,
    workspaceId: workspace.id,
    async close() {
      await runtime.close()
      rmSync(dir, { recursive: true, force: true })
      await scratch?.drop()
    },
  }
}
