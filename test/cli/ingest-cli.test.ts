/**
 * `provenant ingest CONNECTION FILE` against a running server's store, per backend: JSONL and CSV
 * files with integers beyond 2^53 and at the int64 limits store them exactly (issue 17 item 1, the
 * same as the HTTP ingest route), in a long column and inside a dynamic one.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'lossless-json'
import { BACKENDS } from '../support/backends.js'
import { runCliInProcess as cli } from '../support/cli.js'
import { applyAsAdmin } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const CONFIG = {
  connections: [
    {
      lookup: 'counters',
      kind: 'push',
      table: 'Counters',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'name', type: 'string' },
        { name: 'n', type: 'long' },
        { name: 'd', type: 'dynamic' },
      ],
    },
  ],
}

/** JSON with integers beyond 2^53 as bigints (what a lossless client sees). */
const parseExact = (text: string): unknown =>
  parse(text, undefined, (s: string) => (/^-?\d+$/.test(s) && !Number.isSafeInteger(Number(s)) ? BigInt(s) : Number(s)))

for (const backend of BACKENDS) {
  describe(`${backend}: provenant ingest keeps 64-bit integers exact`, () => {
    let server: TestServer
    let store: string[]
    const dir = mkdtempSync(join(tmpdir(), 'provenant-ingest-cli-'))
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, CONFIG)
      store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
    })
    after(async () => {
      await server.stop()
      rmSync(dir, { recursive: true, force: true })
    })

    it('JSONL numbers and CSV digits beyond 2^53 are stored without loss', async () => {
      const jsonl = join(dir, 'rows.jsonl')
      writeFileSync(
        jsonl,
        [
          '{"timestamp":"2026-01-01T00:00:00Z","name":"a","n":9007199254740993,"d":{"id":-9223372036854775808}}',
          '{"timestamp":"2026-01-01T00:00:01Z","name":"b","n":-9223372036854775808,"d":[9223372036854775807]}',
          '',
        ].join('\n'),
      )
      const csv = join(dir, 'rows.csv')
      writeFileSync(csv, 'timestamp,name,n,d\r\n2026-01-01T00:00:02Z,c,9223372036854775807,"{""id"":9007199254740993}"\r\n')
      for (const file of [jsonl, csv]) {
        const result = await cli(['ingest', 'counters', file, ...store])
        assert.equal(result.code, 0, `${file}: ${result.stdout}${result.stderr}`)
      }
      const response = await server.api('POST', '/oi-api/warm-queries', {
        token: await server.token('analyst'),
        body: { Query: 'Counters | project name, n, d | order by name asc' },
      })
      assert.equal(response.status, 200, response.text)
      assert.deepEqual((parseExact(response.text) as { results: unknown }).results, [
        { name: 'a', n: 9007199254740993n, d: { id: -9223372036854775808n } },
        { name: 'b', n: -9223372036854775808n, d: [9223372036854775807n] },
        { name: 'c', n: 9223372036854775807n, d: { id: 9007199254740993n } },
      ])
    })
  })
}
