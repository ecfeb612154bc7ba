import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { ConnectorSettingsError } from '../../domain/connectors/connector-supervisor.js'
import { mapRow, parsePostgresSettings, pollStatement, sourceTypes } from './postgres-connector.js'

describe('postgres connector: the query contract', () => {
  const settings = parsePostgresSettings({
    host: 'h',
    database: 'd',
    query: 'SELECT * FROM t; ',
    cursorColumn: 'updated_at',
    tiebreakColumn: 'id',
    batchSize: 50,
  })

  it('wraps the query, binds (cursor, tiebreak) and orders by both', () => {
    assert.equal(
      pollStatement(settings, false),
      'SELECT q.*, (q."updated_at")::text AS __provenant_cursor, (q."id")::text AS __provenant_tiebreak FROM (SELECT * FROM t) AS q ORDER BY q."updated_at", q."id" LIMIT 50',
    )
    assert.equal(
      pollStatement(settings, true),
      'SELECT q.*, (q."updated_at")::text AS __provenant_cursor, (q."id")::text AS __provenant_tiebreak FROM (SELECT * FROM t) AS q WHERE (q."updated_at", q."id") > ($1, $2) ORDER BY q."updated_at", q."id" LIMIT 50',
    )
  })

  it('uses the cursor alone without a tiebreak, and quotes identifiers', () => {
    const plain = parsePostgresSettings({ host: 'h', database: 'd', query: 'SELECT 1', cursorColumn: 'we"ird' })
    assert.equal(
      pollStatement(plain, true),
      'SELECT q.*, (q."we""ird")::text AS __provenant_cursor FROM (SELECT 1) AS q WHERE q."we""ird" > $1 ORDER BY q."we""ird" LIMIT 1000',
    )
  })

  it('refuses unusable settings naming the setting', () => {
    assert.throws(
      () => parsePostgresSettings({ query: 'SELECT 1' }),
      (e: Error) => e instanceof ConnectorSettingsError && /settings\.cursorColumn/.test(e.message),
    )
    assert.throws(() => parsePostgresSettings({ query: 'SELECT 1', cursorColumn: 'id', batchSize: 0 }), /settings\.batchSize/)
    assert.throws(() => parsePostgresSettings({ query: 'SELECT 1', cursorColumn: 'id', password: 'x' }), /settings/)
  })

  it('maps result columns to declared columns by name, ignoring case and extra columns', () => {
    const columns = [
      { name: 'timestamp', type: 'datetime' },
      { name: 'Sensor', type: 'string' },
      { name: 'n', type: 'long' },
    ] as const
    assert.deepEqual(
      mapRow(columns as never, { timestamp: '2026-01-01 00:00:00+00', sensor: 7, n: 3, extra: 'x', __provenant_cursor: 'c' }),
      { timestamp: '2026-01-01 00:00:00+00', Sensor: '7', n: 3 },
    )
  })
})

describe('postgres connector: source values', () => {
  it('keeps integers beyond 2^53 exact: int8 as digits, inside json and jsonb as exact longs (issue 17 item 1)', () => {
    assert.equal(sourceTypes.getTypeParser(20)('9007199254740993'), '9007199254740993')
    assert.equal(sourceTypes.getTypeParser(20)('42'), 42)
    for (const oid of [114, 3802]) {
      assert.deepEqual(sourceTypes.getTypeParser(oid)('{"id": 9007199254740993, "v": [-9223372036854775808, 1.5]}'), {
        id: 9007199254740993n,
        v: [-9223372036854775808n, 1.5],
      })
    }
    // a json value mapped to a string column keeps its digits (JSON.stringify throws on a bigint)
    const json = sourceTypes.getTypeParser(3802)('{"id": 9007199254740993}')
    assert.deepEqual(mapRow([{ name: 'doc', type: 'string' }], { doc: json }), { doc: '{"id":9007199254740993}' })
  })
})
