/**
 * Pull connector `postgres` (issue 6, item 2) against a real source PostgreSQL database: rows
 * inserted in a source table reach KQL queries once each, including rows inserted while the server
 * is stopped, across a restart on the same data directory / database; a connector pointed at a
 * dead port backs off, shows the error, and its failure is recorded once in the activity log.
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { platformContainer } from '../../../src/domain/ledger/ledger-service.js'
import { BACKENDS, createTestDatabase, type TestDatabase } from '../../support/backends.js'
import { runCli } from '../../support/cli.js'
import { eventually } from '../../support/eventually.js'
import { applyAsAdmin } from '../../support/fixtures.js'
import { connectLive } from '../../support/live-client.js'
import { type StartOptions, startTestServer, type TestServer } from '../../support/test-server.js'

const FAST = { backoff: { initialMs: 200, maxMs: 1000 }, leaseRetryMs: 200 } as const

function plantConfig(database: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    connections: [
      {
        lookup: 'plant',
        kind: 'postgres',
        table: 'Plant',
        columns: [
          { name: 'timestamp', type: 'datetime' },
          { name: 'source_id', type: 'long' },
          { name: 'sensor', type: 'string' },
          { name: 'value', type: 'real' },
        ],
        settings: {
          host: '127.0.0.1',
          port: 5432,
          database,
          user: 'postgres',
          query: 'SELECT id AS source_id, updated_at AS "timestamp", sensor, value FROM readings WHERE sensor <> \'ignored\'',
          cursorColumn: 'timestamp',
          tiebreakColumn: 'source_id',
          intervalSeconds: 0.1,
          batchSize: 2,
          ...overrides,
        },
      },
    ],
  }
}

async function decisions(server: TestServer, actionType: string): Promise<Record<string, unknown>[]> {
  const { records } = await server.services.ledger.query(
    platformContainer(server.workspace.id),
    { entityType: 'data-connection' },
    { limit: 1000, offset: 0, order: 'asc' },
  )
  return records.filter((r) => r.actionType === actionType && r.entityId === 'plant').map((r) => r.details as Record<string, unknown>)
}

async function sourceIds(server: TestServer): Promise<number[]> {
  const response = await server.api('POST', '/oi-api/warm-queries', {
    token: await server.token('analyst'),
    body: { Query: 'Plant | project source_id | order by source_id asc' },
  })
  assert.equal(response.status, 200, response.text)
  return (response.body.results as { source_id: number }[]).map((r) => r.source_id)
}

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i)

for (const backend of BACKENDS) {
  describe(`${backend}: postgres pull connector`, () => {
    let source: TestDatabase
    let sourceName: string
    let client: pg.Client

    async function insert(count: number, at: string): Promise<void> {
      // Several rows share one updated_at: the tiebreak column keeps each exactly once.
      for (let i = 0; i < count; i++)
        await client.query('INSERT INTO readings (updated_at, sensor, value) VALUES ($1, $2, $3)', [at, `s${i % 2}`, i])
    }

    before(async () => {
      source = await createTestDatabase()
      sourceName = new URL(source.url).pathname.slice(1)
      client = new pg.Client({ connectionString: source.url })
      await client.connect()
      await client.query(
        'CREATE TABLE readings (id bigserial PRIMARY KEY, updated_at timestamptz NOT NULL, sensor text NOT NULL, value double precision)',
      )
    })
    after(async () => {
      await client.end()
      await source.drop()
    })

    it('ingests each source row once, including rows inserted while the server was stopped, across a restart', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'provenant-conn-'))
      const database = backend === 'postgres' ? await createTestDatabase() : undefined
      const options: StartOptions = { dataDir, connectors: FAST, ...(database ? { databaseUrl: database.url } : {}) }
      try {
        await insert(3, '2026-01-01T00:00:00.123456Z')
        let server = await startTestServer(backend, options)
        await applyAsAdmin(server, plantConfig(sourceName))
        assert.deepEqual(
          await eventually(
            () => sourceIds(server),
            (ids) => ids.length >= 3,
            'the first rows',
          ),
          [1, 2, 3],
        )

        await insert(2, '2026-01-01T00:00:00.123456Z') // same timestamp as the cursor: only the tiebreak tells them apart
        await insert(1, '2026-01-01T00:05:00Z')
        await client.query("INSERT INTO readings (updated_at, sensor, value) VALUES ('2026-01-01T00:06:00Z', 'ignored', 0)")
        assert.deepEqual(
          await eventually(
            () => sourceIds(server),
            (ids) => ids.length >= 6,
            'the new rows',
          ),
          range(1, 6),
        )
        const status = (await server.services.connectors.status(server.workspace.id))[0]!
        assert.equal(status.state, 'running')
        assert.equal(status.lookup, 'plant')
        assert.equal(status.kind, 'postgres')
        assert.equal(status.lastError, undefined)
        assert.equal(status.rowsIngested, 6)
        assert.deepEqual(JSON.parse(status.cursor!), { value: '2026-01-01 00:05:00+00', tiebreak: '6' })
        await server.stop()

        await insert(3, '2026-01-01T00:07:00Z') // while the server is down
        server = await startTestServer(backend, options)
        // A live-stream client from the first row on: stored rows are replayed, then new ones arrive live.
        const live = await connectLive(server.baseUrl, { token: await server.token('viewer'), query: 'connection=plant&since=0' })
        try {
          assert.deepEqual(
            await eventually(
              () => sourceIds(server),
              (ids) => ids.length >= 9,
              'the rows inserted while stopped',
            ),
            [...range(1, 6), ...range(8, 10)],
          )
          await insert(1, '2026-01-01T00:08:00Z') // while a live client watches
          const events = await live.waitFor(10)
          // Once each on the live stream, across the restart, in order.
          assert.deepEqual(
            events.map((e) => e.data['source_id']),
            [...range(1, 6), ...range(8, 11)],
          )
          assert.ok(events.every((e) => e.connection === 'plant'))
          // Several more polls find nothing new: every row stays stored once.
          const polled = (await server.services.connectors.status(server.workspace.id))[0]!.lastSuccessAt!
          await eventually(
            async () => (await server.services.connectors.status(server.workspace.id))[0]!.lastSuccessAt!,
            (at) => at > polled + 300,
            'more polls',
          )
          assert.deepEqual(await sourceIds(server), [...range(1, 6), ...range(8, 11)])
          assert.equal((await server.services.connectors.status(server.workspace.id))[0]!.rowsIngested, 10)
          assert.equal((await decisions(server, 'connector-failed')).length, 0)
          assert.equal(live.events.length, 10, 'no row twice on the live stream')
        } finally {
          live.close()
          await server.stop()
        }
      } finally {
        await database?.drop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    })

    if (backend === 'postgres') {
      it("runs a connector in one process only; another takes over when the holder's session dies", async () => {
        const database = await createTestDatabase()
        const admin = new pg.Client({ connectionString: database.url })
        await admin.connect()
        const leaseSessions = async () =>
          (
            await admin.query<{ pid: number }>(
              "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND a.application_name = 'provenant-connector-lease' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
            )
          ).rows.map((r) => r.pid)
        const first = await startTestServer(backend, { databaseUrl: database.url, connectors: FAST })
        const second = await startTestServer(backend, { databaseUrl: database.url, connectors: FAST })
        try {
          await client.query('TRUNCATE readings RESTART IDENTITY')
          await insert(4, '2026-02-01T00:00:00Z')
          await applyAsAdmin(first, plantConfig(sourceName))
          assert.deepEqual(
            await eventually(
              () => sourceIds(second),
              (ids) => ids.length >= 4,
              'the rows',
            ),
            [1, 2, 3, 4],
          )
          const holders = await leaseSessions()
          assert.equal(holders.length, 1, 'exactly one process holds the connector')

          // 1. the holder's database session dies (as when its process is killed)
          await admin.query('SELECT pg_terminate_backend($1)', [holders[0]])
          await insert(3, '2026-02-01T00:01:00Z')
          // 2. a process takes the connector over and carries on from the stored cursor
          assert.deepEqual(
            await eventually(
              () => sourceIds(first),
              (ids) => ids.length >= 7,
              'the takeover',
            ),
            range(1, 7),
          )
          const after = await eventually(leaseSessions, (pids) => pids.length === 1 && pids[0] !== holders[0], 'a new lease holder')
          assert.equal(after.length, 1)
          assert.deepEqual(await sourceIds(first), range(1, 7), 'no row stored twice')
        } finally {
          await first.stop()
          await second.stop()
          await admin.end()
          await database.drop()
        }
      })
    }

    it('backs off from a dead port, shows the error, and records the failure once; recovers when fixed', async () => {
      const server = await startTestServer(backend, { connectors: FAST })
      try {
        await applyAsAdmin(server, plantConfig(sourceName, { port: 1 }))
        const failing = await eventually(
          () => server.services.connectors.status(server.workspace.id),
          (s) => s[0]?.state === 'backoff',
          'the backoff state',
        )
        assert.match(failing[0]!.lastError!, /ECONNREFUSED|connect/i)
        const firstAt = failing[0]!.lastErrorAt!
        // A later retry fails again (lastErrorAt moves) but is not recorded again.
        await eventually(
          () => server.services.connectors.status(server.workspace.id),
          (s) => (s[0]?.lastErrorAt ?? 0) > firstAt,
          'a second failed attempt',
        )
        const failed = await decisions(server, 'connector-failed')
        assert.equal(failed.length, 1)
        assert.equal(failed[0]!['kind'], 'postgres')
        assert.equal(failed[0]!['retrying'], true)
        assert.match(String(failed[0]!['error']), /ECONNREFUSED|connect/i)

        // Admins see it on the command line, from the same database.
        const store = server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : ['--data', server.config.dataDir]
        const cli = await runCli(['connection', 'status', '--workspace', server.workspace.name, ...store])
        assert.equal(cli.code, 0, cli.stderr)
        const line = cli.stdout.split('\n').find((l) => l.startsWith('plant '))
        assert.ok(line, cli.stdout)
        assert.match(line, /^plant\s+postgres\s+backoff\s.*ECONNREFUSED/)

        // Credentials from the vault: a connection string wins over host, port and database.
        const secret = `pw-${Math.random().toString(36).slice(2)}-unique`
        const url = new URL(source.url)
        url.password = secret
        const admin = server.accounts.admin
        await server.services.credentials.set({ id: admin.id, name: admin.name, via: 'cli' }, server.workspace.id, 'plant', {
          connectionString: url.toString(),
        })
        const running = await eventually(
          () => server.services.connectors.status(server.workspace.id),
          (s) => s[0]?.state === 'running',
          'recovery',
        )
        assert.equal(running[0]!.lastError, undefined)
        assert.equal((await decisions(server, 'connector-recovered')).length, 1)
        const { records } = await server.services.ledger.query(
          platformContainer(server.workspace.id),
          {},
          { limit: 1000, offset: 0, order: 'asc' },
        )
        const everything = [JSON.stringify(records.map((r) => r.details)), JSON.stringify(running), ...server.logLines]
        assert.equal(everything.filter((text) => text.includes(secret)).length, 0)
      } finally {
        await server.stop()
      }
    })

    it('fails without retrying when the settings cannot work, naming the setting', async () => {
      const server = await startTestServer(backend, { connectors: FAST })
      try {
        await applyAsAdmin(server, plantConfig(sourceName, { cursorColumn: undefined }))
        const status = await eventually(
          () => server.services.connectors.status(server.workspace.id),
          (s) => s[0]?.state === 'failed',
          'the failed state',
        )
        assert.match(status[0]!.lastError!, /settings\.cursorColumn/)
        const failed = await decisions(server, 'connector-failed')
        assert.equal(failed.length, 1)
        assert.equal(failed[0]!['retrying'], false)
      } finally {
        await server.stop()
      }
    })
  })
}
