/**
 * Crash safety (issue 10, item 2; design §2, §8): a real `provenant serve` process under a mixed
 * write load (activity-log appends, ingest batches, corrections) is killed with SIGKILL at a random
 * moment, several rounds per backend, and restarted on the same data directory / database. After
 * each restart: the server starts cleanly, every write the client saw acknowledged (2xx) is there
 * as answered, nothing unacknowledged is half there (an ingest batch is whole and has its
 * `rows-ingested` decision record, and each decision record its rows; each correction has its
 * record in the scope's chain, and each correction record its correction), and every chain verifies.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { BACKENDS } from '../support/backends.js'
import { type ChildServer, call, type Deployment, ONE_QUERY_WORKER, seedDeployment, startChildServer } from '../support/child-server.js'
import { sensorConfig } from '../support/fixtures.js'
import type { JsonBody } from '../support/json-body.js'

const ROUNDS = 3
const WORKERS = 6
const BATCH = 20
const APPEND_SCOPES = ['crash-a', 'crash-b']
const FIX_SCOPE = 'crash-fix'

/** A small deterministic PRNG (mulberry32), so a failing run can be repeated with its seed. */
function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

interface Acknowledged {
  appends: { scope: string; entityId: string; RecordID: string }[]
  batches: { tag: string; firstRowId: number; lastRowId: number }[]
  corrections: { id: string; entityId: string }[]
}

/** Every record of a container, oldest first. */
async function allRecords(url: string, token: string, scope: string | null, filter = ''): Promise<JsonBody[]> {
  const out: JsonBody[] = []
  for (let offset = 0; ; offset += 1000) {
    const page = await call(
      url,
      'GET',
      `/oi-api/provenance/events/query?order=asc&limit=1000&offset=${offset}${scope ? `&scopeKey=${scope}` : ''}${filter}`,
      token,
    )
    assert.equal(page.status, 200, page.text)
    out.push(...page.body.results)
    if (page.body.results.length < 1000) return out
  }
}

async function allCorrections(url: string, token: string): Promise<JsonBody[]> {
  const out: JsonBody[] = []
  for (let offset = 0; ; offset += 1000) {
    const page = await call(url, 'GET', `/oi-api/provenance/amendments?scopeKey=${FIX_SCOPE}&limit=1000&offset=${offset}`, token)
    assert.equal(page.status, 200, page.text)
    out.push(...page.body.results)
    if (page.body.results.length < 1000) return out
  }
}

/** Runs the mixed write load until the server stops answering; records what was acknowledged. */
async function load(url: string, token: string, round: number, acked: Acknowledged, random: () => number): Promise<number> {
  let sent = 0
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; ; i++) {
      const id = `r${round}-w${w}-${i}`
      const pick = random()
      sent++
      try {
        if (pick < 0.5) {
          const scope = APPEND_SCOPES[i % APPEND_SCOPES.length]!
          const r = await call(url, 'POST', '/oi-api/provenance/events', token, {
            ScopeKey: scope,
            entityType: 'batch',
            entityId: id,
            actionType: 'created',
            details: { round, w, i },
          })
          if (r.status >= 200 && r.status < 300) acked.appends.push({ scope, entityId: id, RecordID: r.body.RecordID })
          else assert.equal(r.status, 503, r.text)
        } else if (pick < 0.8) {
          const rows = Array.from({ length: BATCH }, (_, k) => ({
            timestamp: new Date(Date.UTC(2026, 0, 1) + k * 1000).toISOString(),
            sensor: id,
            value: k,
          }))
          const r = await call(url, 'POST', '/oi-api/ingest/data-connections/sensors', token, rows)
          if (r.status >= 200 && r.status < 300) acked.batches.push({ tag: id, firstRowId: r.body.firstRowId, lastRowId: r.body.lastRowId })
          else assert.equal(r.status, 503, r.text)
        } else {
          const r = await call(url, 'POST', '/oi-api/provenance/amendments', token, {
            ScopeKey: FIX_SCOPE,
            entityType: 'lab-result',
            entityId: id,
            reasonCategory: 'data-entry-error',
            reason: `fix ${id}`,
            before: { v: i },
            after: { v: i + 1 },
          })
          if (r.status >= 200 && r.status < 300) acked.corrections.push({ id: r.body.id, entityId: id })
          else assert.equal(r.status, 503, r.text)
        }
      } catch (error) {
        if (error instanceof assert.AssertionError) throw error
        return // the process is gone: the request is unacknowledged
      }
    }
  }
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)))
  return sent
}

async function verifyAll(server: ChildServer, token: string, acked: Acknowledged): Promise<void> {
  const { url } = server
  // Every acknowledged append is stored under the RecordID it was answered with.
  for (const scope of APPEND_SCOPES) {
    const records = await allRecords(url, token, scope)
    records.forEach((r, i) => {
      assert.equal(r.RecordID, String(i + 1).padStart(12, '0'), `gap-free RecordIDs in ${scope}`)
    })
    const byId = new Map(records.map((r) => [r.RecordID, r]))
    for (const a of acked.appends.filter((x) => x.scope === scope)) {
      assert.equal(byId.get(a.RecordID)?.entityId, a.entityId, `acknowledged append ${a.entityId} (${a.RecordID}) in ${scope}`)
    }
  }

  // Ingest: every batch there is whole and has its decision record; every decision record its rows.
  const counted = await call(url, 'POST', '/oi-api/warm-queries', token, {
    Query: 'Sensors | summarize n = count(), lo = min(_rowid), hi = max(_rowid) by sensor',
  })
  assert.equal(counted.status, 200, counted.text)
  const batches = new Map<string, { n: number; lo: number; hi: number }>(
    counted.body.results.map((r: { sensor: string; n: number; lo: number; hi: number }) => [r.sensor, r]),
  )
  for (const [tag, b] of batches) {
    assert.equal(b.n, BATCH, `batch ${tag} is whole`)
    assert.equal(b.hi - b.lo + 1, BATCH, `batch ${tag} has consecutive row ids`)
  }
  for (const a of acked.batches)
    assert.deepEqual(
      batches.get(a.tag) && { lo: batches.get(a.tag)!.lo, hi: batches.get(a.tag)!.hi },
      { lo: a.firstRowId, hi: a.lastRowId },
      `acknowledged batch ${a.tag}`,
    )
  const decisions = await allRecords(url, token, null, '&entityType=data-connection&actionType=rows-ingested')
  const decided = new Set(decisions.map((d) => `${d.details.firstRowId}-${d.details.lastRowId}`))
  assert.equal(decided.size, decisions.length, 'one decision record per batch')
  for (const [tag, b] of batches) assert.ok(decided.has(`${b.lo}-${b.hi}`), `batch ${tag} has its rows-ingested record`)
  const stored = new Set([...batches.values()].map((b) => `${b.lo}-${b.hi}`))
  for (const d of decided) assert.ok(stored.has(d), `rows-ingested record ${d} has its rows`)

  // Corrections: each acknowledged one is there; each one there has its record, and each record its correction.
  const corrections = await allCorrections(url, token)
  const correctionIds = new Set(corrections.map((c) => c.id))
  for (const a of acked.corrections) assert.ok(correctionIds.has(a.id), `acknowledged correction ${a.id}`)
  const fixRecords = await allRecords(url, token, FIX_SCOPE)
  const recorded = new Set(fixRecords.map((r) => r.details?.correctionId).filter(Boolean))
  for (const id of correctionIds) assert.ok(recorded.has(id), `correction ${id} has its record in the chain`)
  for (const id of recorded) assert.ok(correctionIds.has(id), `correction record ${id} has its correction`)

  // Every chain verifies.
  for (const scope of [...APPEND_SCOPES, FIX_SCOPE, null]) {
    const verdict = await call(url, 'POST', '/oi-api/provenance/events/verify', token, { ScopeKey: scope })
    assert.equal(verdict.status, 200, verdict.text)
    assert.equal(verdict.body.ChainValid, true, `${scope ?? 'Platform-Config'}: ${verdict.text}`)
    assert.equal(verdict.body.ForkDetected, false)
  }
}

for (const backend of BACKENDS) {
  describe(`${backend}: SIGKILL under write load, restart, nothing acknowledged lost, nothing half-written`, () => {
    let deployment: Deployment
    before(async () => {
      deployment = await seedDeployment(backend, sensorConfig({ settings: { amendments: { approvalRequired: false } } }))
    })
    after(() => deployment.cleanup())

    it(`survives ${ROUNDS} kills at random moments`, async () => {
      const seed = Number(process.env['CRASH_SEED'] ?? Date.now() % 1_000_000)
      const random = prng(seed)
      const token = deployment.tokens.approver
      const acked: Acknowledged = { appends: [], batches: [], corrections: [] }
      let server = await startChildServer(deployment, { env: ONE_QUERY_WORKER })
      let sent = 0
      for (let round = 1; round <= ROUNDS; round++) {
        const total = () => acked.appends.length + acked.batches.length + acked.corrections.length
        const before = total()
        const running = load(server.url, token, round, acked, random)
        // Kill at a random moment once the load is under way (however slow the machine is).
        const deadline = Date.now() + 30_000
        while (total() < before + 5 && Date.now() < deadline) await sleep(10)
        await sleep(Math.floor(random() * 1500))
        const killed = await server.kill('SIGKILL')
        assert.equal(killed.signal, 'SIGKILL', `round ${round} (seed ${seed})`)
        sent += await running

        // The server starts cleanly on the same data and finds everything in order.
        server = await startChildServer(deployment, { env: ONE_QUERY_WORKER })
        await verifyAll(server, token, acked).catch((error: unknown) => {
          throw new Error(`round ${round} (CRASH_SEED=${seed}): ${(error as Error).message}`, { cause: error })
        })
        assert.doesNotMatch(server.output(), /"level":(50|60)/, `no error logged on restart: ${server.output()}`)
      }
      await server.kill('SIGTERM')
      console.log(
        `# ${backend}: seed ${seed}, ${sent} writes sent, acknowledged: ${acked.appends.length} appends, ${acked.batches.length} ingest batches, ${acked.corrections.length} corrections`,
      )
      assert.ok(
        acked.appends.length > 0 && acked.batches.length > 0 && acked.corrections.length > 0,
        `load reached every write kind (seed ${seed}, ${sent} sent)`,
      )
    })
  })
}
