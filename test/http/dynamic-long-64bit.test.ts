/**
 * Exact 64-bit longs inside `dynamic` values end to end (issue 17 item 1, "everywhere a value
 * travels"): a dynamic column ingested as JSON holds nested integers
 * beyond ±2^53 and at the int64 limits; each backend stores them, queries read them exactly
 * (element access, arithmetic, tostring, mv-expand, make_list) and the JSON reply prints every
 * digit. Replies are read with a lossless parser: JSON.parse would round them.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushConnectionConfig, queryRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const CONFIG = pushConnectionConfig('docs', 'Docs', [
  { name: 'timestamp', type: 'datetime' },
  { name: 'name', type: 'string' },
  { name: 'd', type: 'dynamic' },
])

const MAX = 9223372036854775807n
const MIN = -9223372036854775808n

for (const backend of BACKENDS) {
  describe(`${backend}: exact 64-bit longs inside dynamic values`, () => {
    let server: TestServer
    let editor: string
    let analyst: string
    const ingest = (rawBody: string) =>
      server.api('POST', '/oi-api/ingest/data-connections/docs', {
        token: editor,
        rawBody,
        headers: { 'content-type': 'application/json' },
      })
    const query = (q: string) => queryRows(server, analyst, q, { exact: true })
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, CONFIG)
      editor = await server.token('editor')
      analyst = await server.token('analyst')
      const json = `[
        {"timestamp":"2026-01-01T00:00:00Z","name":"a","d":{"id":9007199254740993,"xs":[-9007199254740993,1.5,"s"]}},
        {"timestamp":"2026-01-01T00:00:01Z","name":"b","d":[9223372036854775807,-9223372036854775808]},
        {"timestamp":"2026-01-01T00:00:02Z","name":"c","d":{"id":18014398509481985}}
      ]`
      const response = await ingest(json)
      assert.equal(response.status, 200, response.text)
    })
    after(() => server.stop())

    it('stores and returns the digits of nested integers', async () => {
      const rows = await query('Docs | project name, d | order by name asc')
      assert.deepEqual(rows, [
        { name: 'a', d: { id: 9007199254740993n, xs: [-9007199254740993n, 1.5, 's'] } },
        { name: 'b', d: [MAX, MIN] },
        { name: 'c', d: { id: 18014398509481985n } },
      ])
    })

    it('reads, computes and prints them exactly', async () => {
      assert.deepEqual(
        await query('Docs | where name == "a" | project id = tolong(d.id), next = tolong(d.id) + 1, t = tostring(d), g = gettype(d.id)'),
        [{ id: 9007199254740993n, next: 9007199254740994n, t: '{"id":9007199254740993,"xs":[-9007199254740993,1.5,"s"]}', g: 'long' }],
      )
      assert.deepEqual(await query('Docs | where name == "b" | mv-expand v = d to typeof(long) | project v'), [{ v: MAX }, { v: MIN }])
      assert.deepEqual(await query('Docs | where d.id == 9007199254740993 | project name'), [{ name: 'a' }])
      assert.deepEqual(await query('Docs | where name != "b" | summarize ids = make_list(d.id)'), [
        { ids: [9007199254740993n, 18014398509481985n] },
      ])
      assert.deepEqual(await query(`print p = parse_json('{"a":9007199254740993}'), b = bag_pack("k", 9223372036854775807)`), [
        { p: { a: 9007199254740993n }, b: { k: MAX } },
      ])
    })
  })
}
