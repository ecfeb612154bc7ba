/**
 * Issue 15 (query governance), on both backends: hostile queries, as any token with queries:run
 * could send them, each end with an answer or a 400/503 within the (small) time cap, and meanwhile
 * another client's /healthz and a dashboard's warm query keep answering. Fair sharing (per-account
 * limit, bounded queue, 503 when full), cancellation (AbortSignal and a disconnecting HTTP client)
 * and the fail-fast limits are checked here too. Latencies are measured by `npm run bench`
 * (bench/scenarios/hostile-queries.ts), never asserted.
 */
import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { BACKENDS } from '../support/backends.js'
import { eventually } from '../support/eventually.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const A31 = 'a'.repeat(31)
const LETS = Array.from({ length: 40 }, (_, i) => `let t${i + 1} = union t${i}, t${i};`).join('\n')
const GREEDY = 'range x from 1 to 1000000 step 1 | extend a = range(x, x + 2000, 1) | summarize n = sum(array_length(a))'
const HEAVY = 'print x = array_length(series_fir(range(1, 1000000, 1), range(1, 10000, 1)))'

/** [name, query, expected status, message pattern for a 400] */
const HOSTILE: readonly (readonly [string, string, number, RegExp?])[] = [
  ['matches regex', `print r = "${A31}!" matches regex "^(a+)+$"`, 200],
  ['matches regex over rows', `Sensors | extend s = strcat(strrep("a", 40), "!") | where s matches regex "^(a|aa)+$" | count`, 200],
  ['extract', `Sensors | project x = extract("^(a+)+$", 1, strcat(strrep("a", 40), "!")) | take 1`, 200],
  ['extract_all', `print x = extract_all("((a+)+b)", "${A31}${A31}!")`, 200],
  ['replace_regex', `print x = replace_regex("${A31}!", "^(a|aa)+$", "x")`, 200],
  ['countof', `print x = countof("${A31}!", "(a+)+$", "regex")`, 200],
  ['indexof_regex', `print x = indexof_regex("${A31}!", "(a+)+$")`, 200],
  ['trim', `print x = trim("(a+)+b", "${A31}!")`, 200],
  ['parse kind=regex', `print s = "${A31}!" | parse kind=regex s with "(a+)+" x:string "$"`, 200],
  ['parse simple', `print s = "${'a-'.repeat(2000)}" | parse s with * "-" a "-" b "-" c "-" d "=" e`, 200],
  ['parse-kv regex', `print s = "${A31}!" | parse-kv s as (k: string) with (regex="(a+)+(b)=(c)")`, 200],
  ['like', `print r = "${'a'.repeat(3000)}" like "%a%a%a%a%a%a%a%a%a%b"`, 200],
  ['nested dynamic literal', `print x = dynamic(${'['.repeat(4000)}${']'.repeat(4000)})`, 400, /nested more than 256 levels/],
  ['nested expression', `print x = ${'('.repeat(4000)}1${')'.repeat(4000)}`, 400, /nested more than 256 levels/],
  ['union explosion', `let t0 = print x = 1;\n${LETS}\nt40 | count`, 400, /plan-size limit is 10,000/],
  [
    'cross join',
    'range x from 1 to 5000 step 1 | extend k = 1 | join kind=inner (range y from 1 to 5000 step 1 | extend k = 1) on k | count',
    400,
    /join would produce more than 5,000,000 rows/,
  ],
  ['range operator', 'range x from 1 to 10000000000 step 1 | count', 400, /more than 5,000,000 rows/],
  [
    'mv-expand blow-up',
    'range x from 1 to 200 step 1 | extend a = range(1, 1000000, 1) | mv-expand a | count',
    400,
    /mv-expand would produce more than 5,000,000 rows/,
  ],
  ['series function on a huge range', HEAVY, 400, /time cap/],
]

for (const backend of BACKENDS) {
  describe(`${backend}: hostile queries never stall the server (issue 15)`, () => {
    let server: TestServer
    let analyst: string
    let dashboard: string
    let analystAgain: string
    const adhoc = (query: string, token = analyst) =>
      server.api('POST', '/oi-api/warm-queries', { token, body: { Query: query }, unchecked: true })

    before(async () => {
      server = await startTestServer(backend, {
        config: { queryCapacity: { workers: 2, perCaller: 1, queueLimit: 8, perCallerQueue: 2, memoryMb: 256 } },
      })
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 120 } } }))
      await pushRows(server, 'sensors', sensorRows(60))
      analyst = await server.token('analyst')
      analystAgain = await server.token('analyst')
      dashboard = await server.token('viewer')
      // the workers start from TypeScript source in tests (slow on a busy machine): wait for them
      // under a generous cap before the 3 s cap the hostile queries get
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 120 } } }))
      const ready = await Promise.all([adhoc('print 0'), server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: dashboard })])
      assert.deepEqual(
        ready.map((r) => r.status),
        [200, 200],
      )
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 3 } } }))
    })
    after(() => server.stop())

    it('each hostile query ends with an answer or a 400 naming the limit, while /healthz and a warm query keep answering', async () => {
      let probing = true
      const probes: { healthz: number[]; warm: number[] } = { healthz: [], warm: [] }
      const prober = (async () => {
        while (probing) {
          probes.healthz.push((await server.api('GET', '/healthz', { unchecked: true })).status)
          probes.warm.push((await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: dashboard })).status)
        }
      })()
      try {
        for (const [name, query, status, message] of HOSTILE) {
          const response = await adhoc(query)
          assert.equal(response.status, status, `${name}: ${response.text.slice(0, 300)}`)
          if (message) assert.match(errorMessage(response), message, name)
        }
      } finally {
        probing = false
        await prober
      }
      assert.ok(probes.healthz.length > 0 && probes.warm.length > 0)
      assert.deepEqual(new Set(probes.healthz), new Set([200]))
      assert.deepEqual(new Set(probes.warm), new Set([200]), 'the dashboard account always had a worker')
    })

    it('one account cannot take every worker: its extra queries wait (queue time counts against the cap) or get a 503', async () => {
      const sent = [1, 2, 3, 4, 5].map(() => adhoc(HEAVY))
      await new Promise((resolve) => setTimeout(resolve, 200))
      // the other account still has a worker while this one's five queries are in
      const warm = await server.api('GET', '/oi-api/warm-queries/avg-by-sensor', { token: dashboard })
      const burst = await Promise.all(sent)
      const statuses = burst.map((r) => r.status).sort()
      assert.deepEqual(statuses, [400, 400, 400, 503, 503], burst.map((r) => r.text).join('\n'))
      for (const busy of burst.filter((r) => r.status === 503)) assert.match(errorMessage(busy), /query capacity .* busy.*retry/)
      const waited = burst.filter((r) => r.status === 400 && /waiting for query capacity/.test(errorMessage(r)))
      assert.ok(waited.length >= 1, 'a query that waited its whole cap says so')
      assert.equal(warm.status, 200)
    })

    it('a query past the memory budget stops with a 400 naming it; the server stays up', async () => {
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 60 } } }))
      try {
        const response = await adhoc(GREEDY)
        assert.equal(response.status, 400, response.text)
        assert.match(errorMessage(response), /needed more than the 256 MB query memory budget/)
        assert.equal((await adhoc('print 1')).status, 200)
      } finally {
        await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 3 } } }))
      }
    })

    it('a cancelled query also stops in the database: its PostgreSQL statement is cancelled', {
      skip: backend !== 'postgres' && 'PostgreSQL only: a SQLite statement runs inside the worker, which is stopped instead',
    }, async () => {
      await pushRows(
        server,
        'meters',
        Array.from({ length: 3000 }, (_, i) => ({ timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), kwh: i })),
      )
      const activeStatements = async (): Promise<number> => {
        const client = new pg.Client({ connectionString: server.config.databaseUrl! })
        await client.connect()
        try {
          const result = await client.query(
            "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'provenant-query' AND state = 'active'",
          )
          return result.rows[0].n as number
        } finally {
          await client.end()
        }
      }
      // the cap (and so statement_timeout) is a minute: only the cancellation can end the statement sooner
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 60 } } }))
      try {
        const caller = await server.services.access.authenticate(`Bearer ${analystAgain}`)
        const controller = new AbortController()
        // a three-way cross join PostgreSQL answers by itself (pushed down), for far longer than a minute
        const k = 'extend k = 1'
        const running = server.services.queries.runAdhoc(
          caller,
          `Meters | ${k} | join kind=inner (Meters | ${k}) on k | join kind=inner (Meters | ${k}) on k | count`,
          { signal: controller.signal },
        )
        running.catch(() => {})
        await eventually(activeStatements, (n) => n > 0, 'the statement runs in PostgreSQL', 30_000)
        controller.abort()
        await assert.rejects(running, /cancelled/)
        // well before the 61 s statement_timeout (a busy machine can take seconds to open the cancelling session)
        await eventually(activeStatements, (n) => n === 0, 'the statement was cancelled', 45_000)
      } finally {
        await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 3 } } }))
      }
    })

    it('an aborted query stops on the server: the account can run again at once', async () => {
      await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 30 } } }))
      try {
        const caller = await server.services.access.authenticate(`Bearer ${analystAgain}`)
        const controller = new AbortController()
        const running = server.services.queries.runAdhoc(caller, HEAVY, { signal: controller.signal })
        await new Promise((resolve) => setTimeout(resolve, 300))
        controller.abort()
        await assert.rejects(running, /cancelled/)
        // with one query per account, this would wait behind the heavy one for its 30 s cap and fail
        const next = await adhoc('print 1', analystAgain)
        assert.equal(next.status, 200, next.text)

        // the same through HTTP: the client goes away, the query stops
        await new Promise<void>((resolve) => {
          const url = new URL('/oi-api/warm-queries', server.baseUrl)
          const req = request(url, {
            method: 'POST',
            headers: { authorization: `Bearer ${analystAgain}`, 'content-type': 'application/json' },
          })
          req.on('error', () => resolve())
          req.end(JSON.stringify({ Query: HEAVY }))
          setTimeout(() => {
            req.destroy()
            resolve()
          }, 300)
        })
        const after = await adhoc('print 2', analystAgain)
        assert.equal(after.status, 200, after.text)
      } finally {
        await applyAsAdmin(server, sensorConfig({ settings: { queries: { rowCap: 1000, timeoutSeconds: 3 } } }))
      }
    })
  })
}
