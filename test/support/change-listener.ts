/**
 * @module
 * A real EventSource client (the `eventsource` package) on the change stream, sending the bearer
 * token through its custom fetch, collecting `change` messages and counting (re)connections.
 */
import { EventSource } from 'eventsource'
import type { JsonBody } from './json-body.js'

export interface ChangeEvent {
  /** The SSE `id:`. */
  readonly lastEventId: string
  readonly data: Record<string, JsonBody>
}

export interface ChangeListener {
  readonly events: ChangeEvent[]
  /** Successful connections (1 + reconnections). */
  readonly opens: number
  /** Status codes of failed (re)connection attempts. */
  readonly errorCodes: (number | undefined)[]
  readonly source: EventSource
  /** Resolves once `count` events have arrived in total (rejects after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<ChangeEvent[]>
  /** Resolves once the client has connected `count` times. */
  waitForOpens(count: number, timeoutMs?: number): Promise<void>
  /** Resolves once the EventSource gave up (readyState CLOSED after an error). */
  waitForClosed(timeoutMs?: number): Promise<void>
  close(): void
}

export interface ListenOptions {
  /** Sent as the `lastEventId` query parameter. */
  readonly lastEventIdQuery?: string
  /** Sent as the Last-Event-ID header on the first connection. */
  readonly lastEventIdHeader?: string
  readonly path?: string
}

async function until(check: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`)
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

export function listenChanges(baseUrl: string, token: string, options: ListenOptions = {}): ChangeListener {
  const url = new URL(options.path ?? '/oi-api/eac-changes/stream', baseUrl)
  if (options.lastEventIdQuery !== undefined) url.searchParams.set('lastEventId', options.lastEventIdQuery)
  let first = true
  const source = new EventSource(url, {
    fetch: (input, init) => {
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` }
      if (first && options.lastEventIdHeader !== undefined) headers['last-event-id'] = options.lastEventIdHeader
      first = false
      return fetch(input, { ...init, headers })
    },
  })
  const events: ChangeEvent[] = []
  const errorCodes: (number | undefined)[] = []
  let opens = 0
  source.addEventListener('open', () => {
    opens++
  })
  source.addEventListener('change', (event) => {
    events.push({ lastEventId: event.lastEventId, data: JSON.parse(event.data) })
  })
  source.addEventListener('error', (event) => {
    errorCodes.push((event as unknown as { code?: number }).code)
  })
  return {
    events,
    errorCodes,
    source,
    get opens() {
      return opens
    },
    async waitFor(count, timeoutMs = 10_000) {
      await until(
        () => events.length >= count,
        timeoutMs,
        () => `${count} change events (got ${events.length}: ${events.map((e) => e.lastEventId).join(',')})`,
      )
      return events.slice(0, count)
    },
    async waitForOpens(count, timeoutMs = 10_000) {
      await until(
        () => opens >= count,
        timeoutMs,
        () => `${count} connections (got ${opens})`,
      )
    },
    async waitForClosed(timeoutMs = 10_000) {
      await until(
        () => source.readyState === EventSource.CLOSED,
        timeoutMs,
        () => `the EventSource to close (state ${source.readyState})`,
      )
    },
    close: () => source.close(),
  }
}
