/**
 * Cold-data export (issue 7; spec 2.4, 2.5, 4.2, 8; design §5) over real HTTP on every backend:
 * the three endpoints in both formats, every request limit at its boundary, the 25,000-row cap and
 * paging through the capped set, window boundaries, surface merges with the connection column, CSV
 * read back by a real parser, corrected values, signed expiring download URLs with Range, the
 * sweeper, scopes, rights and the capability switch.
 */
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { parse } from 'csv-parse/sync'
import { manualClock } from '../../src/shared/clock.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../support/backends.js'
import { applyAsAdmin, pushRows } from '../support/fixtures.js'
import { type ApiResponse, errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const CONFIG = {
  connections: [
    {
      lookup: 'sensors',
      kind: 'push',
      table: 'Sensors',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'sensor', type: 'string' },
        { name: 'value', type: 'real' },
      ],
    },
    // `sensor` is a long here and a string in `sensors`: a surface export encodes each row with its own connection's types.
    {
      lookup: 'meters',
      kind: 'push',
      table: 'Meters',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'kwh', type: 'real' },
        { name: 'sensor', type: 'long' },
      ],
    },
    {
      lookup: 'kinds',
      kind: 'push',
      table: 'Kinds',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'name', type: 'string' },
        { name: 'value', type: 'real' },
        { name: 'count', type: 'long' },
        { name: 'ok', type: 'bool' },
        { name: 'tags', type: 'dynamic' },
        { name: 'duration', type: 'timespan' },
        { name: 'id', type: 'guid' },
      ],
    },
    {
      lookup: 'bulk',
      kind: 'push',
      table: 'Bulk',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'seq', type: 'long' },
      ],
    },
  ],
  surfaces: [
    { lookup: 'hall', connections: ['sensors'] },
    { lookup: 'yard', connections: ['meters'] },
    { lookup: 'plant', connections: ['sensors', 'meters'] },
  ],
}

const FROM = '2026-01-01T00:00:00Z'
const TO = '2026-01-02T00:00:00Z'
const WINDOW = { from: FROM, to: TO }

const SENSOR_ROWS = [
  { timestamp: '2025-12-31T23:59:59.9999999Z', sensor: 'before', value: -1 }, // one tick before `from`: out
  { timestamp: FROM, sensor: 's0', value: 0 }, // exactly at `from`: in
  { timestamp: '2026-01-01T00:01:00Z', sensor: 's1', value: 1 },
  { timestamp: '2026-01-01T00:02:00Z', sensor: 's2', value: -5 },
  { timestamp: '2026-01-01T00:03:00Z', sensor: 's3', value: 3.25 },
  { timestamp: TO, sensor: 'at-to', value: 99 }, // exactly at `to`: out
]
// Pushed after the sensors, so at the shared timestamp 00:01 the sensors row (lower row id) comes first.
const METER_ROWS = [
  { timestamp: '2026-01-01T00:01:00Z', kwh: 2.5, sensor: 7 },
  { timestamp: '2026-01-01T00:02:30Z', kwh: 3, sensor: 8 },
  { timestamp: '2026-01-01T00:05:00Z', kwh: 4.5, sensor: 9 },
]

const KIND_ROWS = [
  {
    timestamp: '2026-01-01T01:00:00.25Z',
    name: 'plain',
    value: 1.5,
    count: 42,
    ok: true,
    tags: { a: [1, 'x,"y"'], b: null },
    duration: '1.02:03:04.5',
    id: '0b7e5a6c-0000-4000-8000-000000000001',
  },
  {
    timestamp: '2026-01-01T01:00:01Z',
    name: 'comma, "quote"\r\nnew line',
    value: -5,
    count: -7,
    ok: false,
    tags: 'text',
    duration: '-00:00:01',
    id: null,
  },
  {
    timestamp: '2026-01-01T01:00:02Z',
    name: '=HYPERLINK("http://x","y")',
    value: null,
    count: null,
    ok: null,
    tags: null,
    duration: null,
    id: null,
  },
  { timestamp: '2026-01-01T01:00:03Z', name: '-5', value: 0, count: 0, ok: true, tags: [], duration: '00:00:00', id: null },
  { timestamp: '2026-01-01T01:00:04Z', name: '@SUM(A1)', value: 1e21, count: 1, ok: true, tags: 5, duration: '00:00:01', id: null },
  { timestamp: '2026-01-01T01:00:05Z', name: '+1-1', value: 2, count: 2, ok: true, tags: {}, duration: '00:00:02', id: null },
  {
    timestamp: '2026-01-01T01:00:06Z',
    name: 'ünïcødé ✓ 𝄞',
    value: 3,
    count: 3,
    ok: true,
    tags: { k: 'v' },
    duration: '00:00:03',
    id: null,
  },
  { timestamp: '2026-01-01T01:00:07Z', name: '', value: 4, count: 4, ok: false, tags: { '': '' }, duration: '00:00:04', id: null },
]

// 25,001 rows: seq i (i < 25,000) at BULK + ((7i mod 12,500) s): every timestamp twice, ingested
// out of timestamp order; the last row alone at BULK + 12,500 s.
const BULK = Date.parse('2026-02-01T00:00:00Z')
const BULK_ROWS = 25_001
const bulkSecond = (i: number) => (i < 25_000 ? (i * 7) % 12_500 : 12_500)
const BULK_ORDER = Array.from({ length: BULK_ROWS }, (_, i) => i).sort((a, b) => bulkSecond(a) - bulkSecond(b) || a - b)
const bulkIso = (second: number) => new Date(BULK + second * 1000).toISOString()
const WINDOW_25001 = { from: bulkIso(0), to: bulkIso(12_501) }
const WINDOW_25000 = { from: bulkIso(0), to: bulkIso(12_500) }

const RESPONSE_FIELDS = ['downloadUrl', 'expiresAt', 'format', 'page', 'pageSize', 'pageCount', 'rowCount', 'totalRows', 'truncated']

for (const backend of BACKENDS) {
  describe(`${backend}: cold-data export (spec 4.2)`, () => {
    let server: TestServer
    let analyst: string
    const clock = manualClock(Date.parse('2026-03-01T12:00:00Z'))

    const post = (path: string, body: unknown, token = analyst) => server.api('POST', `/oi-api/downloads/${path}`, { token, body })
    /** The download URL as issued, pointed at the test server's real port (the configured public URL says port 0). */
    const local = (downloadUrl: string) => {
      const url = new URL(downloadUrl)
      return `${server.baseUrl}${url.pathname}${url.search}`
    }
    const fetchFile = (downloadUrl: string, init?: RequestInit) => fetch(local(downloadUrl), init)
    async function exported(
      path: string,
      body: Record<string, unknown>,
      token = analyst,
    ): Promise<{ response: ApiResponse; text: string }> {
      const response = await post(path, body, token)
      assert.equal(response.status, 200, response.text)
      const file = await fetchFile(response.body.downloadUrl)
      assert.equal(file.status, 200)
      return { response, text: await file.text() }
    }
    const csvRecords = (text: string) => parse(text, { columns: true }) as Record<string, string>[]
    const jsonLines = (text: string) =>
      text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>)

    before(async () => {
      server = await startTestServer(backend, { clock })
      await applyAsAdmin(server, CONFIG)
      await pushRows(server, 'sensors', SENSOR_ROWS)
      await pushRows(server, 'meters', METER_ROWS)
      await pushRows(server, 'kinds', KIND_ROWS)
      const bulk = Array.from({ length: BULK_ROWS }, (_, i) => ({ timestamp: bulkIso(bulkSecond(i)), seq: i }))
      await pushRows(server, 'bulk', bulk.slice(0, 12_000))
      await pushRows(server, 'bulk', bulk.slice(12_000))
      analyst = await server.token('analyst', { expires: '30d' })
    })
    after(() => server.stop())

    describe('endpoints and formats', () => {
      it("data connection, CSV: the window's rows in order, boundaries [from, to), the response fields in order", async () => {
        const { response, text } = await exported('data-connections/sensors', { format: 'csv', ...WINDOW })
        assert.deepEqual(Object.keys(response.body), RESPONSE_FIELDS)
        assert.deepEqual(
          { ...response.body, downloadUrl: undefined, expiresAt: undefined },
          {
            downloadUrl: undefined,
            expiresAt: undefined,
            format: 'csv',
            page: 1,
            pageSize: 1000,
            pageCount: 1,
            rowCount: 4,
            totalRows: 4,
            truncated: false,
          },
        )
        assert.equal(
          text,
          [
            'timestamp,sensor,value',
            '2026-01-01T00:00:00Z,s0,0',
            '2026-01-01T00:01:00Z,s1,1',
            '2026-01-01T00:02:00Z,s2,-5',
            '2026-01-01T00:03:00Z,s3,3.25',
            '',
          ].join('\r\n'),
        )
      })

      it("data connection, JSONL: one object per line in the query endpoints' wire form", async () => {
        const { response, text } = await exported('data-connections/meters', { format: 'jsonl', ...WINDOW })
        assert.equal(response.body.rowCount, 3)
        assert.equal(
          text,
          [
            '{"timestamp":"2026-01-01T00:01:00Z","kwh":2.5,"sensor":7}',
            '{"timestamp":"2026-01-01T00:02:30Z","kwh":3,"sensor":8}',
            '{"timestamp":"2026-01-01T00:05:00Z","kwh":4.5,"sensor":9}',
            '',
          ].join('\n'),
        )
      })

      it('surface, CSV and JSONL: connections merged by timestamp then row id, a connection column first, the union of columns', async () => {
        const csv = await exported('surfaces/plant', { format: 'csv', ...WINDOW })
        assert.equal(csv.response.body.totalRows, 7)
        assert.equal(
          csv.text,
          [
            'connection,timestamp,sensor,value,kwh',
            'sensors,2026-01-01T00:00:00Z,s0,0,',
            'sensors,2026-01-01T00:01:00Z,s1,1,',
            'meters,2026-01-01T00:01:00Z,7,,2.5',
            'sensors,2026-01-01T00:02:00Z,s2,-5,',
            'meters,2026-01-01T00:02:30Z,8,,3',
            'sensors,2026-01-01T00:03:00Z,s3,3.25,',
            'meters,2026-01-01T00:05:00Z,9,,4.5',
            '',
          ].join('\r\n'),
        )
        const jsonl = await exported('surfaces/plant', { format: 'jsonl', ...WINDOW, page: 2, pageSize: 3 })
        assert.deepEqual(
          { rowCount: jsonl.response.body.rowCount, pageCount: jsonl.response.body.pageCount, totalRows: jsonl.response.body.totalRows },
          { rowCount: 3, pageCount: 3, totalRows: 7 },
        )
        assert.deepEqual(jsonLines(jsonl.text), [
          { connection: 'sensors', timestamp: '2026-01-01T00:02:00Z', sensor: 's2', value: -5, kwh: null },
          { connection: 'meters', timestamp: '2026-01-01T00:02:30Z', sensor: 8, value: null, kwh: 3 },
          { connection: 'sensors', timestamp: '2026-01-01T00:03:00Z', sensor: 's3', value: 3.25, kwh: null },
        ])
      })

      it('surface + connection: only that connection, with the connection column; 404 when it does not belong to the surface', async () => {
        const csv = await exported('surfaces/plant/connection/meters', { format: 'csv', ...WINDOW })
        assert.equal(
          csv.text,
          'connection,timestamp,kwh,sensor\r\nmeters,2026-01-01T00:01:00Z,2.5,7\r\nmeters,2026-01-01T00:02:30Z,3,8\r\nmeters,2026-01-01T00:05:00Z,4.5,9\r\n',
        )
        const jsonl = await exported('surfaces/hall/connection/sensors', { format: 'jsonl', ...WINDOW, pageSize: 1 })
        assert.deepEqual(jsonLines(jsonl.text), [{ connection: 'sensors', timestamp: FROM, sensor: 's0', value: 0 }])
        assert.equal(jsonl.response.body.pageCount, 4)
        const foreign = await post('surfaces/hall/connection/meters', { format: 'csv', ...WINDOW })
        assert.equal(foreign.status, 404)
        assert.equal(errorMessage(foreign), 'surface "hall" has no connection "meters"')
      })

      it('404 for an unknown connection or surface', async () => {
        for (const [path, message] of [
          ['data-connections/nowhere', 'no data connection "nowhere" in this workspace'],
          ['surfaces/nowhere', 'no surface "nowhere" in this workspace'],
          ['surfaces/nowhere/connection/sensors', 'no surface "nowhere" in this workspace'],
        ] as const) {
          const response = await post(path, { format: 'csv', ...WINDOW })
          assert.equal(response.status, 404, path)
          assert.equal(errorMessage(response), message)
        }
      })

      it('an empty window gives a header-only CSV and an empty JSONL file', async () => {
        const window = { from: '2030-01-01T00:00:00Z', to: '2030-01-02T00:00:00Z' }
        const csv = await exported('data-connections/sensors', { format: 'csv', ...window })
        assert.deepEqual(
          { ...csv.response.body, downloadUrl: 0, expiresAt: 0 },
          {
            downloadUrl: 0,
            expiresAt: 0,
            format: 'csv',
            page: 1,
            pageSize: 1000,
            pageCount: 0,
            rowCount: 0,
            totalRows: 0,
            truncated: false,
          },
        )
        assert.equal(csv.text, 'timestamp,sensor,value\r\n')
        const jsonl = await exported('data-connections/sensors', { format: 'jsonl', ...window })
        assert.equal(jsonl.text, '')
      })
    })

    describe('request limits (spec 2.4, 8)', () => {
      const expect400 = async (body: unknown, pattern: RegExp) => {
        const response = await post('data-connections/sensors', body)
        assert.equal(response.status, 400, JSON.stringify(body))
        assert.match(errorMessage(response), pattern, JSON.stringify(body))
      }

      it('pageSize: default 1000, 1 and 5000 accepted; 5001, 0, negatives, fractions and text are 400s naming pageSize', async () => {
        assert.equal((await post('data-connections/sensors', { format: 'csv', ...WINDOW })).body.pageSize, 1000)
        for (const pageSize of [1, 5000]) {
          const response = await post('data-connections/sensors', { format: 'csv', ...WINDOW, pageSize })
          assert.equal(response.status, 200, response.text)
          assert.equal(response.body.pageSize, pageSize)
        }
        await expect400({ format: 'csv', ...WINDOW, pageSize: 5001 }, /^body\.pageSize: pageSize is at most 5000/)
        for (const pageSize of [0, -1, -5000, 2.5, '100', null])
          await expect400({ format: 'csv', ...WINDOW, pageSize }, /^body\.pageSize: pageSize must be a whole number from 1 to 5000/)
      })

      it('page: default 1; 0, negatives, fractions and text are 400s naming page; a page past the end is an empty file', async () => {
        for (const page of [0, -1, 1.5, '2'])
          await expect400({ format: 'csv', ...WINDOW, page }, /^body\.page: page must be a whole number from 1/)
        const { response, text } = await exported('data-connections/sensors', { format: 'csv', ...WINDOW, page: 3, pageSize: 2 })
        assert.deepEqual([response.body.page, response.body.rowCount, response.body.pageCount, response.body.totalRows], [3, 0, 2, 4])
        assert.equal(text, 'timestamp,sensor,value\r\n')
      })

      it('format: csv or jsonl, required', async () => {
        for (const format of ['xlsx', 'CSV', '', 5])
          await expect400({ format, ...WINDOW }, /^body\.format: format must be "csv" or "jsonl"/)
        await expect400({ ...WINDOW }, /^body\.format: format must be "csv" or "jsonl"/)
      })

      it('from and to: required ISO 8601 times, from before to; each problem names its field', async () => {
        await expect400({ format: 'csv', to: TO }, /^body\.from: from is required/)
        await expect400({ format: 'csv', from: FROM }, /^body\.to: to is required/)
        await expect400({ format: 'csv', from: 'yesterday', to: TO }, /^body\.from: from "yesterday" is not an ISO 8601 time/)
        await expect400({ format: 'csv', from: FROM, to: 1767225600 }, /^body\.to: to must be an ISO 8601 time string/)
        await expect400({ format: 'csv', from: '2026-02-30T00:00:00Z', to: TO }, /^body\.from: .*not a valid calendar date/)
        await expect400({ format: 'csv', from: TO, to: FROM }, /^body\.to: to must be later than from/)
        await expect400({ format: 'csv', from: FROM, to: FROM }, /^body\.to: to must be later than from/)
        await expect400({ format: 'csv', from: FROM, to: '2026-01-01T01:00:00+01:00' }, /^body\.to: to must be later than from/)
      })

      it('several invalid fields are all named; unknown fields are refused; names are case-insensitive', async () => {
        const response = await post('data-connections/sensors', { format: 'xml', from: 'x', to: TO, pageSize: 0, colour: 'red' })
        assert.equal(response.status, 400)
        const message = errorMessage(response)
        for (const field of ['body.format', 'body.from', 'body.pageSize', 'unknown field colour'])
          assert.ok(message.includes(field), message)
        const mixed = await post('data-connections/sensors', { Format: 'csv', FROM, To: TO, PAGESIZE: 2 })
        assert.equal(mixed.status, 200, mixed.text)
        assert.equal(mixed.body.pageSize, 2)
      })

      it('timezone offsets and date-only times describe the same window', async () => {
        const zulu = await exported('data-connections/sensors', { format: 'csv', from: FROM, to: TO })
        const offset = await exported('data-connections/sensors', {
          format: 'csv',
          from: '2026-01-01T02:00:00+02:00',
          to: '2026-01-01T19:00:00-05:00',
        })
        const dates = await exported('data-connections/sensors', { format: 'csv', from: '2026-01-01', to: '2026-01-02' })
        assert.equal(offset.text, zulu.text)
        assert.equal(dates.text, zulu.text)
      })

      it('boundaries are exact to the tick: a row at from is in, one tick later it is out; a row at to is out', async () => {
        const atFrom = await exported('data-connections/sensors', {
          format: 'jsonl',
          from: '2025-12-31T23:59:59.9999999Z',
          to: '2026-01-01T00:00:00.0000001Z',
        })
        assert.deepEqual(
          jsonLines(atFrom.text).map((r) => r['sensor']),
          ['before', 's0'],
        )
        const tickLater = await exported('data-connections/sensors', {
          format: 'jsonl',
          from: '2026-01-01T00:00:00.0000001Z',
          to: '2026-01-01T00:01:00Z',
        })
        assert.deepEqual(jsonLines(tickLater.text), [])
        const toEdge = await exported('data-connections/sensors', {
          format: 'jsonl',
          from: '2026-01-01T00:03:00Z',
          to: '2026-01-02T00:00:00.0000001Z',
        })
        assert.deepEqual(
          jsonLines(toEdge.text).map((r) => r['sensor']),
          ['s3', 'at-to'],
        )
      })
    })

    describe('the 25,000-row cap and paging (spec 8, design §5)', () => {
      it('a window of 25,001 rows is truncated to the first 25,000; exactly 25,000 is not truncated', async () => {
        const over = await post('data-connections/bulk', { format: 'csv', ...WINDOW_25001, pageSize: 5000 })
        assert.deepEqual([over.body.totalRows, over.body.truncated, over.body.pageCount, over.body.rowCount], [25_000, true, 5, 5000])
        const exact = await post('data-connections/bulk', { format: 'csv', ...WINDOW_25000, pageSize: 5000 })
        assert.deepEqual([exact.body.totalRows, exact.body.truncated, exact.body.pageCount, exact.body.rowCount], [25_000, false, 5, 5000])
        const surface = await post('surfaces/plant', { format: 'csv', ...WINDOW })
        assert.equal(surface.body.truncated, false)
      })

      it('pages of 5000 (CSV) cover the capped set in order, none lost or repeated; page 6 is empty', async () => {
        const seqs: number[] = []
        for (let page = 1; page <= 6; page++) {
          const { response, text } = await exported('data-connections/bulk', { format: 'csv', ...WINDOW_25001, page, pageSize: 5000 })
          assert.deepEqual([response.body.rowCount, response.body.pageCount, response.body.truncated], [page <= 5 ? 5000 : 0, 5, true])
          const records = csvRecords(text)
          if (page === 6) assert.equal(text, 'timestamp,seq\r\n')
          for (const record of records) {
            assert.equal(record['timestamp'], bulkIso(bulkSecond(Number(record['seq']))).replace('.000Z', 'Z'))
            seqs.push(Number(record['seq']))
          }
        }
        assert.deepEqual(seqs, BULK_ORDER.slice(0, 25_000))
        assert.equal(new Set(seqs).size, 25_000)
        assert.ok(!seqs.includes(25_000), 'the row past the cap is not exported')
      })

      it('pages of 4999 (JSONL) cover the same capped set: five full pages and one of 5 rows', async () => {
        const seqs: number[] = []
        for (let page = 1; page <= 6; page++) {
          const { response, text } = await exported('data-connections/bulk', { format: 'jsonl', ...WINDOW_25001, page, pageSize: 4999 })
          assert.deepEqual([response.body.rowCount, response.body.pageCount], [page <= 5 ? 4999 : 5, 6])
          seqs.push(...jsonLines(text).map((r) => r['seq'] as number))
        }
        assert.deepEqual(seqs, BULK_ORDER.slice(0, 25_000))
      })
    })

    describe('file contents', () => {
      it('CSV: a real CSV parser reads back every value as documented (quoting, formula guard, ISO datetimes, JSON dynamic)', async () => {
        const { text } = await exported('data-connections/kinds', { format: 'csv', ...WINDOW })
        assert.ok(text.endsWith('\r\n') && !/[^\r]\n/.test(text.replace(/"[^"]*"/g, '')), 'CRLF line ends outside quoted fields')
        assert.deepEqual(csvRecords(text), [
          {
            timestamp: '2026-01-01T01:00:00.25Z',
            name: 'plain',
            value: '1.5',
            count: '42',
            ok: 'true',
            tags: '{"a":[1,"x,\\"y\\""],"b":null}',
            duration: '1.02:03:04.5000000',
            id: '0b7e5a6c-0000-4000-8000-000000000001',
          },
          {
            timestamp: '2026-01-01T01:00:01Z',
            name: 'comma, "quote"\r\nnew line',
            value: '-5',
            count: '-7',
            ok: 'false',
            tags: '"text"',
            duration: '-00:00:01',
            id: '',
          },
          {
            timestamp: '2026-01-01T01:00:02Z',
            name: '\'=HYPERLINK("http://x","y")',
            value: '',
            count: '',
            ok: '',
            tags: '',
            duration: '',
            id: '',
          },
          { timestamp: '2026-01-01T01:00:03Z', name: '-5', value: '0', count: '0', ok: 'true', tags: '[]', duration: '00:00:00', id: '' },
          {
            timestamp: '2026-01-01T01:00:04Z',
            name: "'@SUM(A1)",
            value: '1e+21',
            count: '1',
            ok: 'true',
            tags: '5',
            duration: '00:00:01',
            id: '',
          },
          {
            timestamp: '2026-01-01T01:00:05Z',
            name: "'+1-1",
            value: '2',
            count: '2',
            ok: 'true',
            tags: '{}',
            duration: '00:00:02',
            id: '',
          },
          {
            timestamp: '2026-01-01T01:00:06Z',
            name: 'ünïcødé ✓ 𝄞',
            value: '3',
            count: '3',
            ok: 'true',
            tags: '{"k":"v"}',
            duration: '00:00:03',
            id: '',
          },
          {
            timestamp: '2026-01-01T01:00:07Z',
            name: '',
            value: '4',
            count: '4',
            ok: 'false',
            tags: '{"":""}',
            duration: '00:00:04',
            id: '',
          },
        ])
      })

      it('JSONL: values exactly as stored, no formula guard', async () => {
        const { text } = await exported('data-connections/kinds', { format: 'jsonl', ...WINDOW, pageSize: 3 })
        assert.deepEqual(jsonLines(text), [
          {
            timestamp: '2026-01-01T01:00:00.25Z',
            name: 'plain',
            value: 1.5,
            count: 42,
            ok: true,
            tags: { a: [1, 'x,"y"'], b: null },
            duration: '1.02:03:04.5000000',
            id: '0b7e5a6c-0000-4000-8000-000000000001',
          },
          {
            timestamp: '2026-01-01T01:00:01Z',
            name: 'comma, "quote"\r\nnew line',
            value: -5,
            count: -7,
            ok: false,
            tags: 'text',
            duration: '-00:00:01',
            id: null,
          },
          {
            timestamp: '2026-01-01T01:00:02Z',
            name: '=HYPERLINK("http://x","y")',
            value: null,
            count: null,
            ok: null,
            tags: null,
            duration: null,
            id: null,
          },
        ])
      })

      it('corrected rows export their corrected values (through the corrections log)', async () => {
        const [editor, approver] = [await server.token('editor'), await server.token('approver')]
        const rows = await server.api('POST', '/oi-api/warm-queries', {
          token: editor,
          body: { Query: 'Sensors | where sensor == "s1" | project _rowid, value' },
        })
        const rowId = (rows.body.results as { _rowid: number }[])[0]!._rowid
        const correct = async (from: number, to: number) => {
          const created = await server.api('POST', '/oi-api/provenance/amendments', {
            token: editor,
            body: {
              ScopeKey: 'line-1',
              entityType: 'row:sensors',
              entityId: String(rowId),
              reasonCategory: 'recalculation',
              reason: `recalculated to ${to}`,
              before: { value: from },
              after: { value: to },
            },
          })
          assert.equal(created.status, 200, created.text)
          const approved = await server.api('POST', `/oi-api/provenance/amendments/${created.body.id}/approve?scopeKey=line-1`, {
            token: approver,
          })
          assert.equal(approved.body.status, 'applied', approved.text)
        }
        await correct(1, 1.75)
        const { text } = await exported('data-connections/sensors', { format: 'csv', ...WINDOW })
        assert.match(text, /\r\n2026-01-01T00:01:00Z,s1,1.75\r\n/)
        const surface = await exported('surfaces/plant', { format: 'jsonl', ...WINDOW })
        assert.equal(jsonLines(surface.text).find((r) => r['sensor'] === 's1')?.['value'], 1.75)
        await correct(1.75, 1)
      })
    })

    describe('download URLs (spec 2.5)', () => {
      it('expire 15 minutes after issue; work without a bearer token, repeatedly, with type and file name', async () => {
        const issuedAt = clock.now()
        const response = await post('data-connections/sensors', { format: 'csv', ...WINDOW })
        assert.equal(response.body.expiresAt, new Date(issuedAt + 15 * 60_000).toISOString())
        assert.ok(response.body.downloadUrl.startsWith(`${server.config.publicUrl}/oi-api/downloads/files/exp_`), response.body.downloadUrl)
        const first = await fetchFile(response.body.downloadUrl)
        const second = await fetchFile(response.body.downloadUrl)
        assert.equal(first.status, 200)
        assert.equal(first.headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
        assert.equal(
          first.headers.get('content-disposition'),
          'attachment; filename="sensors_20260101T000000Z_20260102T000000Z_page-1.csv"',
        )
        assert.equal(first.headers.get('cache-control'), 'private, no-store')
        assert.equal(await first.text(), await second.text())
        const jsonl = await post('surfaces/plant/connection/meters', { format: 'jsonl', ...WINDOW, page: 2 })
        const file = await fetchFile(jsonl.body.downloadUrl)
        assert.equal(file.headers.get('content-type'), 'application/x-ndjson; charset=utf-8')
        assert.equal(
          file.headers.get('content-disposition'),
          'attachment; filename="plant.meters_20260101T000000Z_20260102T000000Z_page-2.jsonl"',
        )
      })

      it('Range: partial content that resumes to the whole file; If-Range with another ETag sends it all; HEAD; 416 past the end', async () => {
        const { response, text } = await exported('data-connections/bulk', { format: 'csv', ...WINDOW_25001, pageSize: 5000 })
        const whole = Buffer.from(text)
        const head = await fetchFile(response.body.downloadUrl, { method: 'HEAD' })
        assert.equal(head.status, 200)
        assert.equal(head.headers.get('content-length'), String(whole.length))
        assert.equal(head.headers.get('accept-ranges'), 'bytes')
        const etag = head.headers.get('etag')!
        const part1 = await fetchFile(response.body.downloadUrl, { headers: { range: 'bytes=0-999' } })
        assert.equal(part1.status, 206)
        assert.equal(part1.headers.get('content-range'), `bytes 0-999/${whole.length}`)
        const bytes1 = Buffer.from(await part1.arrayBuffer())
        assert.equal(bytes1.length, 1000)
        const part2 = await fetchFile(response.body.downloadUrl, { headers: { range: 'bytes=1000-', 'if-range': etag } })
        assert.equal(part2.status, 206)
        assert.deepEqual(Buffer.concat([bytes1, Buffer.from(await part2.arrayBuffer())]), whole)
        const suffix = await fetchFile(response.body.downloadUrl, { headers: { range: 'bytes=-10' } })
        assert.deepEqual(Buffer.from(await suffix.arrayBuffer()), whole.subarray(whole.length - 10))
        const changed = await fetchFile(response.body.downloadUrl, { headers: { range: 'bytes=0-9', 'if-range': '"another"' } })
        assert.equal(changed.status, 200)
        assert.equal((await changed.arrayBuffer()).byteLength, whole.length)
        const beyond = await fetchFile(response.body.downloadUrl, { headers: { range: `bytes=${whole.length}-` } })
        assert.equal(beyond.status, 416)
        assert.equal(beyond.headers.get('content-range'), `bytes */${whole.length}`)
        assert.match(((await beyond.json()) as { Messages: { Error: string } }).Messages.Error, /outside the file/)
      })

      it('403 in the error envelope once expired (checked when the request starts: a running download finishes)', async () => {
        const { response } = await exported('data-connections/bulk', { format: 'jsonl', ...WINDOW_25001, pageSize: 5000 })
        const expiresAt = Date.parse(response.body.expiresAt)
        clock.set(expiresAt - 1)
        const running = await fetchFile(response.body.downloadUrl)
        assert.equal(running.status, 200)
        clock.set(expiresAt)
        const late = await server.api(
          'GET',
          new URL(local(response.body.downloadUrl)).pathname + new URL(response.body.downloadUrl).search,
          {},
        )
        assert.equal(late.status, 403)
        assert.match(errorMessage(late), /^this download link expired at .* \(links last 15 minutes\); export again for a new link$/)
        assert.equal(jsonLines(await running.text()).length, 5000, 'the download that started in time ran to its end')
      })

      it('403 in the error envelope for any altered part of the URL', async () => {
        const { response } = await exported('data-connections/sensors', { format: 'csv', ...WINDOW })
        const other = await post('data-connections/meters', { format: 'csv', ...WINDOW })
        const url = new URL(response.body.downloadUrl)
        const otherId = new URL(other.body.downloadUrl).pathname.split('/').pop()!
        const signature = url.searchParams.get('signature')!
        const expires = url.searchParams.get('expires')!
        const flipped = signature.slice(0, 10) + (signature[10] === 'A' ? 'B' : 'A') + signature.slice(11)
        const variants = [
          `${url.pathname}?expires=${expires}&signature=${flipped}`,
          `${url.pathname}?expires=${Number(expires) + 60_000}&signature=${signature}`,
          `${url.pathname}?expires=${expires}`,
          `${url.pathname}?signature=${signature}`,
          `${url.pathname}`,
          `/oi-api/downloads/files/${otherId}?expires=${expires}&signature=${signature}`,
          `${url.pathname}?expires=${expires}&signature=${signature}&signature=${signature}`,
        ]
        for (const variant of variants) {
          const altered = await fetch(`${server.baseUrl}${variant}`)
          assert.equal(altered.status, 403, variant)
          const body = (await altered.json()) as { HasError: boolean; Messages: { Error: string } }
          assert.deepEqual(body, {
            HasError: true,
            Messages: {
              Error: 'this download link is not valid: it was altered or not issued by this server; export again for a new link',
            },
          })
        }
        assert.equal((await fetchFile(response.body.downloadUrl)).status, 200, 'the unaltered URL still works')
      })

      it('the signature never reaches a log line', async () => {
        const { response } = await exported('data-connections/sensors', { format: 'csv', ...WINDOW })
        const url = new URL(response.body.downloadUrl)
        await fetch(`${server.baseUrl}${url.pathname}?expires=${url.searchParams.get('expires')}&signature=${'A'.repeat(43)}`)
        const signature = url.searchParams.get('signature')!
        const lines = server.logLines.join('\n')
        assert.ok(lines.includes(url.pathname), 'the download requests were logged (by path)')
        assert.ok(!lines.includes(signature), 'no log line holds a signature')
        assert.ok(!lines.includes('A'.repeat(43)))
        assert.ok(!lines.includes('signature='))
      })
    })

    describe('sweeper', () => {
      it("deletes expired files and their records after a minute's grace, and leaves live ones", async () => {
        const old = await post('data-connections/sensors', { format: 'csv', ...WINDOW })
        clock.advance(10 * 60_000)
        const young = await post('data-connections/sensors', { format: 'jsonl', ...WINDOW })
        const idOf = (r: ApiResponse) => new URL(r.body.downloadUrl).pathname.split('/').pop()!
        const pathOf = (id: string, ext: string) => join(server.config.exportDir, server.workspace.id, `${id}.${ext}`)
        assert.ok(existsSync(pathOf(idOf(old), 'csv')))
        clock.set(Date.parse(old.body.expiresAt) + 59_000)
        await server.services.exports.sweep()
        assert.ok(existsSync(pathOf(idOf(old), 'csv')), 'within the grace minute the file stays')
        clock.set(Date.parse(old.body.expiresAt) + 60_000)
        assert.ok((await server.services.exports.sweep()) >= 1)
        assert.ok(!existsSync(pathOf(idOf(old), 'csv')))
        assert.equal(await server.stores.exports.fileById(idOf(old)), undefined)
        assert.ok(existsSync(pathOf(idOf(young), 'jsonl')))
        assert.equal((await fetchFile(young.body.downloadUrl)).status, 200)
        assert.ok(!readdirSync(join(server.config.exportDir, server.workspace.id)).some((f) => f.endsWith('.part')))
      })

      it('deletes files a stopped process left without a record once they are an hour old, and nothing else', async () => {
        const folder = join(server.config.exportDir, server.workspace.id)
        const live = await post('data-connections/sensors', { format: 'csv', ...WINDOW })
        const liveFile = join(folder, `${new URL(live.body.downloadUrl).pathname.split('/').pop()!}.csv`)
        const hoursAgo = (hours: number) => (Date.now() - hours * 3_600_000) / 1000
        const stray = (name: string, ageHours: number) => {
          const path = join(folder, name)
          writeFileSync(path, 'left behind')
          utimesSync(path, hoursAgo(ageHours), hoursAgo(ageHours))
          return path
        }
        const oldPart = stray('exp_strayparta.csv.part', 2)
        const oldUnrecorded = stray('exp_strayfileb.jsonl', 2)
        const freshPart = stray('exp_straypartc.csv.part', 0)
        const notOurs = stray('notes.txt', 2)
        utimesSync(liveFile, hoursAgo(2), hoursAgo(2)) // recorded and unexpired: old mtime or not, it stays
        await server.services.exports.sweep()
        assert.ok(!existsSync(oldPart) && !existsSync(oldUnrecorded), 'old strays deleted')
        assert.ok(existsSync(freshPart), 'a part as young as a running export stays')
        assert.ok(existsSync(notOurs), 'files this storage did not name are left alone')
        assert.ok(existsSync(liveFile))
        assert.equal((await fetchFile(live.body.downloadUrl)).status, 200)
        rmSync(freshPart)
        rmSync(notOurs)
      })
    })

    describe('rights, scopes and the capability switch', () => {
      it('401 without a token; 403 without exports:create (viewer, or a token without the right)', async () => {
        const anonymous = await server.api('POST', '/oi-api/downloads/data-connections/sensors', { body: { format: 'csv', ...WINDOW } })
        assert.equal(anonymous.status, 401)
        for (const token of [await server.token('viewer'), await server.token('analyst', { rights: ['queries:run'] })]) {
          const response = await post('data-connections/sensors', { format: 'csv', ...WINDOW }, token)
          assert.equal(response.status, 403)
          assert.match(errorMessage(response), /lacks the right exports:create/)
        }
      })

      it("limited to the connections and surfaces the token's scopes allow", async () => {
        const meters = await server.token('analyst', { scopes: { connections: ['meters'] } })
        assert.equal((await post('data-connections/sensors', { format: 'csv', ...WINDOW }, meters)).status, 403)
        assert.equal((await post('surfaces/hall', { format: 'csv', ...WINDOW }, meters)).status, 403)
        assert.equal((await post('surfaces/plant/connection/sensors', { format: 'csv', ...WINDOW }, meters)).status, 403)
        const plant = await exported('surfaces/plant', { format: 'csv', ...WINDOW }, meters)
        assert.deepEqual(
          csvRecords(plant.text).map((r) => r['connection']),
          ['meters', 'meters', 'meters'],
          "only the allowed connection's rows",
        )
        const yard = await server.token('analyst', { scopes: { surfaces: ['yard'] } })
        assert.equal((await post('surfaces/hall', { format: 'csv', ...WINDOW }, yard)).status, 403)
        assert.equal((await post('surfaces/plant/connection/meters', { format: 'csv', ...WINDOW }, yard)).status, 403)
        assert.equal((await post('data-connections/sensors', { format: 'csv', ...WINDOW }, yard)).status, 403)
        assert.equal((await post('data-connections/meters', { format: 'csv', ...WINDOW }, yard)).status, 200)
        const ok = await post('surfaces/yard/connection/meters', { format: 'csv', ...WINDOW }, yard)
        assert.equal(ok.status, 200)
        assert.match(
          errorMessage(await post('surfaces/hall', { format: 'csv', ...WINDOW }, yard)),
          /restricted to other surfaces than "hall"/,
        )
      })

      it('the OpenAPI description lists the three operations for a token with exports:create only', async () => {
        const paths = (token: string) =>
          server
            .api('GET', '/oi-api/openapi', { token })
            .then((r) => Object.keys(r.body.paths).filter((p) => p.startsWith('/oi-api/downloads/')))
        assert.deepEqual((await paths(analyst)).sort(), [
          '/oi-api/downloads/data-connections/{lookup}',
          '/oi-api/downloads/surfaces/{surface}',
          '/oi-api/downloads/surfaces/{surface}/connection/{connection}',
        ])
        assert.deepEqual(await paths(await server.token('viewer')), [])
      })

      it('every export is recorded as a decision in the Platform-Config activity log: who, what, window and row counts', async () => {
        const response = await post('surfaces/plant', { format: 'jsonl', ...WINDOW, page: 2, pageSize: 3 })
        const log = await server.api('GET', '/oi-api/provenance/events/query?entityType=export&limit=1', {
          token: await server.token('admin'),
        })
        assert.equal(log.status, 200, log.text)
        const [record] = log.body.results
        assert.equal(record.ScopeKey, null, 'the workspace-level Platform-Config container')
        assert.deepEqual(
          [record.entityType, record.entityId, record.actionType, record.userId],
          ['export', new URL(response.body.downloadUrl).pathname.split('/').pop(), 'created', server.accounts.analyst.id],
        )
        const { tokenId, sizeBytes, sha256, actor, ...facts } = record.details
        assert.deepEqual(facts, {
          target: 'surface',
          surface: 'plant',
          connections: ['sensors', 'meters'],
          format: 'jsonl',
          from: FROM,
          to: TO,
          page: 2,
          pageSize: 3,
          pageCount: 3,
          rowCount: 3,
          totalRows: 7,
          truncated: false,
          expiresAt: response.body.expiresAt,
        })
        assert.deepEqual(actor, { name: server.accounts.analyst.name, via: 'api' })
        assert.equal(typeof tokenId, 'string')
        assert.ok(sizeBytes > 0)
        assert.match(sha256, /^[0-9a-f]{64}$/)
        assert.ok(!JSON.stringify(record).includes('signature='), 'never the download URL')
      })

      it('503 when exports are switched off, for new exports and for issued links', async () => {
        const issued = await post('data-connections/sensors', { format: 'csv', ...WINDOW })
        await applyAsAdmin(server, { ...CONFIG, settings: { capabilities: { exports: false } } })
        try {
          const response = await post('data-connections/sensors', { format: 'csv', ...WINDOW })
          assert.equal(response.status, 503)
          assert.match(errorMessage(response), /exports are switched off/)
          assert.equal((await fetchFile(issued.body.downloadUrl)).status, 503)
        } finally {
          await applyAsAdmin(server, CONFIG)
        }
        assert.equal((await fetchFile(issued.body.downloadUrl)).status, 200)
      })
    })
  })

  describe(`${backend}: the export sweeper runs at start`, () => {
    it('a restarted server deletes files that expired while it was down', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'provenant-sweep-'))
      const database: TestDatabase | undefined = backend === 'postgres' ? await createTestDatabase() : undefined
      const shared = { dataDir, ...(database ? { databaseUrl: database.url } : {}) }
      try {
        const clock = manualClock(Date.parse('2026-03-01T12:00:00Z'))
        const first = await startTestServer(backend, { clock, ...shared })
        await applyAsAdmin(first, CONFIG)
        await pushRows(first, 'sensors', SENSOR_ROWS)
        const response = await first.api('POST', '/oi-api/downloads/data-connections/sensors', {
          token: await first.token('analyst'),
          body: { format: 'csv', ...WINDOW },
        })
        assert.equal(response.status, 200, response.text)
        const id = new URL(response.body.downloadUrl).pathname.split('/').pop()!
        const file = join(first.config.exportDir, first.workspace.id, `${id}.csv`)
        await first.stop()
        assert.ok(existsSync(file))
        clock.set(Date.parse(response.body.expiresAt) + 60_000)
        const second = await startTestServer(backend, { clock, ...shared })
        try {
          const swept = async () => !existsSync(file) && (await second.stores.exports.fileById(id)) === undefined
          for (let i = 0; i < 100 && !(await swept()); i++) await new Promise((resolve) => setTimeout(resolve, 50))
          assert.ok(!existsSync(file), 'the start-up sweep deleted the expired file')
          assert.equal(await second.stores.exports.fileById(id), undefined)
        } finally {
          await second.stop()
        }
      } finally {
        await database?.drop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    })
  })

  describe(`${backend}: two processes sharing the database and the export directory`, () => {
    it('a link issued by one process is served by the other; the other refuses it altered', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'provenant-pair-'))
      const database: TestDatabase | undefined = backend === 'postgres' ? await createTestDatabase() : undefined
      const shared = { dataDir, ...(database ? { databaseUrl: database.url } : {}) }
      const first = await startTestServer(backend, shared)
      const second = await startTestServer(backend, shared)
      try {
        await applyAsAdmin(first, CONFIG)
        await pushRows(first, 'sensors', SENSOR_ROWS)
        const response = await first.api('POST', '/oi-api/downloads/data-connections/sensors', {
          token: await first.token('analyst'),
          body: { format: 'csv', ...WINDOW },
        })
        assert.equal(response.status, 200, response.text)
        const url = new URL(response.body.downloadUrl)
        const fromSecond = await fetch(`${second.baseUrl}${url.pathname}${url.search}`)
        assert.equal(fromSecond.status, 200)
        assert.match(await fromSecond.text(), /^timestamp,sensor,value\r\n2026-01-01T00:00:00Z,s0,0\r\n/)
        const altered = await fetch(
          `${second.baseUrl}${url.pathname}${url.search.replace(/expires=\d/, (m) => `expires=${(Number(m.at(-1)) + 1) % 10 || 1}`)}`,
        )
        assert.equal(altered.status, 403)
      } finally {
        await second.stop()
        await first.stop()
        await database?.drop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    })
  })
}
