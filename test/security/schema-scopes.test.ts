/**
 * Issue 14 item 8, on both backends: a token limited to some connections learns nothing about other
 * connections' tables or columns through KQL metadata: `getschema`, unknown-table suggestions
 * ("did you mean"), `union *` and wildcard table names, fuzzy unions, and the compile-only check
 * (portal preview, MCP, proposals) all treat out-of-scope tables as nonexistent.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: schema metadata respects token scopes (issue 14 item 8)`, () => {
    let server: TestServer
    let metersOnly: string
    const adhoc = (query: string, token = metersOnly) => server.api('POST', '/oi-api/warm-queries', { token, body: { Query: query } })

    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(3))
      await pushRows(server, 'meters', [{ timestamp: '2026-01-01T00:00:00Z', kwh: 2.5 }])
      metersOnly = await server.token('analyst', { scopes: { connections: ['meters'] } })
    })
    after(() => server.stop())

    it('an out-of-scope table answers exactly as a table that does not exist', async () => {
      for (const [hidden, missing] of [
        ['Sensors | getschema', 'Nowhere | getschema'],
        ['Sensors | take 1', 'Nowhere | take 1'],
        ['Meters | join kind=inner Sensors on timestamp', 'Meters | join kind=inner Nowhere on timestamp'],
      ]) {
        const a = await adhoc(hidden!)
        const b = await adhoc(missing!)
        assert.equal(a.status, 400, a.text)
        assert.equal(errorMessage(a).replace(/Sensors/g, 'Nowhere'), errorMessage(b))
      }
    })

    it('never suggests an out-of-scope table or column', async () => {
      const typo = await adhoc('Sensor | count')
      assert.equal(typo.status, 400)
      assert.doesNotMatch(typo.text, /Sensors/)
      const everyone = await adhoc('Sensor | count', await server.token('analyst'))
      assert.match(errorMessage(everyone), /Sensors/, 'an unrestricted token gets the suggestion')
    })

    it('union * and wildcards reach only the tables in scope', async () => {
      const schema = await adhoc('union * | getschema | project ColumnName')
      assert.equal(schema.status, 200, schema.text)
      const columns = schema.body.results.map((r: { ColumnName: string }) => r.ColumnName)
      assert.ok(columns.includes('kwh'))
      for (const hidden of ['sensor', 'value']) assert.ok(!columns.includes(hidden), `${hidden} leaked: ${columns}`)
      const count = await adhoc('union withsource=T * | summarize n = count() by T')
      assert.deepEqual(count.body.results, [{ T: 'Meters', n: 1 }])
      const wildcard = await adhoc('union S*, M* | count')
      const nothing = await adhoc('union Q*, M* | count')
      assert.equal(wildcard.status, 400, 'S* matches no table this token can see')
      assert.equal(errorMessage(wildcard).replace("'S*'", "'Q*'"), errorMessage(nothing))
      const fuzzy = await adhoc('union isfuzzy=true Sensors, Meters | count')
      assert.deepEqual(fuzzy.body.results, [{ Count: 1 }])
    })

    it('search reaches only the tables in scope (issue 17 item 10)', async () => {
      const all = await adhoc('search * | summarize n = count() by $table')
      assert.equal(all.status, 200, all.text)
      assert.deepEqual(all.body.results, [{ $table: 'Meters', n: 1 }])
      const everyone = await adhoc('search * | summarize n = count() by $table | order by $table asc', await server.token('analyst'))
      assert.deepEqual(everyone.body.results, [
        { $table: 'Meters', n: 1 },
        { $table: 'Sensors', n: 3 },
      ])
      const named = await adhoc('search in (Sensors) "s1"')
      const missing = await adhoc('search in (Nowhere) "s1"')
      assert.equal(named.status, 400, named.text)
      assert.equal(errorMessage(named).replace(/Sensors/g, 'Nowhere'), errorMessage(missing))
    })

    it('the compile-only check (preview, MCP, proposals) sees the same filtered schema', async () => {
      const caller = await server.services.access.authenticate(`Bearer ${metersOnly}`)
      await assert.rejects(server.services.queries.check(caller, 'Sensors | getschema'), (e: Error) => !/may not read/.test(e.message))
      const checked = await server.services.queries.check(caller, 'union * | project-away timestamp')
      assert.deepEqual(
        checked.columns.map((c) => c.name),
        ['kwh'],
      )
    })
  })
}
