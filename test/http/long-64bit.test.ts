/**
 * Exact 64-bit longs end to end (issue 17 item 1): JSON and NDJSON ingest beyond ±2^53 (numbers and
 * digit strings), storage on each backend, pushed-down and in-memory queries, and JSON replies
 * that print every digit. Replies are read with a lossless parser: JSON.parse would round them.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushConnectionConfig, queryRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const CONFIG = pushConnectionConfig('counters', 'Counters', [
  { name: 'timestamp', type: 'datetime' },
  { name: 'name', type: 'string' },
  { name: 'n', type: 'long' },
])

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n

for (const backend of BACKENDS) {
  describe(`${backend}: exact 64-bit longs end to end`, () => {
    let server: TestServer
    let editor: string
    let analyst: string
    const ingest = (rawBody: string, contentType = 'application/json') =>
      server.api('POST', '/oi-api/ingest/data-connections/counters', { token: editor, rawBody, headers: { 'content-type': contentType } })
    const query = (q: string) => queryRows(server, analyst, q, { exact: true })
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, CONFIG)
      editor = await server.token('editor')
      analyst = await server.token('analyst')
    })
    after(() => server.stop())

    it('ingests JSON numbers and digit strings beyond 2^53 and the int64 limits without loss', async () => {
      const json = `[
        {"timestamp":"2026-01-01T00:00:00Z","name":"a","n":9007199254740993},
        {"timestamp":"2026-01-01T00:00:01Z","name":"b","n":-9223372036854775808},
        {"timestamp":"2026-01-01T00:00:02Z","name":"c","n":"9223372036854775807"},
        {"timestamp":"2026-01-01T00:00:03Z","name":"d","n":-9007199254740993}
      ]`
      const first = await ingest(json)
      assert.equal(first.status, 200, first.text)
      const ndjson = '{"timestamp":"2026-01-01T00:00:04Z","name":"e","n":18014398509481985}\n'
      const second = await ingest(ndjson, 'application/x-ndjson')
      assert.equal(second.status, 200, second.text)
      const rows = await query('Counters | project name, n | order by name asc')
      assert.deepEqual(
        rows.map((r) => r['n']),
        [9007199254740993n, MIN, MAX, -9007199254740993n, 18014398509481985n],
      )
    })

    it('refuses a value outside int64 with a 400 naming the column', async () => {
      const response = await ingest('[{"timestamp":"2026-01-01T00:00:00Z","name":"x","n":"9223372036854775808"}]')
      assert.equal(response.status, 400, response.text)
      assert.match(response.text, /does not fit a long/)
      const tooBig = await ingest('[{"timestamp":"2026-01-01T00:00:00Z","name":"x","n":92233720368547758080}]')
      assert.equal(tooBig.status, 400, tooBig.text)
    })

    it('filters, sorts, aggregates and computes exactly (pushed into SQL and in memory)', async () => {
      assert.deepEqual(await query('Counters | where n == 9007199254740993 | project name'), [{ name: 'a' }])
      assert.deepEqual(await query('Counters | where n > 9007199254740992 | project name | order by name asc'), [
        { name: 'a' },
        { name: 'c' },
        { name: 'e' },
      ])
      assert.deepEqual(await query('Counters | where name in ("a", "e") | summarize s = sum(n)'), [{ s: 27021597764222978n }])
      assert.deepEqual(await query('Counters | where name == "a" | project m = n * 2 + 1, t = tostring(n), h = n / 3'), [
        { m: 18014398509481987n, t: '9007199254740993', h: 3002399751580331 },
      ])
      // Kusto's long wraps around (two's complement), in SQL and in memory alike
      assert.deepEqual(await query('Counters | where name == "c" | project w = n + 1'), [{ w: MIN }])
      assert.deepEqual(await query('Counters | where name in ("b", "c") | summarize s = sum(n)'), [{ s: -1 }])
      assert.deepEqual(await query('Counters | top 1 by n asc | project name'), [{ name: 'b' }])
    })

    it('prints computed longs and hashes with every digit', async () => {
      assert.deepEqual(await query('print a = 9007199254740993, h = hash("World"), x = binary_xor(9223372036854775807, 1)'), [
        { a: 9007199254740993n, h: 1846988464401551951n, x: 9223372036854775806n },
      ])
    })
  })
}
