/**
 * @module
 * EventBus over PostgreSQL LISTEN/NOTIFY, so every API process hears what any process ingested or
 * committed (design §2, §9). Payloads carry ids only (NOTIFY allows 8,000 bytes); a process
 * delivers its own events locally at once (with the rows it already has) and ignores their echo.
 * The listening connection reconnects with backoff; events published while it was down are not
 * replayed here — the live and change streams resume from storage by id.
 */
import { randomUUID } from 'node:crypto'
import pg from 'pg'
import { type BusEvent, createLocalEventBus, type EventBus } from '../../domain/streams/event-bus.js'
import { createPgPool, pgTypes } from '../postgres/postgres-db.js'

const CHANNEL = 'provenant_events'

type WireEvent = { origin: string; event: BusEvent }

function withoutRows(event: BusEvent): BusEvent {
  if (event.kind !== 'rows') return event
  const { rows: _rows, ...rest } = event
  return rest
}

export function createPostgresEventBus(
  databaseUrl: string,
  onError: (error: Error) => void = () => {},
): EventBus & { ready: Promise<void> } {
  const pool = createPgPool(databaseUrl, 2)
  const origin = randomUUID()
  const local = createLocalEventBus()
  let listener: pg.Client | undefined
  let closed = false
  let retryMs = 100

  async function listen(): Promise<void> {
    const client = new pg.Client({
      connectionString: databaseUrl,
      types: pgTypes as unknown as pg.CustomTypesConfig,
      application_name: 'provenant-events',
    })
    client.on('notification', (message) => {
      if (message.channel !== CHANNEL || !message.payload) return
      try {
        const wire = JSON.parse(message.payload) as WireEvent
        if (wire.origin !== origin) local.publish(wire.event)
      } catch (error) {
        onError(error as Error)
      }
    })
    client.on('error', (error) => {
      onError(error)
      void client.end().catch(() => {})
      if (listener === client) listener = undefined
      if (!closed) {
        retryMs = Math.min(retryMs * 2, 5000)
        setTimeout(() => {
          void listen().catch(onError)
        }, retryMs)
      }
    })
    await client.connect()
    await client.query(`LISTEN ${CHANNEL}`)
    retryMs = 100
    listener = client
  }

  const ready = listen()
  return {
    ready,
    publish(event) {
      local.publish(event)
      const payload = JSON.stringify({ origin, event: withoutRows(event) } satisfies WireEvent)
      pool.query('SELECT pg_notify($1, $2)', [CHANNEL, payload]).catch(onError)
    },
    subscribe: (handler) => local.subscribe(handler),
    async close() {
      closed = true
      await local.close()
      await listener?.end().catch(() => {})
      await pool.end().catch(() => {})
    },
  }
}
