/**
 * @module
 * A real `ws` client of `GET /oi-api/live-stream` for tests: collects events, reports the close
 * code and reason, and turns a refused upgrade into its HTTP status, headers and body.
 */
import WebSocket from 'ws'
import type { JsonBody } from './json-body.js'

export interface LiveEvent {
  readonly type: 'event'
  readonly id: number
  readonly connection: string
  readonly surfaces: string[]
  readonly timestamp: string
  readonly data: Record<string, unknown>
}

export interface LiveClient {
  readonly ws: WebSocket
  readonly events: LiveEvent[]
  /** Resolves with the close code and reason. */
  readonly closed: Promise<{ code: number; reason: string }>
  /** Waits until at least `count` events arrived (fails after `timeoutMs`). */
  waitFor(count: number, timeoutMs?: number): Promise<LiveEvent[]>
  /** Waits until an event with this id (or a later one) arrived. */
  waitForId(id: number, timeoutMs?: number): Promise<LiveEvent[]>
  close(): void
}

export interface Refusal {
  readonly status: number
  readonly headers: Record<string, string | string[] | undefined>
  readonly body: JsonBody
}

export interface LiveConnectOptions {
  readonly token?: string
  readonly query?: string
  readonly protocols?: string[]
  /** false: the client does not answer pings (ws answers them by default). */
  readonly autoPong?: boolean
  /** Receives the headers of the 101 answer. */
  readonly onUpgrade?: (headers: Record<string, string | string[] | undefined>) => void
}

function urlOf(baseUrl: string, query: string | undefined): string {
  return `${baseUrl.replace(/^http/, 'ws')}/oi-api/live-stream${query ? `?${query}` : ''}`
}

function open(baseUrl: string, options: LiveConnectOptions): WebSocket {
  return new WebSocket(urlOf(baseUrl, options.query), options.protocols ?? [], {
    ...(options.token ? { headers: { authorization: `Bearer ${options.token}` } } : {}),
    ...(options.autoPong === false ? { autoPong: false } : {}),
  })
}

/** Connects; rejects with the refusal when the server answers without upgrading. */
export function connectLive(baseUrl: string, options: LiveConnectOptions = {}): Promise<LiveClient> {
  const ws = open(baseUrl, options)
  if (options.onUpgrade) ws.once('upgrade', (response) => options.onUpgrade!(response.headers))
  const events: LiveEvent[] = []
  let onEvent: (() => void) | undefined
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  )
  ws.on('message', (data) => {
    events.push(JSON.parse(data.toString()) as LiveEvent)
    onEvent?.()
  })
  const waitUntil = (done: () => boolean, what: string, timeoutMs: number): Promise<LiveEvent[]> =>
    new Promise((resolve, reject) => {
      if (done()) return resolve(events)
      const timer = setTimeout(
        () => reject(new Error(`timed out waiting for ${what}; got ${events.length} events (last id ${events.at(-1)?.id})`)),
        timeoutMs,
      )
      const previous = onEvent
      onEvent = () => {
        previous?.()
        if (done()) {
          clearTimeout(timer)
          onEvent = previous
          resolve(events)
        }
      }
    })
  const client: LiveClient = {
    ws,
    events,
    closed,
    waitFor: (count, timeoutMs = 10_000) => waitUntil(() => events.length >= count, `${count} events`, timeoutMs),
    waitForId: (id, timeoutMs = 10_000) => waitUntil(() => (events.at(-1)?.id ?? -1) >= id, `event ${id}`, timeoutMs),
    close: () => ws.close(),
  }
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve(client))
    ws.once('unexpected-response', (_request, response) => {
      let text = ''
      response.on('data', (chunk: Buffer) => {
        text += chunk.toString()
      })
      response.on('end', () => {
        let body: unknown
        try {
          body = JSON.parse(text)
        } catch {
          body = text
        }
        reject(
          Object.assign(new Error(`refused with ${response.statusCode}`), {
            refusal: { status: response.statusCode ?? 0, headers: response.headers, body } satisfies Refusal,
          }),
        )
        ws.terminate()
      })
    })
    ws.once('error', (error) => reject(error))
  })
}

/** Connects expecting a refusal before the upgrade; returns it. */
export async function refusedLive(baseUrl: string, options: LiveConnectOptions = {}): Promise<Refusal> {
  try {
    const client = await connectLive(baseUrl, options)
    client.close()
  } catch (error) {
    const refusal = (error as { refusal?: Refusal }).refusal
    if (refusal) return refusal
    throw error
  }
  throw new Error('the stream was accepted, but a refusal was expected')
}
