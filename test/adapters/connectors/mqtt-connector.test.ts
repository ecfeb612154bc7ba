/**
 * Pull connector `mqtt` (issue 6, item 2) against a real Mosquitto started by the test: JSON
 * payloads become rows (topic and arrival time in their columns), unfit payloads are counted and
 * recorded without stopping the connector, and messages published while the server is down arrive
 * once each after a restart (QoS 1, persistent session, PUBACK after commit).
 */
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import mqtt from 'mqtt'
import { defaultClientId, messageDigest } from '../../../src/adapters/connectors/mqtt-connector.js'
import { platformContainer } from '../../../src/domain/ledger/ledger-service.js'
import { BACKENDS, createTestDatabase } from '../../support/backends.js'
import { eventually } from '../../support/eventually.js'
import { applyAsAdmin } from '../../support/fixtures.js'
import { connectLive } from '../../support/live-client.js'
import { startMosquitto, type TestBroker } from '../../support/mosquitto.js'
import { type StartOptions, startTestServer, type TestServer } from '../../support/test-server.js'

const FAST = { backoff: { initialMs: 200, maxMs: 1000 }, leaseRetryMs: 200 } as const

function lineConfig(url: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    connections: [
      {
        lookup: 'line',
        kind: 'mqtt',
        table: 'Line',
        columns: [
          { name: 'timestamp', type: 'datetime' },
          { name: 'seq', type: 'long' },
          { name: 'temp', type: 'real' },
          { name: 'topic', type: 'string' },
        ],
        settings: { url, topics: ['plant/+/temp'], topicColumn: 'topic', timeColumn: 'timestamp', ...overrides },
      },
    ],
  }
}

async function publish(url: string, messages: readonly { topic: string; payload: string }[]): Promise<void> {
  const client = await mqtt.connectAsync(url, { clientId: `test-publisher-${Math.random().toString(16).slice(2)}` })
  try {
    for (const m of messages) await client.publishAsync(m.topic, m.payload, { qos: 1 })
  } finally {
    await client.endAsync()
  }
}

const reading = (seq: number, device = 'd1') => ({
  topic: `plant/${device}/temp`,
  payload: JSON.stringify({ seq, temp: 20 + seq / 10, extra: 'ignored' }),
})

async function rows(server: TestServer): Promise<{ seq: number; topic: string }[]> {
  const response = await server.api('POST', '/oi-api/warm-queries', {
    token: await server.token('analyst'),
    body: { Query: 'Line | project seq, topic | order by seq asc' },
  })
  assert.equal(response.status, 200, response.text)
  return response.body.results
}

async function status(server: TestServer) {
  return (await server.services.connectors.status(server.workspace.id))[0]
}

for (const backend of BACKENDS) {
  describe(`${backend}: mqtt pull connector`, () => {
    let broker: TestBroker
    before(async () => {
      broker = await startMosquitto()
    })
    after(() => broker.stop())

    it('turns JSON payloads into rows and delivers messages published while stopped once each after a restart', async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'provenant-conn-'))
      const database = backend === 'postgres' ? await createTestDatabase() : undefined
      const options: StartOptions = { dataDir, connectors: FAST, ...(database ? { databaseUrl: database.url } : {}) }
      try {
        let server = await startTestServer(backend, options)
        await applyAsAdmin(server, lineConfig(broker.url))
        await eventually(
          () => status(server),
          (s) => s?.state === 'running',
          'the subscription',
        )
        await publish(broker.url, [
          reading(1),
          reading(2, 'd2'),
          { topic: 'plant/d1/temp', payload: 'not json' },
          {
            topic: 'plant/d1/temp',
            payload: JSON.stringify([
              { seq: 3, temp: 1 },
              { seq: 4, temp: 2 },
            ]),
          },
          { topic: 'other/topic', payload: JSON.stringify({ seq: 99 }) },
        ])
        const first = await eventually(
          () => rows(server),
          (r) => r.length >= 4,
          'the first messages',
        )
        assert.deepEqual(first, [
          { seq: 1, topic: 'plant/d1/temp' },
          { seq: 2, topic: 'plant/d2/temp' },
          { seq: 3, topic: 'plant/d1/temp' },
          { seq: 4, topic: 'plant/d1/temp' },
        ])
        const counted = await eventually(
          () => status(server),
          (s) => s?.rowsRejected === 1,
          'the rejected payload counted',
        )
        assert.equal(counted!.rowsIngested, 4)
        assert.equal(counted!.state, 'running')
        const { records } = await server.services.ledger.query(
          platformContainer(server.workspace.id),
          { entityType: 'data-connection' },
          { limit: 1000, offset: 0, order: 'asc' },
        )
        const rejected = records.filter((r) => r.actionType === 'rows-rejected')
        assert.equal(rejected.length, 1)
        assert.deepEqual((rejected[0]!.details as { samples: string[] }).samples, ['message on plant/d1/temp: the payload is not JSON'])
        await server.stop()

        await publish(broker.url, [reading(5), reading(6), reading(7, 'd3')]) // while the server is down
        server = await startTestServer(backend, options)
        // A live-stream client from the first row on: stored rows are replayed, then new ones arrive live.
        const live = await connectLive(server.baseUrl, { token: await server.token('viewer'), query: 'connection=line&since=0' })
        try {
          const seqs = (r: { seq: number }[]) => r.map((x) => x.seq)
          assert.deepEqual(
            seqs(
              await eventually(
                () => rows(server),
                (r) => r.length >= 7,
                'the messages published while stopped',
              ),
            ),
            [1, 2, 3, 4, 5, 6, 7],
          )
          await publish(broker.url, [reading(8)])
          assert.deepEqual(
            seqs(
              await eventually(
                () => rows(server),
                (r) => r.length >= 8,
                'a live message after the restart',
              ),
            ),
            [1, 2, 3, 4, 5, 6, 7, 8],
          )
          assert.equal((await status(server))!.rowsIngested, 8)
          // Once each on the live stream too, across the restart, in order.
          const events = await live.waitFor(8)
          assert.deepEqual(
            events.map((e) => [e.connection, e.data['seq']]),
            [1, 2, 3, 4, 5, 6, 7, 8].map((n) => ['line', n]),
          )
        } finally {
          live.close()
          await server.stop()
        }
        // Every committed message was acknowledged: resuming the connector's session delivers
        // nothing before a marker published now.
        const received: string[] = []
        const session = await mqtt.connectAsync(broker.url, {
          clientId: defaultClientId(server.runtime.serverId, server.workspace.id, 'line'),
          clean: false,
        })
        try {
          session.on('message', (topic) => received.push(topic))
          await publish(broker.url, [{ topic: 'plant/marker/temp', payload: '{}' }])
          await eventually(
            async () => received.length,
            (n) => n >= 1,
            'the marker',
          )
          assert.deepEqual(received, ['plant/marker/temp'])
        } finally {
          await session.endAsync()
        }
      } finally {
        await database?.drop()
        rmSync(dataDir, { recursive: true, force: true })
      }
    })

    it('does not store again a batch the broker redelivers after a crash between commit and PUBACK', async () => {
      const server = await startTestServer(backend, { connectors: FAST })
      const config = (mqttOn: boolean) => ({
        ...lineConfig(broker.url, { topics: ['crash/+/temp'] }),
        settings: { capabilities: { connectors: { push: true, postgres: true, mqtt: mqttOn } } },
      })
      try {
        await applyAsAdmin(server, config(true))
        await eventually(
          () => status(server),
          (s) => s?.state === 'running',
          'the subscription',
        )
        await applyAsAdmin(server, config(false))
        await eventually(
          () => status(server),
          (s) => s?.state === 'stopped',
          'the connector stopped',
        )

        // 1. the connector's session receives a message and never acknowledges it (the crash) …
        const session = await mqtt.connectAsync(broker.url, {
          clientId: defaultClientId(server.runtime.serverId, server.workspace.id, 'line'),
          clean: false,
        })
        let delivered = 0
        session.handleMessage = (_packet, callback) => {
          delivered++
          callback(new Error('crashed before PUBACK'))
        }
        const message = { topic: 'crash/d1/temp', payload: JSON.stringify({ seq: 42, temp: 1 }) }
        await publish(broker.url, [message])
        await eventually(
          async () => delivered,
          (n) => n >= 1,
          'the delivery',
        )
        session.end(true)
        // 2. … after its rows and cursor were committed, exactly as the connector commits them
        await server.services.ingest.importRows(
          server.workspace.id,
          'line',
          [{ seq: 42, temp: 1, topic: message.topic, timestamp: '2026-01-01T00:00:00Z' }],
          {
            inTransaction: (tx, batch) =>
              tx.connectors.advance(
                server.workspace.id,
                'line',
                'mqtt',
                {
                  rowsIngested: batch.rowCount,
                  rowsRejected: 0,
                  cursor: JSON.stringify({ recent: [messageDigest(message.topic, Buffer.from(message.payload))] }),
                },
                Date.now(),
              ),
          },
        )

        // 3. the restarted connector gets the redelivery (DUP) and acknowledges it without storing it
        await applyAsAdmin(server, config(true))
        await eventually(
          () => status(server),
          (s) => s?.state === 'running',
          'the restart',
        )
        await publish(broker.url, [{ topic: 'crash/d1/temp', payload: JSON.stringify({ seq: 43, temp: 2 }) }])
        const seqs = await eventually(
          () => rows(server),
          (r) => r.some((x) => x.seq === 43),
          'the next message',
        )
        assert.deepEqual(
          seqs.map((x) => x.seq),
          [42, 43],
        )
      } finally {
        await server.stop()
      }
    })

    it('backs off while the broker is unreachable and records the failure once', async () => {
      const server = await startTestServer(backend, { connectors: FAST })
      try {
        await applyAsAdmin(server, lineConfig('mqtt://127.0.0.1:1'))
        const failing = await eventually(
          () => status(server),
          (s) => s?.state === 'backoff',
          'the backoff state',
        )
        assert.match(failing!.lastError!, /ECONNREFUSED|connect/i)
        await eventually(
          () => status(server),
          (s) => (s?.lastErrorAt ?? 0) > failing!.lastErrorAt!,
          'a second failed attempt',
        )
        const { records } = await server.services.ledger.query(
          platformContainer(server.workspace.id),
          { entityType: 'data-connection' },
          { limit: 1000, offset: 0, order: 'asc' },
        )
        assert.equal(records.filter((r) => r.actionType === 'connector-failed').length, 1)
      } finally {
        await server.stop()
      }
    })
  })

  describe(`${backend}: mqtt pull connector with a password file (credentials from the vault)`, () => {
    const password = `pw-${Math.random().toString(36).slice(2)}-unique-secret`
    let broker: TestBroker
    before(async () => {
      broker = await startMosquitto({ users: { ingest: password } })
    })
    after(() => broker.stop())

    it('is refused without credentials, connects once they are set, and never shows the password', async () => {
      const server = await startTestServer(backend, { connectors: FAST })
      try {
        await applyAsAdmin(server, lineConfig(broker.url))
        const refused = await eventually(
          () => status(server),
          (s) => s?.state === 'backoff',
          'the refusal',
        )
        assert.match(refused!.lastError!, /not authori[sz]ed|refused/i)

        const admin = server.accounts.admin
        await server.services.credentials.set({ id: admin.id, name: admin.name, via: 'cli' }, server.workspace.id, 'line', {
          username: 'ingest',
          password,
        })
        await eventually(
          () => status(server),
          (s) => s?.state === 'running',
          'the connection with credentials',
        )
        const authenticated = await mqtt.connectAsync(broker.url, { username: 'ingest', password })
        try {
          await authenticated.publishAsync('plant/d9/temp', JSON.stringify({ seq: 1, temp: 3 }), { qos: 1 })
        } finally {
          await authenticated.endAsync()
        }
        assert.deepEqual(
          await eventually(
            () => rows(server),
            (r) => r.length >= 1,
            'the message',
          ),
          [{ seq: 1, topic: 'plant/d9/temp' }],
        )

        const { records } = await server.services.ledger.query(
          platformContainer(server.workspace.id),
          {},
          { limit: 1000, offset: 0, order: 'asc' },
        )
        const recovered = records.filter((r) => r.entityType === 'data-connection' && r.actionType === 'connector-recovered')
        assert.equal(recovered.length, 1)
        const everything = [
          JSON.stringify(records.map((r) => r.details)),
          JSON.stringify(await server.services.connectors.status(server.workspace.id)),
          ...server.logLines,
        ]
        assert.equal(everything.filter((text) => text.includes(password)).length, 0)
      } finally {
        await server.stop()
      }
    })
  })
}
