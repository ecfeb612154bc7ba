/**
 * @module
 * Throughput of the ledger core's hot paths (design §12): record digest, the full append-side
 * digest (strict parse + canonical text + digest), batch append, checkpoint signing, and
 * whole-chain verify against the §12 baseline "read every row + SHA-256 it", both in memory and
 * reading from a real SQLite file through better-sqlite3. Not a test; run by hand on a quiet
 * machine: `node --import tsx bench/ledger.bench.ts [records]` (default 200,000).
 */

import { hash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { type AppendEntry, appendBatch, genesisTip } from '../src/domain/ledger/append-batch.js'
import { checkpointOrigin, signCheckpoint } from '../src/domain/ledger/checkpoint.js'
import { canonicalRecordBody, containerIdForScope, createRecordHasher } from '../src/domain/ledger/digest.js'
import type { StoredRecord } from '../src/domain/ledger/ledger-types.js'
import { createCompactRange } from '../src/domain/ledger/merkle.js'
import { createNoteSigner, generateSigningKey, parseVerifierKey } from '../src/domain/ledger/signed-note.js'
import { verifyChainSync } from '../src/domain/ledger/verify-chain.js'
import { parseStrictJson } from '../src/shared/strict-json.js'

const N = Number(process.argv[2] ?? 200_000)
const container = { workspaceId: 'wks_bench', containerId: containerIdForScope('plant-7/line-1') }
const hasher = createRecordHasher(container.workspaceId, container.containerId)
const origin = checkpointOrigin('bench.example', container)
const key = generateSigningKey()
const signer = createNoteSigner('bench.example/activity-log', key)
const trustedKeys = [parseVerifierKey(signer.vkey)]

const bodyText = JSON.stringify({
  ScopeKey: 'plant-7/line-1',
  entityType: 'batch',
  entityId: 'B-2026-000184',
  actionType: 'release',
  details: { operator: 'user:alice', reason: 'QA sign-off complete', temperature: 21.5, readings: [3, 5, 8, 13], ok: true },
})

function rate(label: string, n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 20_000); i++) fn(i)
  const t0 = performance.now()
  for (let i = 0; i < n; i++) fn(i)
  const perSec = (n * 1000) / (performance.now() - t0)
  console.log(`${label.padEnd(58)} ${Math.round(perSec).toLocaleString('en').padStart(12)} /s`)
  return perSec
}

function timed(label: string, n: number, fn: () => void): number {
  const t0 = performance.now()
  fn()
  const perSec = (n * 1000) / (performance.now() - t0)
  console.log(`${label.padEnd(58)} ${Math.round(perSec).toLocaleString('en').padStart(12)} /s`)
  return perSec
}

console.log(`node ${process.version}, ${N.toLocaleString('en')} records\n`)

// --- per-record costs ---------------------------------------------------------------------------
const canonical = canonicalRecordBody(parseStrictJson(bodyText) as Parameters<typeof canonicalRecordBody>[0])
console.log(`canonical body: ${Buffer.byteLength(canonical)} bytes`)
let prev: Uint8Array = hasher.genesis
rate('record digest (stored canonical text)', 300_000, () => {
  prev = hasher.digest('000000000001', prev, '2026-01-01T00:00:01.000Z', 'acc_alice', canonical)
})
rate('full record digest: strict parse + JCS + digest', 200_000, () => {
  const body = parseStrictJson(bodyText) as Parameters<typeof canonicalRecordBody>[0]
  prev = hasher.digest('000000000001', prev, '2026-01-01T00:00:01.000Z', 'acc_alice', canonicalRecordBody(body))
})
rate('JCS + digest (body already parsed at the HTTP edge)', 200_000, () => {
  const body = JSON.parse(bodyText) as Parameters<typeof canonicalRecordBody>[0]
  prev = hasher.digest('000000000001', prev, '2026-01-01T00:00:01.000Z', 'acc_alice', canonicalRecordBody(body))
})
const sampleRange = createCompactRange()
rate('compact range append (amortised node hashes)', 300_000, () => {
  sampleRange.append(prev)
})
rate('checkpoint: root + Ed25519 sign + cosign', 5_000, () => {
  signCheckpoint({ origin, size: sampleRange.size, root: sampleRange.root() }, signer, key, 1_767_225_600)
})

// --- build a chain through the real append path -------------------------------------------------
const parsedBody = JSON.parse(bodyText) as Extract<AppendEntry, { body: unknown }>['body']
const records: StoredRecord[] = []
let tip = genesisTip(hasher)
let range = createCompactRange()
timed('appendBatch, 32 per batch (build the chain)', N, () => {
  const batch: AppendEntry[] = Array.from({ length: 32 }, () => ({ userId: 'acc_alice', body: parsedBody }))
  for (let done = 0; done < N; done += 32) {
    const r = appendBatch(hasher, tip, range, batch.slice(0, Math.min(32, N - done)), Date.parse('2026-01-01T00:00:00Z') + done)
    for (const rec of r.records) records.push(rec)
    tip = r.tip
    range = r.range
  }
})
const checkpoint = signCheckpoint({ origin, size: range.size, root: range.root() }, signer, key, 1_767_225_600)
const head = { seq: tip.seq, digest: tip.digest }

// --- whole-chain verify, in memory ---------------------------------------------------------------
console.log('\nwhole-chain verify, records in memory')
const baseMem = timed('baseline: iterate + SHA-256 of each record preimage', N, () => {
  for (const r of records) hash('sha256', hasher.preimage(r.recordId, r.prevDigest, r.timestamp, r.userId, r.canonical), 'buffer')
})
const verify = (rows: Iterable<StoredRecord>, checkCanonical: boolean): void => {
  const result = verifyChainSync({ container, origin, head, records: rows, trustedKeys, trustedCheckpoint: checkpoint, checkCanonical })
  if (result.kind !== 'verdict' || !result.verdict.ChainValid) throw new Error(`bench chain did not verify: ${JSON.stringify(result)}`)
}
const memFull = timed('verifyChain (digests, links, Merkle, JCS form check)', N, () => verify(records, true))
const memNoJcs = timed('verifyChain without the JCS form check', N, () => verify(records, false))
console.log(`  ratio to baseline: ${(memFull / baseMem).toFixed(2)} (with JCS check), ${(memNoJcs / baseMem).toFixed(2)} (without)`)

// --- whole-chain verify, reading SQLite ----------------------------------------------------------
console.log('\nwhole-chain verify, reading a SQLite file (better-sqlite3, WAL)')
const dir = mkdtempSync(join(tmpdir(), 'ledger-bench-'))
try {
  const db = new Database(join(dir, 'bench.db'))
  db.pragma('journal_mode = WAL')
  db.exec(`CREATE TABLE events (container TEXT NOT NULL, seq INTEGER NOT NULL, record_id TEXT NOT NULL, prev BLOB NOT NULL,
           ts TEXT NOT NULL, actor TEXT NOT NULL, body TEXT NOT NULL, digest BLOB NOT NULL, PRIMARY KEY (container, seq))`)
  const insert = db.prepare('INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
  db.transaction(() => {
    for (const r of records)
      insert.run(container.containerId, r.seq, r.recordId, r.prevDigest, r.timestamp, r.userId, r.canonical, r.digest)
  })()
  const scan = db.prepare('SELECT seq, record_id, prev, ts, actor, body, digest FROM events WHERE container = ? ORDER BY seq').raw(true)
  function* rows(): Generator<StoredRecord> {
    for (const row of scan.iterate(container.containerId) as Iterable<[number, string, Buffer, string, string, string, Buffer]>) {
      yield { seq: row[0], recordId: row[1], prevDigest: row[2], timestamp: row[3], userId: row[4], canonical: row[5], digest: row[6] }
    }
  }
  const baseDb = timed('baseline: read every row + SHA-256 it', N, () => {
    for (const r of rows()) hash('sha256', hasher.preimage(r.recordId, r.prevDigest, r.timestamp, r.userId, r.canonical), 'buffer')
  })
  const dbFull = timed('verifyChain over the same read', N, () => verify(rows(), true))
  const dbNoJcs = timed('verifyChain over the same read, no JCS form check', N, () => verify(rows(), false))
  console.log(
    `  ratio to baseline: ${(dbFull / baseDb).toFixed(2)} (with JCS check; design §12 target >= 0.50), ${(dbNoJcs / baseDb).toFixed(2)} (without)`,
  )
  db.close()
} finally {
  rmSync(dir, { recursive: true, force: true })
}
