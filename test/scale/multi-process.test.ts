/**
 * Several API processes on one PostgreSQL database (issue 10, item 1; design §2): three real
 * `provenant serve` processes sharing the database, the data directory (keys, export files) and so
 * the signing keys, used all at once. Appends to the same containers through all of them make one
 * valid, gap-free chain each; committed changes reach SSE clients of every process exactly once; a
 * token revoked through one process is refused at once by the others and its open streams close;
 * rows ingested through one process reach WebSocket live-stream clients of every process;
 * an export created through one is downloaded through another.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { PortalClient } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { type ChangeListener, listenChanges } from '../support/change-listener.js'
import { type ChildServer, call, type Deployment, ONE_QUERY_WORKER, seedDeployment, startChildServer } from '../support/child-server.js'
import { sensorConfig } from '../support/fixtures.js'
import { claimsOf } from '../support/forge.js'
import { connectLive, type LiveClient } from '../support/live-client.js'

const PROCESSES = 3

async function until(check: () => boolean, what: () => string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

describe('postgres: three provenant serve processes on one database', {
  skip: !BACKENDS.includes('postgres') && 'PostgreSQL not reachable',
}, () => {
  let deployment: Deployment
  let servers: ChildServer[] = []
  const listeners: ChangeListener[] = []

  before(async () => {
    deployment = await seedDeployment('postgres', sensorConfig({ settings: { amendments: { approvalRequired: false } } }))
    servers = await Promise.all(Array.from({ length: PROCESSES }, () => startChildServer(deployment, { env: ONE_QUERY_WORKER })))
  })
  after(async () => {
    for (const l of listeners) l.close()
    const exits = await Promise.all(servers.map((s) => s.kill('SIGTERM')))
    await deployment.cleanup()
    for (const [i, exit] of exits.entries()) assert.deepEqual(exit, { code: 0, signal: null }, servers[i]!.output())
  })

  it('appends to the same containers through every process at once: one valid, gap-free chain each, no fork', async () => {
    const token = deployment.tokens.editor
    const scopes = ['shared-1', 'shared-2', 'shared-3']
    const perProcess = 45
    const acked: { scope: string; entityId: string; RecordID: string }[] = []
    await Promise.all(
      servers.map(async (server, p) => {
        // 5 concurrent clients per process, each cycling through the shared containers.
        await Promise.all(
          Array.from({ length: 5 }, async (_, c) => {
            for (let i = c; i < perProcess; i += 5) {
              const scope = scopes[i % scopes.length]!
              const entityId = `p${p}-${i}`
              const r = await call(server.url, 'POST', '/oi-api/provenance/events', token, {
                ScopeKey: scope,
                entityType: 'reading',
                entityId,
                actionType: 'append',
                details: { p, i },
              })
              assert.equal(r.status, 200, r.text)
              acked.push({ scope, entityId, RecordID: r.body.RecordID })
            }
          }),
        )
      }),
    )
    for (const scope of scopes) {
      const mine = acked.filter((a) => a.scope === scope)
      const records = await call(servers[0]!.url, 'GET', `/oi-api/provenance/events/query?scopeKey=${scope}&order=asc&limit=1000`, token)
      assert.equal(records.status, 200, records.text)
      const results = records.body.results as { RecordID: string; entityId: string; previousDigest: string; digest: string }[]
      assert.equal(results.length, mine.length, `${scope}: every append stored once`)
      results.forEach((r, i) => {
        assert.equal(r.RecordID, String(i + 1).padStart(12, '0'), `${scope}: gap-free`)
        if (i > 0) assert.equal(r.previousDigest, results[i - 1]!.digest, `${scope}: linked, no fork`)
      })
      const byId = new Map(results.map((r) => [r.RecordID, r.entityId]))
      for (const a of mine)
        assert.equal(byId.get(a.RecordID), a.entityId, `${scope}: ${a.entityId} under the RecordID it was answered with`)
      for (const server of servers) {
        const verdict = await call(server.url, 'POST', '/oi-api/provenance/events/verify', token, { ScopeKey: scope })
        assert.equal(verdict.status, 200, verdict.text)
        assert.equal(verdict.body.ChainValid, true, verdict.text)
        assert.equal(verdict.body.ForkDetected, false, verdict.text)
      }
    }
    const platform = await call(servers[2]!.url, 'POST', '/oi-api/provenance/events/verify', token, {})
    assert.equal(platform.body.ChainValid, true, platform.text)
  })

  it('delivers every committed change exactly once, in order, to SSE clients of every process', async () => {
    for (const server of servers) listeners.push(listenChanges(server.url, deployment.tokens.viewer))
    for (const l of listeners) await l.waitForOpens(1)
    const created: string[] = []
    // Corrections committed through every process at once.
    await Promise.all(
      servers.map(async (server, p) => {
        for (let i = 0; i < 6; i++) {
          const r = await call(server.url, 'POST', '/oi-api/provenance/amendments', deployment.tokens.editor, {
            ScopeKey: 'lab',
            entityType: 'lab-result',
            entityId: `LR-${p}-${i}`,
            reasonCategory: 'data-entry-error',
            reason: 'typo',
            before: { v: i },
            after: { v: i + 1 },
          })
          assert.equal(r.status, 200, r.text)
          created.push(r.body.id)
        }
      }),
    )
    // A last change after them: once it has arrived, everything before it has (the feed is ordered).
    const sentinel = await call(servers[1]!.url, 'POST', '/oi-api/provenance/amendments', deployment.tokens.editor, {
      ScopeKey: 'lab',
      entityType: 'lab-result',
      entityId: 'LR-last',
      reasonCategory: 'data-entry-error',
      reason: 'typo',
      before: { v: 0 },
      after: { v: 1 },
    })
    assert.equal(sentinel.status, 200, sentinel.text)
    for (const [i, l] of listeners.entries()) {
      await until(
        () => l.events.some((e) => e.data.entityId === sentinel.body.id),
        () => `the sentinel change on process ${i}`,
      )
      const ids = l.events.map((e) => Number(e.lastEventId))
      ids.forEach((id, k) => {
        if (k > 0) assert.equal(id, ids[k - 1]! + 1, `process ${i}: change ids in order, no gap, no duplicate`)
      })
      const corrections = l.events.filter((e) => e.data.kind === 'correction').map((e) => e.data.entityId as string)
      assert.deepEqual([...corrections].sort(), [...created, sentinel.body.id].sort(), `process ${i}: each correction exactly once`)
      assert.deepEqual(l.errorCodes, [], `process ${i}: no stream errors`)
    }
    // Every process delivered the same sequence.
    const sequences = listeners.map((l) => l.events.map((e) => e.lastEventId).join(','))
    assert.equal(new Set(sequences).size, 1)
  })

  it('delivers rows ingested through one process to live-stream clients of every process, exactly once, in order', async () => {
    const clients: LiveClient[] = await Promise.all(servers.map((server) => connectLive(server.url, { token: deployment.tokens.viewer })))
    try {
      const batch = (from: number, count: number) =>
        Array.from({ length: count }, (_, i) => ({
          timestamp: new Date(Date.UTC(2026, 2, 1, 0, 0, from + i)).toISOString(),
          sensor: `live-${(from + i) % 4}`,
          value: from + i,
        }))
      // Through two of the processes at once.
      const answers = await Promise.all([
        call(servers[0]!.url, 'POST', '/oi-api/ingest/data-connections/sensors', deployment.tokens.editor, batch(0, 40)),
        call(servers[1]!.url, 'POST', '/oi-api/ingest/data-connections/sensors', deployment.tokens.editor, batch(40, 25)),
      ])
      for (const a of answers) assert.equal(a.status, 200, a.text)
      const expected = answers
        .flatMap((a) => Array.from({ length: a.body.rowCount as number }, (_, i) => (a.body.firstRowId as number) + i))
        .sort((x, y) => x - y)
      for (const [i, client] of clients.entries()) {
        await client.waitForId(expected.at(-1)!, 15_000)
        assert.deepEqual(
          client.events.map((e) => e.id),
          expected,
          `process ${i}: every row once, in row-id order`,
        )
        const first = client.events.find((e) => e.id === answers[0]!.body.firstRowId)!
        assert.equal(first.connection, 'sensors')
        assert.deepEqual(first.data, { timestamp: '2026-03-01T00:00:00Z', sensor: 'live-0', value: 0 })
      }
    } finally {
      for (const c of clients) c.close()
    }
  })

  it('refuses a token revoked through one process at once on the others, and closes its streams there', async () => {
    const token = deployment.tokens.analyst
    for (const server of servers) assert.equal((await call(server.url, 'GET', '/oi-api/provenance/reason-categories', token)).status, 200)
    const streams = servers.slice(1).map((server) => listenChanges(server.url, token))
    listeners.push(...streams)
    for (const s of streams) await s.waitForOpens(1)
    const live = await Promise.all(servers.slice(1).map((server) => connectLive(server.url, { token })))

    const admin = new PortalClient(servers[0]!.url)
    assert.equal((await admin.signIn('admin@acme', 'admin-password-123')).status, 303)
    await admin.get('/portal/api-keys')
    const revoked = await admin.post(`/portal/api-keys/${claimsOf(token).jti}/revoke`, {})
    assert.equal(revoked.status, 303, revoked.text)

    for (const server of servers.slice(1)) {
      const refused = await call(server.url, 'GET', '/oi-api/provenance/reason-categories', token)
      assert.equal(refused.status, 401, refused.text)
      assert.match(refused.body.Messages.Error, /revoked/)
    }
    // The open streams end; reconnecting is refused with a 401 and the client gives up.
    for (const s of streams) {
      await s.waitForClosed(15_000)
      assert.ok(s.errorCodes.includes(401), `reconnection refused: ${s.errorCodes.join(',')}`)
    }
    for (const l of live) assert.deepEqual(await l.closed, { code: 1008, reason: 'token revoked' })
  })

  it('downloads an export created through one process through another', async () => {
    const token = deployment.tokens.editor
    const rows = Array.from({ length: 30 }, (_, i) => ({
      timestamp: new Date(Date.UTC(2026, 1, 1, 0, i)).toISOString(),
      sensor: `x${i % 3}`,
      value: i,
    }))
    const ingested = await call(servers[1]!.url, 'POST', '/oi-api/ingest/data-connections/sensors', token, rows)
    assert.equal(ingested.status, 200, ingested.text)
    const created = await call(servers[0]!.url, 'POST', '/oi-api/downloads/data-connections/sensors', token, {
      format: 'csv',
      from: '2026-02-01T00:00:00Z',
      to: '2026-02-02T00:00:00Z',
    })
    assert.equal(created.status, 200, created.text)
    assert.equal(created.body.rowCount, 30)
    const issued = new URL(created.body.downloadUrl)
    assert.equal(issued.origin, servers[0]!.url)
    const file = await fetch(`${servers[2]!.url}${issued.pathname}${issued.search}`)
    assert.equal(file.status, 200)
    const lines = (await file.text()).trim().split('\r\n')
    assert.equal(lines[0], 'timestamp,sensor,value')
    assert.equal(lines.length, 31)
    assert.equal(lines[1], '2026-02-01T00:00:00Z,x0,0')
    // A tampered signature is refused there too.
    const tampered = new URL(`${servers[2]!.url}${issued.pathname}${issued.search}`)
    const signature = tampered.searchParams.get('signature')!
    tampered.searchParams.set('signature', `${signature[0] === 'A' ? 'B' : 'A'}${signature.slice(1)}`)
    const forged = await fetch(tampered)
    assert.equal(forged.status >= 400 && forged.status < 500, true)
  })
})
