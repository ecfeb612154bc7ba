/**
 * @module
 * Main-thread CPU per row of push ingest's parse + validate, on the bench's rows (readingRow,
 * batches of 5,000 as ingest-compaction sends them): the reference path (strict parse, NUL walk,
 * typeRows) against the one-pass reader (readTypedRows). CPU time (process.cpuUsage, so the GC's
 * helper threads count too), not wall time: run it by hand, `node --import tsx
 * bench/ingest-parse.bench.ts`. Not a test.
 */
import { readTypedRows, typeRows } from '../src/domain/ingest/index.js'
import type { ColumnConfig } from '../src/domain/workspace-config/index.js'
import { parseJsonBody } from '../src/http/wire/json-body.js'
import { BENCH_CONFIG, readingRow } from './scenarios/kql-dataset.js'

const BATCH = 5000
const BODIES = 20
const columns = BENCH_CONFIG.connections[0]!.columns as unknown as ColumnConfig[]
const bodies = Array.from({ length: BODIES }, (_, b) =>
  Buffer.from(JSON.stringify(Array.from({ length: BATCH }, (_, k) => readingRow(b * BATCH + k)))),
)

function reference(bytes: Buffer): number {
  const rows = parseJsonBody(bytes, { exactIntegers: true }) as unknown[]
  const typed = typeRows(columns, rows)
  if (typed.problems.length > 0) throw new Error(typed.problems[0]!.message)
  return typed.rows.length
}

function onePass(bytes: Buffer): number {
  const rows = readTypedRows(bytes, 'array', columns)
  if (rows === undefined) throw new Error('the one-pass reader gave up on a bench body')
  return rows.length
}

/** CPU µs per row over `rounds` passes through every body, after a warm-up. */
function measure(read: (bytes: Buffer) => number, rounds: number): number {
  for (let r = 0; r < 3; r++) for (const body of bodies) read(body)
  const before = process.cpuUsage()
  let rows = 0
  for (let r = 0; r < rounds; r++) for (const body of bodies) rows += read(body)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / rows
}

const rounds = Number(process.env.ROUNDS ?? 10)
for (let trial = 0; trial < 3; trial++) {
  const ref = measure(reference, rounds)
  const fast = measure(onePass, rounds)
  console.log(`reference ${ref.toFixed(3)} µs/row CPU   one-pass ${fast.toFixed(3)} µs/row CPU   ${(ref / fast).toFixed(2)}×`)
}
