/**
 * @module
 * The live event stream (spec 4.3, 6; design §9): `GET /oi-api/live-stream` upgrades to WebSocket
 * and sends every ingested row the token may read as `{type:"event", id, connection, surfaces,
 * timestamp, data}`. Authentication (the Authorization header, or the subprotocol `bearer.<token>`
 * for browsers), rights, the capability switch and the filters are checked BEFORE the upgrade, so
 * every refusal is an ordinary HTTP response in the error envelope.
 *
 * Close codes: 1013 a slow consumer overflowed its buffer; 1008 the token was revoked or expired,
 * or the stream was switched off; 1001 the server is shutting down or the client missed a ping;
 * 1011 the stream failed. A client
 * reconnects with `since=<last event id>` and misses nothing.
 */
import type { FastifyRequest } from 'fastify'
import type { WebSocket } from 'ws'
import { z } from 'zod'
import type { Caller } from '../../domain/access/caller.js'
import type { StreamGuard } from '../../domain/access/stream-guard.js'
import { InvalidInputError, NotProvisionedError } from '../../domain/errors.js'
import type { ApiServices } from '../../domain/services.js'
import {
  type LiveBatch,
  type LiveControl,
  type LiveHub,
  type LiveSubscription,
  type LiveView,
  parseSince,
} from '../../domain/streams/live-hub.js'
import {
  checkLiveSelection,
  type LiveSelection,
  liveConnections,
  liveSurfacesOf,
  parseNameList,
} from '../../domain/streams/live-selection.js'
import { toWireValue } from '../../kql/index.js'
import { stringifyExact } from '../../shared/exact-json.js'
import { sendError } from '../error-envelope.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'
import { acceptUpgrade, isUpgradeRequest, LIVE_SUBPROTOCOL, offeredSubprotocols } from '../websocket-upgrade.js'

export interface LiveStreamOptions {
  /** Interval of WebSocket pings; a client that has not answered the previous one is dropped (default 30 s). */
  readonly pingMs?: number
  /** Bytes a client may have waiting to be sent before it is closed as too slow (default 4 MiB). */
  readonly maxBufferedBytes?: number
  /** Messages a client may have waiting to be sent before it is closed as too slow (default 20,000). */
  readonly maxBufferedMessages?: number
}

/** One event message (documented in the OpenAPI description). */
export const liveEventMessage = z.object({
  type: z.literal('event'),
  id: z
    .number()
    .int()
    .describe("The row's workspace-wide row id: increases with every ingested row; pass the last one received as `since` to resume."),
  connection: z.string().describe('The data connection the row was ingested into.'),
  surfaces: z.array(z.string()).describe('The surfaces that hold the connection (those the token may see).'),
  timestamp: z.string().describe('Ingest time, ISO 8601 UTC.'),
  data: z.record(z.string(), z.unknown()).describe("The row's declared columns, values in the same JSON form queries return."),
})

export const LIVE_CLOSE = { goingAway: 1001, policy: 1008, internalError: 1011, tryAgainLater: 1013 } as const

/** One unmasked WebSocket text frame (RFC 6455 §5.2): server frames are the same bytes for every client. */
export function textFrame(payload: Buffer): Buffer {
  const length = payload.length
  const headerLength = length < 126 ? 2 : length < 65_536 ? 4 : 10
  const frame = Buffer.allocUnsafe(headerLength + length)
  frame[0] = 0x81 // FIN, opcode 1 (text)
  if (length < 126) frame[1] = length
  else if (length < 65_536) {
    frame[1] = 126
    frame.writeUInt16BE(length, 2)
  } else {
    frame[1] = 127
    frame.writeBigUInt64BE(BigInt(length), 2)
  }
  payload.copy(frame, headerLength)
  return frame
}

interface EncodedBatch {
  /** The batch's messages as consecutive WebSocket frames, written to each socket with one write. */
  readonly frames: Buffer
  readonly count: number
}

const encodings = new WeakMap<LiveBatch, Map<string, EncodedBatch>>()

/** The batch's messages for one `surfaces` value, encoded and framed once and shared by every stream. */
function encodedBatch(batch: LiveBatch, surfacesJson: string, view: LiveView): EncodedBatch {
  let byKey = encodings.get(batch)
  if (!byKey) {
    byKey = new Map()
    encodings.set(batch, byKey)
  }
  let encoded = byKey.get(surfacesJson)
  if (encoded) return encoded
  const columns = view.tables.get(batch.connection)?.columns ?? []
  const prefix = `{"type":"event","id":`
  const middle = `,"connection":${JSON.stringify(batch.connection)},"surfaces":${surfacesJson},"timestamp":`
  const frames = batch.rows.map((row) => {
    const data: Record<string, unknown> = {}
    columns.forEach((column, i) => {
      data[column.name] = toWireValue(column.type, row.values[i] ?? null)
    })
    return textFrame(Buffer.from(`${prefix}${row.id}${middle}"${new Date(row.at).toISOString()}","data":${stringifyExact(data)}}`))
  })
  encoded = { frames: frames.length === 1 ? frames[0]! : Buffer.concat(frames), count: frames.length }
  byKey.set(surfacesJson, encoded)
  return encoded
}

interface StreamSettings {
  readonly pingMs: number
  readonly maxBufferedBytes: number
  readonly maxBufferedMessages: number
}

/** Runs one accepted stream until it closes. */
function runStream(
  ws: WebSocket,
  hub: LiveHub,
  caller: Caller,
  selection: LiveSelection,
  since: number | undefined,
  firstView: LiveView,
  settings: StreamSettings,
  request: FastifyRequest,
  now: () => number,
  guard: StreamGuard,
): void {
  let view = firstView
  let wanted = liveConnections(view.config, caller.scopes, selection)
  let surfacesOf = new Map<string, string>()
  let waiting = 0
  let ended = false
  let drainWaiters: (() => void)[] = []
  const timers: NodeJS.Timeout[] = []
  let unwatch: (() => void) | undefined
  // Event frames are framed once per batch and written straight to the socket, one write per batch
  // and client (ws would frame and write each message per client). Safe because permessage-deflate
  // is off, so ws's own writes (pings, the close frame) are never queued between frames.
  const socket = (ws as unknown as { _socket: import('node:net').Socket })._socket

  const end = (code: number, reason: string): void => {
    if (ended) return
    ended = true
    subscription.close()
    unwatch?.()
    for (const timer of timers) clearTimeout(timer)
    for (const resolve of drainWaiters) resolve()
    drainWaiters = []
    if (ws.readyState === ws.OPEN || ws.readyState === ws.CONNECTING) ws.close(code, reason)
  }

  const surfacesJson = (connection: string): string => {
    let json = surfacesOf.get(connection)
    if (json === undefined) {
      json = JSON.stringify(liveSurfacesOf(view.config, caller.scopes, connection))
      surfacesOf.set(connection, json)
    }
    return json
  }

  const sent = (count: number) => (): void => {
    waiting -= count
    if (waiting === 0 && drainWaiters.length > 0) {
      const waiters = drainWaiters
      drainWaiters = []
      for (const resolve of waiters) resolve()
    }
  }

  const subscription: LiveSubscription = hub.subscribe(caller.workspaceId, since, {
    wants: (connection) => wanted.has(connection),
    deliver(batch) {
      if (ended) return
      if (ws.readyState !== ws.OPEN) return
      const encoded = encodedBatch(batch, surfacesJson(batch.connection), view)
      waiting += encoded.count
      socket.write(encoded.frames, sent(encoded.count))
      if (ws.bufferedAmount > settings.maxBufferedBytes)
        end(LIVE_CLOSE.tryAgainLater, `slow consumer: more than ${settings.maxBufferedBytes} bytes waiting to be sent`)
      else if (waiting > settings.maxBufferedMessages)
        end(LIVE_CLOSE.tryAgainLater, `slow consumer: more than ${settings.maxBufferedMessages} messages waiting to be sent`)
    },
    drained() {
      if (ended || waiting === 0) return Promise.resolve()
      return new Promise((resolve) => drainWaiters.push(resolve))
    },
    control(event: LiveControl) {
      if (event.kind === 'token-revoked') {
        if (event.tokenId === caller.tokenId) end(LIVE_CLOSE.policy, 'token revoked')
        return
      }
      view = event.view
      surfacesOf = new Map()
      if (!view.config.settings.capabilities.liveStream)
        return end(LIVE_CLOSE.policy, "the live stream was switched off in this workspace's settings")
      wanted = liveConnections(view.config, caller.scopes, selection)
    },
    overflow(limit) {
      end(LIVE_CLOSE.tryAgainLater, `slow consumer: more than ${limit} live events waiting during the replay`)
    },
  })
  subscription.started.catch((error: unknown) => {
    request.log.error({ err: error }, 'live stream replay failed')
    end(LIVE_CLOSE.internalError, 'the stream failed; reconnect with since=<last event id>')
  })

  // Revoked, expired or disabled by anyone, in any process (issue 14 item 7): the guard asks storage.
  unwatch = guard.watch(caller, (reason) => end(LIVE_CLOSE.policy, reason))
  ws.on('close', () => end(LIVE_CLOSE.goingAway, 'closed'))
  ws.on('error', () => end(LIVE_CLOSE.internalError, 'socket error'))
  ws.on('message', () => {
    /* clients have nothing to say; control frames are handled by ws */
  })

  let alive = true
  ws.on('pong', () => {
    alive = true
  })
  const ping = (): void => {
    if (ended) return
    // Also re-checked here: the expiry timer below runs on wall time, the token's expiry on the service clock.
    if (caller.expiresAt !== undefined && caller.expiresAt <= now()) {
      end(LIVE_CLOSE.policy, 'token expired')
      return
    }
    if (!alive) {
      // Tell it why (the close frame goes out first), but do not wait for a handshake it will not answer.
      end(LIVE_CLOSE.goingAway, 'no answer to ping')
      ws.terminate()
      return
    }
    alive = false
    ws.ping()
    timers[0] = setTimeout(ping, settings.pingMs)
  }
  timers[0] = setTimeout(ping, settings.pingMs)

  if (caller.expiresAt !== undefined) {
    // setTimeout holds at most 2^31-1 ms (24.8 days); tokens live up to 30 days.
    const expire = (): void => {
      const left = caller.expiresAt! - now()
      if (left <= 0) end(LIVE_CLOSE.policy, 'token expired')
      else timers[1] = setTimeout(expire, Math.min(left, 2 ** 31 - 1))
    }
    expire()
  }
}

export function liveStreamRoutes(services: ApiServices, options: LiveStreamOptions = {}): AnyRoute[] {
  const settings: StreamSettings = {
    pingMs: options.pingMs ?? 30_000,
    maxBufferedBytes: options.maxBufferedBytes ?? 4 * 1024 * 1024,
    maxBufferedMessages: options.maxBufferedMessages ?? 20_000,
  }
  return [
    defineRoute({
      method: 'GET',
      path: '/live-stream',
      operationId: 'liveStream',
      summary: 'Stream ingested rows as they arrive (WebSocket)',
      description: [
        'Upgrades to WebSocket (send `Connection: Upgrade`, `Upgrade: websocket`) and sends one text message per ingested row, as the schema below, in row-id order.',
        `Authenticate with \`Authorization: Bearer <token>\`, or from a browser by offering the subprotocols \`${LIVE_SUBPROTOCOL}\` and \`bearer.<token>\`; the server answers with \`${LIVE_SUBPROTOCOL}\`.`,
        "Only rows of connections the token may read are sent. `connection` and `surface` narrow the stream (comma lists; an unknown name is a 400, one outside the token's scopes a 403, both before the upgrade).",
        '`since=<event id>` first replays every row after that id from storage, then continues live without gap or duplicate.',
        `The server pings every ${settings.pingMs / 1000} s and drops a client that did not answer the previous ping (close code 1001, reason \`no answer to ping\`).`,
        `Close codes: 1013 the client did not keep up (more than ${settings.maxBufferedBytes} bytes or ${settings.maxBufferedMessages} messages waiting); 1008 the token was revoked or expired, or the live stream was switched off; 1001 the server is shutting down; 1011 the stream failed. Reconnect with \`since\` set to the last id received.`,
      ].join(' '),
      tag: 'Streams',
      rights: ['streams:live'],
      query: z.object({
        connection: z.string().max(4000).optional().describe('Only these connections (comma-separated lookups).'),
        surface: z.string().max(4000).optional().describe('Only connections on these surfaces (comma-separated lookups).'),
        since: z.string().max(20).optional().describe('Replay every event after this id first (the id of the last event received).'),
      }),
      responses: {
        101: { description: 'Switching to WebSocket; every message is an event as the schema below.', schema: liveEventMessage },
        426: {
          description: 'The request was not a WebSocket upgrade (error envelope).',
          schema: z.object({ HasError: z.literal(true), Messages: z.object({ Error: z.string() }) }),
        },
      },
      hijacks: true,
      handler: async ({ caller, query, request, reply, hijack }) => {
        const view = await services.live.view(caller.workspaceId)
        if (!view.config.settings.capabilities.liveStream)
          throw new NotProvisionedError("the live stream is switched off in this workspace's settings (settings.capabilities.liveStream)")
        const selection = checkLiveSelection(view.config, caller.scopes, {
          ...optional('connections', parseNameList(query.connection)),
          ...optional('surfaces', parseNameList(query.surface)),
        })
        const since = parseSince(query.since)
        await services.live.checkSince(caller.workspaceId, since)
        if (!isUpgradeRequest(request)) {
          reply.header('upgrade', 'websocket')
          return sendError(reply, 426, 'this endpoint is a WebSocket: send a GET with "Connection: Upgrade" and "Upgrade: websocket"')
        }
        const offered = offeredSubprotocols(request)
        if (offered.length > 0 && !offered.includes(LIVE_SUBPROTOCOL)) {
          throw new InvalidInputError(
            `offer the subprotocol "${LIVE_SUBPROTOCOL}" (alongside bearer.<token> when the token travels that way); the server answers with it`,
          )
        }
        await hijack(101)
        let ws: WebSocket
        try {
          ws = await acceptUpgrade(request, reply)
        } catch {
          return reply // the client went away during the handshake
        }
        runStream(ws, services.live, caller, selection, since, view, settings, request, () => services.clock.now(), services.streamGuard)
        return reply
      },
    }),
  ]
}

function optional<K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [key]: value } as Record<K, V>)
}
