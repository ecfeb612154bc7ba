/**
 * @module
 * Picks the event bus: in-process for SQLite (one process), LISTEN/NOTIFY for PostgreSQL.
 */
import { createLocalEventBus, type EventBus } from '../../domain/streams/event-bus.js'
import { createPostgresEventBus } from './postgres-event-bus.js'

export async function openEventBus(databaseUrl: string | undefined, onError: (error: Error) => void): Promise<EventBus> {
  if (!databaseUrl) return createLocalEventBus()
  const bus = createPostgresEventBus(databaseUrl, onError)
  try {
    await bus.ready
  } catch (error) {
    await bus.close()
    throw error
  }
  return bus
}
