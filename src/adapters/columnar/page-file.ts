/**
 * @module
 * A page of row-store rows as CSV text, appended to a staging file (row-export.ts): through a
 * SqlDb (PostgreSQL, in the server or the compactor's worker thread). Kept apart from
 * row-export.ts so the worker thread loads no more than it runs.
 */
import { appendFileSync } from 'node:fs'
import type { SqlDb } from '../sql/sql-db.js'
import type { PageSummary } from './columnar-worker-client.js'

/** One page: how many rows, their lowest and highest `_rowid`, the lowest `_ingested_at`, and the CSV text (no trailing newline). */
export type ExportedPage = readonly [
  count: number,
  first: number | null,
  last: number | null,
  oldest: number | null,
  csv: string | Uint8Array | null,
]

/** Appends a page's text and a newline; returns the bytes appended. */
export function appendPage(file: string, csv: string | Uint8Array | null): number {
  if (csv === null || csv.length === 0) return 0
  const bytes = typeof csv === 'string' ? Buffer.from(csv) : csv
  appendFileSync(file, bytes)
  appendFileSync(file, '\n')
  return bytes.length + 1
}

/** Runs a page statement through `db` (the engine's setup first) and appends its text to `file`. */
export async function readPageThrough(db: SqlDb, sql: string, params: readonly unknown[], file: string): Promise<PageSummary> {
  const run = async (handle: SqlDb) => (await handle.all<ExportedPage>(sql, params, { arrays: true }))[0]!
  const setup = db.engine.csvPage.setup
  const page =
    setup === undefined
      ? await run(db)
      : await db.transaction(async (tx) => {
          await tx.run(setup)
          return run(tx)
        })
  const number = (v: unknown): number | null => (v === null ? null : Number(v))
  return [Number(page[0]), number(page[1]), number(page[2]), number(page[3]), appendPage(file, page[4])]
}
