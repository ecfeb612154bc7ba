/**
 * The soak in short form (issue 10, item 3): 30 s of mixed load at a quarter of the soak's rates
 * against a real server process (bench/soak.ts). Asserts behaviour only: no 5xx and no failed
 * requests on any route, every correction's change received by the SSE client without a stream
 * error, every ingested row received by each WebSocket live-stream client, and file descriptors and RSS that stay within generous bounds (no timing assertions; the
 * long run and its slopes are in docs/benchmarks.md). PostgreSQL here (the scale-out backend, and
 * the one the 10-minute run uses); SQLite when it is not reachable.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runSoak } from '../../bench/soak.js'
import { BACKENDS } from '../support/backends.js'

const backend = BACKENDS.includes('postgres') ? 'postgres' : 'sqlite'

describe(`${backend}: 30 s soak smoke`, () => {
  it('answers every request without a 5xx, keeps its stream, and does not leak descriptors or memory', async () => {
    const report = await runSoak({
      seconds: 30,
      sampleEveryMs: 2500,
      backend,
      intensity: 0.25,
      log: (line) => console.log(line.replace(/^/gm, '# ')),
    })
    for (const route of report.routes) {
      assert.ok(route.requests > 0, `${route.route} was exercised`)
      assert.equal(route.status5xx, 0, `${route.route}: no 5xx`)
      assert.equal(route.otherNon2xx, 0, `${route.route}: every request accepted`)
      assert.equal(route.errors, 0, `${route.route}: no connection errors or timeouts`)
    }
    assert.equal(report.sse.errors, 0, 'no SSE stream errors')
    assert.equal(report.sse.opens, 1, 'the SSE stream was never dropped')
    assert.equal(report.sse.events, report.sse.expected, 'every correction reached the change stream')
    for (const [i, live] of report.live.entries()) {
      assert.equal(live.close, undefined, `live client ${i} stayed connected`)
      assert.equal(live.events, live.expected, `live client ${i} received every ingested row`)
    }
    const first = report.samples[0]!
    const last = report.samples.at(-1)!
    assert.ok(report.samples.length >= 10, 'sampled throughout')
    assert.ok(last.fds <= first.fds + 100, `file descriptors ${first.fds} → ${last.fds}`)
    assert.ok(
      last.rssMiB <= Math.max(first.rssMiB * 3, first.rssMiB + 512),
      `RSS ${first.rssMiB.toFixed(0)} → ${last.rssMiB.toFixed(0)} MiB`,
    )
  })
})
