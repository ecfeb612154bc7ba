/**
 * Security review (docs/security.md §2): SQL injection through KQL and through every parameter.
 * KQL literals are bound parameters and identifiers are quoted (table names never reach SQL: a
 * connection's table is `data_<hash>`), so text that would break out of a SQL string, a LIKE
 * pattern, a GLOB or an identifier is only ever data: it matches exactly the rows that hold it.
 * Query parameters of every read route are bound the same way. Every table is compared before and
 * after (test/support/table-snapshot.ts), on both backends.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { openRawDatabase, type RawDatabase } from '../support/raw-database.js'
import { snapshotDifferences, snapshotTables, type TableSnapshot } from '../support/table-snapshot.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

/** Sensor names that are SQL, LIKE, GLOB and regex syntax. */
const NASTY = [
  "x' OR '1'='1",
  '100%',
  'a_b',
  'back\\slash',
  '"; DROP TABLE tokens; --',
  'GLOB*?[',
  "it''s",
  '$1',
  '?',
  'ünïcode',
  'x\u200by',
]

const INJECTIONS = [
  "' OR '1'='1",
  "' OR 1=1 --",
  '" OR ""="',
  "'; DROP TABLE tokens; --",
  '%',
  '_',
  '*',
  "\\' OR 1=1 --",
  '$1',
  '?',
  ') OR (1=1',
]

for (const backend of BACKENDS) {
  describe(`${backend}: SQL injection through KQL and parameters (security review)`, () => {
    let server: TestServer
    let db: RawDatabase
    let token: string
    let before0: TableSnapshot
    const query = async (text: string) => server.api('POST', '/oi-api/warm-queries', { token, body: { Query: text } })
    const count = async (text: string): Promise<number> => {
      const response = await query(`${text} | count`)
      assert.equal(response.status, 200, `${text}: ${response.text}`)
      return response.body.results[0].Count as number
    }
    const kqlString = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`

    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(9))
      await pushRows(
        server,
        'sensors',
        NASTY.map((sensor, i) => ({
          timestamp: new Date(Date.parse('2026-02-01T00:00:00Z') + i * 1000).toISOString(),
          sensor,
          value: 100 + i,
        })),
      )
      token = await server.token('admin')
      for (const key of ['seed', '../seed', "seed' OR '1'='1", 'seed%']) {
        const appended = await server.api('POST', `/oi-api/audit-logs/${encodeURIComponent(key)}/events`, {
          token,
          body: { entityType: 'batch', entityId: 'B-1', actionType: 'created' },
        })
        assert.equal(appended.status, 200, appended.text)
      }
      const correction = await server.api('POST', '/oi-api/provenance/amendments', {
        token,
        body: {
          ScopeKey: 'seed',
          entityType: 'lab-result',
          entityId: 'LR-1',
          reasonCategory: 'other',
          reason: 'probe',
          before: 1,
          after: 2,
        },
      })
      assert.equal(correction.status, 200, correction.text)
      db = await openRawDatabase(server)
      before0 = await snapshotTables(db)
    })
    after(async () => {
      await db.close()
      await server.stop()
    })

    it('string literals are data: each nasty value matches exactly its own row, injections match none', async () => {
      for (const name of NASTY) assert.equal(await count(`Sensors | where sensor == ${kqlString(name)}`), 1, name)
      for (const attempt of INJECTIONS) {
        assert.equal(await count(`Sensors | where sensor == ${kqlString(`s1${attempt}`)}`), 0, attempt)
        assert.equal(await count(`Sensors | where sensor in (${kqlString(`s1${attempt}`)}, 'none')`), 0, attempt)
      }
      assert.equal(await count('Sensors'), 9 + NASTY.length, 'the table is whole')
    })

    it('LIKE and GLOB wildcards in contains/startswith/endswith/has are literal characters', async () => {
      assert.equal(await count("Sensors | where sensor contains '%'"), 1)
      assert.equal(await count("Sensors | where sensor contains '_'"), 1)
      assert.equal(await count("Sensors | where sensor contains '*'"), 1)
      assert.equal(await count("Sensors | where sensor contains '?'"), 2)
      assert.equal(await count("Sensors | where sensor contains '['"), 1)
      assert.equal(await count("Sensors | where sensor contains '\\\\'"), 1)
      assert.equal(await count("Sensors | where sensor startswith '%'"), 0)
      assert.equal(await count("Sensors | where sensor endswith '%'"), 1)
      assert.equal(await count("Sensors | where sensor startswith '_'"), 0)
      assert.equal(await count("Sensors | where sensor has 'GLOB'"), 1, 'has matches whole terms')
      assert.equal(await count("Sensors | where sensor has 'GLO'"), 0, 'and only whole terms')
      assert.equal(await count("Sensors | where sensor !contains '%'"), 9 + NASTY.length - 1)
      assert.equal(await count('Sensors | where sensor matches regex "^x\'"'), 1)
    })

    it('identifiers with quotes, brackets and SQL are column names, never SQL', async () => {
      const weird = ['a"b', "c'd", 'e]f', 'x"; DROP TABLE tokens; --', 'select', 'FROM']
      const extend = weird.map((w, i) => `[${kqlString(w)}] = ${i}`).join(', ')
      const response = await query(`Sensors | take 1 | extend ${extend} | project ${weird.map((w) => `[${kqlString(w)}]`).join(', ')}`)
      assert.equal(response.status, 200, response.text)
      assert.deepEqual(
        response.body.columns.map((c: { name: string }) => c.name),
        weird,
      )
      assert.deepEqual(
        Object.values(response.body.results[0]),
        weird.map((_, i) => i),
      )
      const renamed = await query(`Sensors | where sensor == 's1' | summarize n = count() by [${kqlString('by"; --')}] = sensor`)
      assert.equal(renamed.status, 200, renamed.text)
      assert.deepEqual(renamed.body.results, [{ 'by"; --': 's1', n: 3 }])
    })

    it('table names never reach SQL: an injected name is an unknown table (400 with its position)', async () => {
      for (const table of [
        "['Sensors\"; DROP TABLE tokens; --']",
        "['Sensors'' OR 1=1']",
        "['data_0']",
        "['sqlite_master']",
        "['pg_catalog.pg_tables']",
        "['tokens']",
        "['workspaces']",
      ]) {
        const response = await query(`${table} | take 1`)
        assert.equal(response.status, 400, `${table}: ${response.text}`)
        assert.match(errorMessage(response), /^KQL error: line 1, column \d+: (unknown table|expected)/)
      }
      const union = await query("union Sensors, ['tokens'] | count")
      assert.equal(union.status, 400)
    })

    it('every read parameter is bound: injections match nothing, the honest value matches', async () => {
      const total = async (path: string) => {
        const response = await server.api('GET', path, { token })
        assert.equal(response.status, 200, `${path}: ${response.text}`)
        return response.body.totalCount as number
      }
      assert.ok((await total('/oi-api/provenance/events/query?scopeKey=seed&entityType=batch')) >= 1)
      assert.ok((await total('/oi-api/provenance/amendments?scopeKey=seed&entityId=LR-1')) >= 1)
      for (const attempt of INJECTIONS) {
        const q = encodeURIComponent(`batch${attempt}`)
        assert.equal(await total(`/oi-api/provenance/events/query?scopeKey=seed&entityType=${q}`), 0, attempt)
        assert.equal(await total(`/oi-api/provenance/events/query?scopeKey=seed&actionType=${q}&userId=${q}`), 0, attempt)
        assert.equal(await total(`/oi-api/audit-logs/seed/events/query?action=${q}`), 0, attempt)
        assert.equal(
          await total(`/oi-api/provenance/amendments?scopeKey=seed&entityId=${encodeURIComponent(`LR-1${attempt}`)}`),
          0,
          attempt,
        )
        assert.equal(await total(`/oi-api/provenance/amendments?scopeKey=${encodeURIComponent(`seed${attempt}`)}`), 0, attempt)
        assert.equal(await total(`/oi-api/amendment-logs/seed/amendments/query?amendedBy=${q}`), 0, attempt)
        for (const path of [
          `/oi-api/warm-queries/${encodeURIComponent(`avg-by-sensor${attempt}`)}`,
          `/oi-api/provenance/amendments/${encodeURIComponent(`amd_x${attempt}`)}?scopeKey=seed`,
        ]) {
          const response = await server.api('GET', path, { token, unchecked: true })
          assert.ok([400, 404].includes(response.status), `${path}: ${response.status}`)
        }
        for (const path of [
          `/oi-api/provenance/events/query?limit=${q}`,
          `/oi-api/provenance/events/query?startDate=${q}`,
          `/oi-api/provenance/proofs/inclusion?scopeKey=seed&RecordID=${q}`,
        ]) {
          assert.equal((await server.api('GET', path, { token, unchecked: true })).status, 400, path)
        }
      }
    })

    it('RecordIDs are exactly 12 digits: traversal and SQL in a RecordID are 400s before any look-up', async () => {
      for (const recordId of [
        '../000000000001',
        '000000000001/..',
        '%2e%2e%2f000000000001',
        "000000000001' OR '1'='1",
        '000000000001;--',
        '00000000000１',
        ' 000000000001',
        '0x0000000001',
      ]) {
        const verify = await server.api('POST', '/oi-api/provenance/events/verify', {
          token,
          body: { ScopeKey: 'seed', RecordID: recordId },
        })
        assert.equal(verify.status, 400, `verify ${recordId}: ${verify.text}`)
        const proof = await server.api(
          'GET',
          `/oi-api/provenance/proofs/inclusion?scopeKey=seed&RecordID=${encodeURIComponent(recordId)}`,
          { token },
        )
        assert.equal(proof.status, 400, `inclusion ${recordId}: ${proof.text}`)
      }
      const honest = await server.api('POST', '/oi-api/provenance/events/verify', {
        token,
        body: { ScopeKey: 'seed', RecordID: '000000000001' },
      })
      assert.equal(honest.body.Valid, true, honest.text)
    })

    it('a ScopeKey that looks like a path or SQL is a name of its own: it reaches no other chain', async () => {
      // (The correction made in `seed` adds its own record there; only the appended events are counted.)
      const events = async (key: string) =>
        (await server.api('GET', `/oi-api/audit-logs/${encodeURIComponent(key)}/events/query?action=created`, { token })).body.results as {
          lookup: string
        }[]
      for (const key of ['seed', '../seed', "seed' OR '1'='1", 'seed%']) {
        const records = await events(key)
        assert.equal(records.length, 1, key)
        assert.equal(records[0]!.lookup, key)
      }
      const verdict = await server.api('POST', '/oi-api/provenance/events/verify', { token, body: { ScopeKey: '../seed' } })
      assert.equal(verdict.body.ChainValid, true)
    })

    it('after all of it, every table holds what it held before', async () => {
      assert.deepEqual(snapshotDifferences(before0, await snapshotTables(db)), [])
    })
  })
}
