/**
 * @module
 * Durable appends through HTTP (design §12: ≥ 5,000 records/s on SQLite with 32 concurrent
 * clients): POST /oi-api/provenance/events with group commit, a checkpoint and heads-log entry per
 * flush, and call recording on (each request also commits its api-call record before replying).
 * Baseline in the same run: a bare Fastify route that commits one row per request into a SQLite
 * file with the same durability (WAL, synchronous=FULL), i.e. one fsync per append.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { scopeContainer } from '../../src/domain/ledger/ledger-service.js'
import { type BenchRow, formatRate, type Scenario } from '../harness.js'
import { load } from '../load.js'
import { postgresReachable, startBenchRuntime } from './ledger-support.js'

const BODY = JSON.stringify({
  ScopeKey: 'line-1',
  entityType: 'reading',
  entityId: 'S-17',
  actionType: 'recorded',
  details: { value: 21.5, unit: 'C', operator: 'shift-b' },
})
const SECONDS = 10

async function bareBaseline(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-bare-'))
  const db = new Database(join(dir, 'bare.db'))
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = FULL')
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO t (body) VALUES (?)')
  const app = Fastify({ logger: false })
  app.post('/append', async (request) => ({ id: Number(insert.run(JSON.stringify(request.body)).lastInsertRowid) }))
  try {
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    await load({ url: `${url}/append`, method: 'POST', body: BODY, headers: { 'content-type': 'application/json' }, seconds: 2 })
    return (
      await load({ url: `${url}/append`, method: 'POST', body: BODY, headers: { 'content-type': 'application/json' }, seconds: SECONDS })
    ).requestsPerSecond
  } finally {
    await app.close()
    db.close()
    rmSync(dir, { recursive: true, force: true })
  }
}

async function measure(
  backend: 'sqlite' | 'postgres',
): Promise<{ perSecond: number; p99: number; batch: number; chainValid: boolean; records: number }> {
  const bench = await startBenchRuntime(backend)
  try {
    const headers = { authorization: `Bearer ${bench.token}`, 'content-type': 'application/json' }
    await load({ url: `${bench.url}/oi-api/provenance/events`, method: 'POST', body: BODY, headers, seconds: 2 })
    const before = bench.runtime.services.ledger.stats()
    const r = await load({ url: `${bench.url}/oi-api/provenance/events`, method: 'POST', body: BODY, headers, seconds: SECONDS })
    if (r.non2xx > 0 || r.errors > 0) throw new Error(`${r.non2xx + r.errors} appends failed`)
    const after = bench.runtime.services.ledger.stats()
    const verdict = await bench.runtime.services.ledger.verify({ container: scopeContainer(bench.workspaceId, 'line-1') })
    const records = verdict.kind === 'verdict' ? verdict.facts.recordsRead : 0
    return {
      perSecond: r.requestsPerSecond,
      p99: r.p99Ms,
      batch: (after.entries - before.entries) / Math.max(1, after.flushes - before.flushes),
      chainValid: verdict.kind === 'verdict' && verdict.verdict.ChainValid,
      records,
    }
  } finally {
    await bench.close()
  }
}

/** The ledger service alone (no HTTP, no auth, no call records): 32 writers appending to one container. */
async function ledgerOnly(): Promise<{ perSecond: number; batch: number }> {
  const bench = await startBenchRuntime('sqlite')
  try {
    const services = bench.runtime.services
    const container = scopeContainer(bench.workspaceId, 'line-1')
    const request = { userId: 'acc_bench', body: JSON.parse(BODY) as Record<string, unknown> }
    const run = async (ms: number) => {
      let n = 0
      const until = performance.now() + ms
      await Promise.all(
        Array.from({ length: 32 }, async () => {
          while (performance.now() < until) {
            await services.ledger.append(container, [request])
            n++
          }
        }),
      )
      return n
    }
    await run(1000)
    const before = services.ledger.stats()
    const n = await run(SECONDS * 1000)
    const after = services.ledger.stats()
    return { perSecond: n / SECONDS, batch: (after.entries - before.entries) / Math.max(1, after.flushes - before.flushes) }
  } finally {
    await bench.close()
  }
}

export const ledgerAppend: Scenario = {
  id: 'ledger-append',
  title: 'Activity log: durable appends through HTTP, 32 concurrent clients',
  async run() {
    const baseline = await bareBaseline()
    const sqlite = await measure('sqlite')
    const rows: BenchRow[] = [
      {
        measure: 'POST /oi-api/provenance/events, one hot scope, 32 clients, SQLite',
        subject: `${formatRate(sqlite.perSecond)} durable appends (p99 ${sqlite.p99} ms; ${sqlite.batch.toFixed(1)} records per commit; chain of ${sqlite.records} verified: ${sqlite.chainValid ? 'valid' : 'INVALID'})`,
        baseline: `${formatRate(baseline)} (bare Fastify, one SQLite commit per request)`,
        ratio: sqlite.perSecond / baseline,
        target: '≥ 5,000/s (design §12)',
        met: sqlite.perSecond >= 5000 && sqlite.chainValid,
      },
    ]
    const core = await ledgerOnly()
    rows.push({
      measure: 'the ledger service alone (no HTTP, no call records), 32 writers, one container, SQLite',
      subject: `${formatRate(core.perSecond)} durable appends (${core.batch.toFixed(1)} per commit)`,
      baseline: `${formatRate(baseline)} (as above)`,
      ratio: core.perSecond / baseline,
      target: 'informational',
      met: undefined,
    })
    if (await postgresReachable()) {
      const postgres = await measure('postgres')
      rows.push({
        measure: 'the same on PostgreSQL (loopback)',
        subject: `${formatRate(postgres.perSecond)} (p99 ${postgres.p99} ms; ${postgres.batch.toFixed(1)} records per commit; chain ${postgres.chainValid ? 'valid' : 'INVALID'})`,
        baseline: '–',
        target: 'informational',
        met: undefined,
      })
    }
    return {
      rows,
      notes: [
        "Subject: the full pipeline per request: bearer check with the revocation read, validation, lossless body parse, canonical JSON and digest, group commit (one transaction per flush for every pending append of every container), a signed checkpoint (Ed25519 + timestamped cosignature) and a heads-log entry per container per flush, and the request's own api-call record, submitted with the append so both share one commit, before the reply. Each HTTP append is therefore two records.",
        '"Records per commit" counts every record of a flush (appends and api-call records). The chain is verified whole after the run.',
        "autocannon runs in a worker thread of the same process, so client and server share the machine's cores.",
        'What bounds the HTTP figure is CPU on the event loop, shared with autocannon on a 2-core machine: per request the bearer check and revocation read, body parsing and validation, canonical JSON and hashing, the api-call record, and per flush the SQLite statements and a signed checkpoint (Ed25519). Off the loop: the WAL fsync (src/adapters/sqlite/wal-sync.ts) and, since 2026-11-27, the WAL checkpoints with their two fsyncs (src/adapters/sqlite/wal-checkpointer.ts; before, the COMMIT that crossed 1,000 pages ran them on the loop: 4.1-4.4k/s, p99 13-16 ms, against 5.2-5.6k/s, p99 9-10 ms after, same machine, quiet). The ledger alone, without HTTP, commits about two to three times as many appends in the same run.',
      ],
    }
  },
}
