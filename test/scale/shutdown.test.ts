/**
 * Graceful shutdown of `provenant serve` (issue 10, item 2): on SIGTERM a real server process stops
 * accepting, answers every request already in flight (here: bodies still being uploaded when the
 * signal arrives), ends its SSE and WebSocket live streams with a reason, flushes the activity
 * log's group commit, closes its stores and exits 0 (the process exits 1 when it overruns its bound); a restart on the
 * same data finds every answered write and valid chains.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import { BACKENDS } from '../support/backends.js'
import { call, type Deployment, ONE_QUERY_WORKER, seedDeployment, startChildServer } from '../support/child-server.js'
import { sensorConfig } from '../support/fixtures.js'
import { connectLive } from '../support/live-client.js'

/**
 * Sends the headers (with `Expect: 100-continue`: the server's `100 Continue` proves it has the
 * request) and the first half of the body; the rest only when `finish()` is called.
 */
function slowRequest(url: string, path: string, token: string, body: string, contentType = 'application/json') {
  const cut = Math.floor(body.length / 2)
  let resolveResponse!: (value: { status: number; text: string }) => void
  let rejectResponse!: (error: Error) => void
  const response = new Promise<{ status: number; text: string }>((resolve, reject) => {
    resolveResponse = resolve
    rejectResponse = reject
  })
  const req = request(
    `${url}${path}`,
    {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': contentType,
        'content-length': Buffer.byteLength(body),
        connection: 'close',
        expect: '100-continue',
      },
    },
    (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (d) => {
        text += d
      })
      res.on('end', () => resolveResponse({ status: res.statusCode ?? 0, text }))
      res.on('error', rejectResponse)
    },
  )
  req.on('error', rejectResponse)
  const received = new Promise<void>((resolve, reject) => {
    req.once('continue', () => {
      req.write(body.slice(0, cut))
      resolve()
    })
    req.once('error', reject)
  })
  req.flushHeaders()
  return { received, response, finish: () => req.end(body.slice(cut)) }
}

/** Resolves once the server no longer accepts connections (refused, or a 503 on a kept-alive one). */
async function stoppedAccepting(url: string): Promise<string> {
  for (;;) {
    try {
      const response = await fetch(`${url}/healthz`)
      await response.arrayBuffer()
      if (response.status === 503) return '503'
    } catch {
      return 'refused'
    }
    await sleep(50)
  }
}

/** Opens the change stream and collects its text until the server ends it. */
async function openSse(url: string, token: string): Promise<{ text: () => string; ended: Promise<void> }> {
  const response = await fetch(`${url}/oi-api/eac-changes/stream`, { headers: { authorization: `Bearer ${token}` } })
  assert.equal(response.status, 200)
  let text = ''
  const reader = response.body!.getReader()
  const decoder = new TextDecoder()
  const ended = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read()
        if (done) return
        text += decoder.decode(value, { stream: true })
      }
    } catch {
      // a reset ends the stream as well; the text says whether a reason came first
    }
  })()
  while (!text.includes('connected')) await sleep(20)
  return { text: () => text, ended }
}

for (const backend of BACKENDS) {
  describe(`${backend}: graceful shutdown of provenant serve`, () => {
    let deployment: Deployment
    before(async () => {
      deployment = await seedDeployment(backend, sensorConfig({ settings: { amendments: { approvalRequired: false } } }))
    })
    after(() => deployment.cleanup())

    it('answers the requests in flight at SIGTERM, ends SSE and live streams with a reason, exits 0, and a restart finds every write', async () => {
      const { editor, viewer } = deployment.tokens
      const server = await startChildServer(deployment, { env: { ...ONE_QUERY_WORKER, PROVENANT_SHUTDOWN_GRACE_MS: '8000' } })
      const warm = await call(server.url, 'POST', '/oi-api/provenance/events', editor, {
        ScopeKey: 'line-1',
        entityType: 'batch',
        entityId: 'warm-up',
        actionType: 'created',
      })
      assert.equal(warm.status, 200, warm.text)
      const stream = await openSse(server.url, viewer)
      const live = await connectLive(server.url, { token: viewer })

      const rows = Array.from({ length: 200 }, (_, i) => ({
        timestamp: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(),
        sensor: `s${i % 5}`,
        value: i,
      }))
      const inFlight = [
        slowRequest(
          server.url,
          '/oi-api/provenance/events',
          editor,
          JSON.stringify({
            ScopeKey: 'line-1',
            entityType: 'batch',
            entityId: 'in-flight',
            actionType: 'created',
            details: { pad: 'x'.repeat(2000) },
          }),
        ),
        slowRequest(server.url, '/oi-api/ingest/data-connections/sensors', editor, JSON.stringify(rows)),
        slowRequest(
          server.url,
          '/oi-api/provenance/amendments',
          editor,
          JSON.stringify({
            ScopeKey: 'line-1',
            entityType: 'lab-result',
            entityId: 'LR-1',
            reasonCategory: 'data-entry-error',
            reason: 'typo',
            before: { ph: 7.9 },
            after: { ph: 7.1 },
          }),
        ),
      ]
      // Every request is in the server's hands (its 100 Continue came back) before the signal.
      await Promise.all(inFlight.map((r) => r.received))
      server.child.kill('SIGTERM')
      // New requests are refused while the in-flight ones are still waiting for their bodies.
      assert.match(await stoppedAccepting(server.url), /^(refused|503)$/)
      for (const r of inFlight) r.finish()
      const answers = await Promise.all(inFlight.map((r) => r.response))
      for (const answer of answers) assert.equal(answer.status, 200, answer.text)
      const [appended, ingested, corrected] = answers.map((a) => JSON.parse(a.text))

      await stream.ended
      assert.match(stream.text(), /: the server is shutting down\n\n$/)
      const liveClose = await live.closed
      assert.equal(liveClose.code, 1001, `live stream closed with ${liveClose.code} ${liveClose.reason}`)
      assert.ok(liveClose.reason.length > 0, 'the close names its reason')
      const exit = await server.exited
      assert.deepEqual(exit, { code: 0, signal: null }, server.output())

      const restarted = await startChildServer(deployment, { env: ONE_QUERY_WORKER })
      try {
        const records = await call(restarted.url, 'GET', '/oi-api/provenance/events/query?scopeKey=line-1&order=asc&limit=1000', editor)
        assert.equal(records.status, 200, records.text)
        assert.ok(
          records.body.results.some((r: { RecordID: string }) => r.RecordID === appended.RecordID),
          'the in-flight append is stored',
        )
        const correction = await call(restarted.url, 'GET', `/oi-api/provenance/amendments/${corrected.id}?scopeKey=line-1`, editor)
        assert.equal(correction.status, 200, correction.text)
        assert.equal(correction.body.status, 'applied')
        const count = await call(restarted.url, 'POST', '/oi-api/warm-queries', editor, {
          Query: `Sensors | where _rowid between (${ingested.firstRowId} .. ${ingested.lastRowId}) | count`,
        })
        assert.equal(count.status, 200, count.text)
        assert.deepEqual(count.body.results, [{ Count: 200 }])
        for (const scope of ['line-1', null]) {
          const verdict = await call(restarted.url, 'POST', '/oi-api/provenance/events/verify', editor, { ScopeKey: scope })
          assert.equal(verdict.status, 200, verdict.text)
          assert.equal(verdict.body.ChainValid, true, verdict.text)
        }
      } finally {
        await restarted.kill('SIGTERM')
      }
    })

    it('cuts off a request that does not finish within the bound, and still flushes, closes and exits 0', async () => {
      const server = await startChildServer(deployment, { env: { ...ONE_QUERY_WORKER, PROVENANT_SHUTDOWN_GRACE_MS: '1500' } })
      const stuck = slowRequest(
        server.url,
        '/oi-api/provenance/events',
        deployment.tokens.editor,
        JSON.stringify({ ScopeKey: 'line-2', entityType: 'batch', entityId: 'never-finished', actionType: 'created' }),
      )
      const appended = await call(server.url, 'POST', '/oi-api/provenance/events', deployment.tokens.editor, {
        ScopeKey: 'line-2',
        entityType: 'batch',
        entityId: 'answered',
        actionType: 'created',
      })
      assert.equal(appended.status, 200, appended.text)
      await stuck.received
      server.child.kill('SIGTERM')
      await assert.rejects(stuck.response)
      assert.deepEqual(await server.exited, { code: 0, signal: null }, server.output())
      assert.match(server.output(), /cut off/)
    })
  })
}
