/**
 * Issue 17 end to end, per backend, on a server with the columnar tier on: one table of edge values
 * (longs at and beyond ±2^53 and the int64 limits, NaN and ±Infinity, empty strings, exact longs
 * inside `dynamic`) travels through every surface a value reaches — the JSON query reply, the
 * live stream (WebSocket), CSV and JSONL exports, MCP results — and answers the same after
 * compaction, when DuckDB reads it from Parquet segments (items 1, 6, 7, 8 and 9 there too).
 * Replies are compared as text or with a lossless parser: JSON.parse would round the digits.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'lossless-json'
import { BACKENDS } from '../support/backends.js'
import { connectLive } from '../support/live-client.js'
import { connectMcp } from '../support/mcp-clients.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const CONFIG = {
  connections: [
    {
      lookup: 'edges',
      kind: 'push',
      table: 'Edges',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'name', type: 'string' },
        { name: 'n', type: 'long' },
        { name: 'r', type: 'real' },
        { name: 's', type: 'string' },
        { name: 'd', type: 'dynamic' },
      ],
    },
  ],
  settings: { queries: { rowCap: 10_000, timeoutSeconds: 300 } },
}

// JSON numbers beyond 2^53 (and a digit string), as a client sends them: never through a JS number
const ROWS_JSON = `[
  {"timestamp":"2026-01-01T00:00:00Z","name":"a","n":9007199254740993,"r":1.5,"s":"","d":{"k":9007199254740993,"l":[""]}},
  {"timestamp":"2026-01-01T00:00:01Z","name":"b","n":-9223372036854775808,"r":"NaN","s":"x","d":[-9223372036854775808,"",null]},
  {"timestamp":"2026-01-01T00:00:02Z","name":"c","n":"9223372036854775807","r":"Infinity","s":"","d":9223372036854775807},
  {"timestamp":"2026-01-01T00:00:03Z","name":"d","n":-9007199254740993,"r":"-Infinity","s":"x","d":null},
  {"timestamp":"2026-01-01T00:00:04Z","name":"e","n":null,"r":null,"s":"y","d":""}
]`

const DIGITS = ['9007199254740993', '-9223372036854775808', '9223372036854775807', '-9007199254740993']

/** JSON with integers beyond 2^53 as bigints (what a lossless client sees). */
function parseExact(text: string): unknown {
  return parse(text, undefined, (s: string) => {
    const n = Number(s)
    return /^-?\d+$/.test(s) && !Number.isSafeInteger(n) ? BigInt(s) : n
  })
}

/** Queries whose answers must not change when the rows move from the row store to Parquet segments. */
const QUERIES = [
  'Edges | project name, n, r, s, d | order by name asc',
  'Edges | where n == 9007199254740993 or n == -9223372036854775808 | project name | order by name asc',
  'Edges | where n > 9007199254740992 | project name, n | order by n asc',
  'Edges | summarize s = sum(n), mx = max(n), mn = min(n), c = count(n)',
  'Edges | where name in ("a", "c") | extend w = n + 1, t = tostring(n), h = hash(n), x = binary_xor(n, 1), b = bin(n, 10) | project name, w, t, h, x, b | order by name asc',
  'Edges | summarize nan = countif(isnan(r)), inf = countif(isinf(r)), nulls = countif(isnull(r)), gt = countif(r > 1)',
  'Edges | summarize d = dcount(s), ds = array_length(make_set(s)), cd = count_distinct(s), e = dcountif(s, isempty(s))',
  'Edges | project-keep * | getschema | project ColumnName',
  'Edges | project-rename nn = n | project-reorder name | getschema | project ColumnName',
  'Edges | where name == "a" | project k = d.k, k1 = tolong(d.k) + 1, g = gettype(d.k)',
  'Edges | where isnan(r) or isinf(r) | project name, r | order by name asc',
]

for (const backend of BACKENDS) {
  describe(`${backend}: issue 17 values through every surface, on the row store and on the columnar tier`, () => {
    let server: TestServer
    let analyst: string
    let ingestedAt: string
    const liveMessages: string[] = []
    const dataDir = mkdtempSync(join(tmpdir(), 'provenant-test-i17-'))
    const queryText = async (q: string): Promise<string> => {
      const response = await server.api('POST', '/oi-api/warm-queries', { token: analyst, body: { Query: q } })
      assert.equal(response.status, 200, `${q}: ${response.text}`)
      // the reply without its approval time, which differs from run to run
      return response.text.replace(/,"approvedAt":"[^"]*"/, '')
    }
    const results = async (q: string): Promise<unknown> => (parseExact(await queryText(q)) as { results: unknown }).results
    const rowStoreAnswers: string[] = []

    before(async () => {
      server = await startTestServer(backend, {
        dataDir,
        config: {
          columnar: { dir: join(dataDir, 'segments'), threads: 1, memoryLimit: '256MB', segmentRows: 1000, intervalMs: 3_600_000 },
        },
      })
      await server.services.config.apply(
        server.workspace.id,
        { accountId: server.accounts.admin.id, accountName: 'admin', role: 'admin' },
        CONFIG,
      )
      analyst = await server.token('analyst')
      const live = await connectLive(server.baseUrl, { token: await server.token('viewer') })
      live.ws.on('message', (data) => liveMessages.push(data.toString()))
      const response = await server.api('POST', '/oi-api/ingest/data-connections/edges', {
        token: await server.token('editor'),
        rawBody: ROWS_JSON,
        headers: { 'content-type': 'application/json' },
      })
      assert.equal(response.status, 200, response.text)
      ingestedAt = response.body.ingestedAt as string
      await live.waitFor(5)
      live.close()
    })
    after(async () => {
      await server.stop()
      rmSync(dataDir, { recursive: true, force: true })
    })

    it('the query reply prints every digit; internal columns stay hidden; NaN, ±Infinity and "" are values', async () => {
      for (const q of QUERIES) rowStoreAnswers.push(await queryText(q))
      assert.deepEqual(await results(QUERIES[0]!), [
        { name: 'a', n: 9007199254740993n, r: 1.5, s: '', d: { k: 9007199254740993n, l: [''] } },
        { name: 'b', n: -9223372036854775808n, r: 'NaN', s: 'x', d: [-9223372036854775808n, '', null] },
        { name: 'c', n: 9223372036854775807n, r: 'Infinity', s: '', d: 9223372036854775807n },
        { name: 'd', n: -9007199254740993n, r: '-Infinity', s: 'x', d: null },
        { name: 'e', n: null, r: null, s: 'y', d: '' },
      ])
      assert.deepEqual(await results(QUERIES[3]!), [{ s: -1, mx: 9223372036854775807n, mn: -9223372036854775808n, c: 5 }])
      assert.deepEqual(await results(QUERIES[4]!), [
        {
          name: 'a',
          w: 9007199254740994n,
          t: '9007199254740993',
          h: ((await results('print h = hash(9007199254740993)')) as { h: unknown }[])[0]!.h,
          x: 9007199254740992n,
          b: 9007199254740990,
        },
        {
          name: 'c',
          w: -9223372036854775808n,
          t: '9223372036854775807',
          h: ((await results('print h = hash(9223372036854775807)')) as { h: unknown }[])[0]!.h,
          x: 9223372036854775806n,
          b: 9223372036854775800n,
        },
      ])
      assert.deepEqual(await results(QUERIES[5]!), [{ nan: 1, inf: 2, nulls: 1, gt: 2 }])
      assert.deepEqual(await results(QUERIES[6]!), [{ d: 3, ds: 3, cd: 3, e: 1 }])
      assert.deepEqual(
        await results(QUERIES[7]!),
        ['timestamp', 'name', 'n', 'r', 's', 'd'].map((c) => ({ ColumnName: c })),
      )
      assert.deepEqual(
        await results(QUERIES[8]!),
        ['name', 'timestamp', 'nn', 'r', 's', 'd'].map((c) => ({ ColumnName: c })),
      )
      assert.deepEqual(await results(QUERIES[9]!), [{ k: 9007199254740993n, k1: 9007199254740994n, g: 'long' }])
      // ingestion time is the instant the batch was stored (item 8)
      const t = (await results('Edges | summarize t = max(ingestion_time()), u = min(_ingested_at)')) as { t: string; u: string }[]
      assert.equal(Date.parse(t[0]!.t), Date.parse(ingestedAt))
      assert.equal(Date.parse(t[0]!.u), Date.parse(ingestedAt))
    })

    it('the live stream sends the digits (and the same values as a query)', () => {
      const text = liveMessages.join('\n')
      for (const digits of DIGITS) assert.ok(text.includes(`"n":${digits}`), `live stream: ${digits} in ${text}`)
      assert.ok(text.includes('"d":{"k":9007199254740993,"l":[""]}'), text)
      assert.ok(text.includes('"r":"NaN"') && text.includes('"r":"-Infinity"'), text)
    })

    it('CSV and JSONL exports write the digits', async () => {
      const window = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }
      const files: Record<string, string> = {}
      for (const format of ['csv', 'jsonl']) {
        const response = await server.api('POST', '/oi-api/downloads/data-connections/edges', {
          token: analyst,
          body: { format, ...window },
        })
        assert.equal(response.status, 200, response.text)
        const url = new URL(response.body.downloadUrl as string)
        const file = await fetch(`${server.baseUrl}${url.pathname}${url.search}`)
        assert.equal(file.status, 200)
        files[format] = await file.text()
      }
      const csv = files['csv']!.split('\r\n')
      assert.equal(csv[0], 'timestamp,name,n,r,s,d')
      assert.equal(csv[1], '2026-01-01T00:00:00Z,a,9007199254740993,1.5,,"{""k"":9007199254740993,""l"":[""""]}"')
      assert.equal(csv[2], '2026-01-01T00:00:01Z,b,-9223372036854775808,NaN,x,"[-9223372036854775808,"""",null]"')
      assert.equal(csv[3], '2026-01-01T00:00:02Z,c,9223372036854775807,Infinity,,9223372036854775807')
      const jsonl = files['jsonl']!.split('\n')
      assert.equal(
        jsonl[0],
        '{"timestamp":"2026-01-01T00:00:00Z","name":"a","n":9007199254740993,"r":1.5,"s":"","d":{"k":9007199254740993,"l":[""]}}',
      )
      assert.equal(
        jsonl[1],
        '{"timestamp":"2026-01-01T00:00:01Z","name":"b","n":-9223372036854775808,"r":"NaN","s":"x","d":[-9223372036854775808,"",null]}',
      )
    })

    it('MCP results carry longs beyond 2^53 as their digits', async () => {
      const client = await connectMcp('modern', `${server.baseUrl}/oi-api/mcp`, { authorization: `Bearer ${analyst}` })
      try {
        const result = await client.callTool({
          name: 'run_kql',
          arguments: { query: 'Edges | where name in ("a", "b") | project name, n, d | order by name asc' },
        })
        assert.deepEqual(result.structuredContent?.['rows'], [
          { name: 'a', n: '9007199254740993', d: { k: '9007199254740993', l: [''] } },
          { name: 'b', n: '-9223372036854775808', d: ['-9223372036854775808', '', null] },
        ])
      } finally {
        await client.close()
        server.runtime.app.server.closeAllConnections()
      }
    })

    it('after compaction (DuckDB over Parquet segments) every answer is the same', async () => {
      assert.equal(rowStoreAnswers.length, QUERIES.length, 'the row-store answers were taken first')
      assert.equal(await server.runtime.columnar!.compactAll(), 5)
      for (const [i, q] of QUERIES.entries()) assert.equal(await queryText(q), rowStoreAnswers[i], `columnar: ${q}`)
      const t = (await results('Edges | summarize t = max(ingestion_time()), u = min(_ingested_at)')) as { t: string; u: string }[]
      assert.equal(Date.parse(t[0]!.t), Date.parse(ingestedAt))
      assert.equal(Date.parse(t[0]!.u), Date.parse(ingestedAt))
    })

    it('a correction sets a long beyond 2^53 exactly, read back from the segments and the live row', async () => {
      const [editor, approver] = [await server.token('editor'), await server.token('approver')]
      const rowId = ((await results('Edges | where name == "a" | project _rowid')) as { _rowid: number }[])[0]!._rowid
      const created = await server.api('POST', '/oi-api/provenance/amendments', {
        token: editor,
        body: {
          ScopeKey: 'edge-a',
          entityType: 'row:edges',
          entityId: String(rowId),
          reasonCategory: 'recalculation',
          reason: 'off by two',
          // digit strings: a JSON number beyond 2^53 is refused outside the ingest route (strict bodies)
          before: { n: '9007199254740993' },
          after: { n: '9007199254740995' },
        },
      })
      assert.equal(created.status, 200, created.text)
      const approved = await server.api('POST', `/oi-api/provenance/amendments/${created.body.id}/approve?scopeKey=edge-a`, {
        token: approver,
      })
      assert.equal(approved.body.status, 'applied', approved.text)
      assert.deepEqual(await results('Edges | where name == "a" | project n, m = n + 1'), [{ n: 9007199254740995n, m: 9007199254740996n }])
      assert.deepEqual(await results('Edges | where n == 9007199254740995 | project name'), [{ name: 'a' }])
    })
  })
}
