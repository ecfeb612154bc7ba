/**
 * @module
 * WebSocket upgrades through the ordinary Fastify route pipeline (the live stream, design §9): an
 * upgrade request is routed like any request, so the /oi-api hooks authenticate it and the route
 * checks rights and filters; errors are plain HTTP responses in the error envelope, written before
 * any upgrade. Only a route that calls `acceptUpgrade` switches protocols. Open WebSockets are
 * closed with 1001 when the server shuts down (Node's close() would otherwise wait for them).
 */
import { type IncomingMessage, type Server, ServerResponse } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { WebSocket, WebSocketServer } from 'ws'

/** The subprotocol a client offers alongside `bearer.<token>` and the server echoes. */
export const LIVE_SUBPROTOCOL = 'provenant.v1'
const BEARER_PREFIX = 'bearer.'

interface PendingUpgrade {
  readonly socket: Duplex
  readonly head: Buffer
  readonly response: ServerResponse
}

const pending = new WeakMap<IncomingMessage, PendingUpgrade>()
const wss = new WebSocketServer({
  noServer: true,
  // Clients send nothing but control frames; a large message is refused rather than buffered.
  maxPayload: 4096,
  clientTracking: false,
  // Off (the ws default, stated because the live stream writes pre-framed messages to the socket).
  perMessageDeflate: false,
  handleProtocols: (protocols) => (protocols.has(LIVE_SUBPROTOCOL) ? LIVE_SUBPROTOCOL : false),
})

/** The offered subprotocols (`Sec-WebSocket-Protocol`, comma-separated). */
export function offeredSubprotocols(request: FastifyRequest | IncomingMessage): string[] {
  const header = request.headers['sec-websocket-protocol']
  const text = Array.isArray(header) ? header.join(',') : (header ?? '')
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
}

/**
 * The Authorization value a browser sent as the subprotocol `bearer.<token>` (browsers cannot set
 * headers on a WebSocket), or undefined. Only upgrade requests carry it.
 */
export function bearerFromSubprotocol(request: FastifyRequest): string | undefined {
  if (!pending.has(request.raw)) return undefined
  const offered = offeredSubprotocols(request).find((p) => p.startsWith(BEARER_PREFIX))
  return offered === undefined ? undefined : `Bearer ${offered.slice(BEARER_PREFIX.length)}`
}

/** True when this request asked to upgrade to WebSocket (and the route may accept it). */
export function isUpgradeRequest(request: FastifyRequest): boolean {
  return pending.has(request.raw)
}

const open = new Map<Server, Set<WebSocket>>()

const extraHeaders = new WeakMap<IncomingMessage, string[]>()
// The 101 answer carries the reply's own headers too (x-request-id, x-token-expires-at, …).
wss.on('headers', (headers: string[], request: IncomingMessage) => {
  headers.push(...(extraHeaders.get(request) ?? []))
})

/**
 * Switches the request's connection to WebSocket. The caller must have hijacked the reply.
 * Rejects when the client went away before the handshake completed.
 */
export function acceptUpgrade(request: FastifyRequest, reply: FastifyReply): Promise<WebSocket> {
  const server = request.server.server
  const upgrade = pending.get(request.raw)
  if (!upgrade) throw new Error('acceptUpgrade on a request that did not ask to upgrade')
  pending.delete(request.raw)
  upgrade.response.detachSocket(upgrade.socket as never)
  const headers: string[] = []
  for (const [name, value] of Object.entries(reply.getHeaders())) {
    if (value !== undefined && !/^(content-|connection|upgrade|sec-websocket)/i.test(name)) headers.push(`${name}: ${String(value)}`)
  }
  extraHeaders.set(request.raw, headers)
  return new Promise((resolve, reject) => {
    const gone = (): void => reject(new Error('the client closed the connection before the WebSocket handshake'))
    if (upgrade.socket.destroyed) return gone()
    upgrade.socket.once('close', gone)
    wss.handleUpgrade(request.raw, upgrade.socket, upgrade.head, (ws) => {
      upgrade.socket.removeListener('close', gone)
      const sockets = open.get(server) ?? new Set<WebSocket>()
      open.set(server, sockets)
      sockets.add(ws)
      ws.once('close', () => sockets.delete(ws))
      resolve(ws)
    })
  })
}

/** Routes upgrade requests through `app` and closes open WebSockets when it closes. */
export function enableWebSocketUpgrades(app: FastifyInstance): void {
  const server = app.server
  const onUpgrade = (request: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // Node removed its own error listener before emitting 'upgrade'.
    const onError = (): void => {
      socket.destroy()
    }
    socket.on('error', onError)
    const response = new ServerResponse(request)
    response.shouldKeepAlive = false
    response.assignSocket(socket as never)
    // A reply that was not an upgrade (an error envelope, say) ends the connection.
    response.on('finish', () => {
      socket.end()
      socket.removeListener('error', onError)
      socket.on('error', () => {})
    })
    pending.set(request, { socket, head, response })
    try {
      app.routing(request, response)
    } catch (error) {
      app.log.warn({ err: error }, 'a WebSocket upgrade request could not be routed')
      socket.destroy()
    }
  }
  server.on('upgrade', onUpgrade)
  app.addHook('preClose', async () => {
    server.removeListener('upgrade', onUpgrade)
    const sockets = [...(open.get(server) ?? [])]
    open.delete(server)
    await Promise.all(
      sockets.map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === WebSocket.CLOSED) return resolve()
            const timer = setTimeout(() => ws.terminate(), 2_000)
            ws.once('close', () => {
              clearTimeout(timer)
              resolve()
            })
            ws.close(1001, 'the server is shutting down; reconnect with since=<last event id>')
          }),
      ),
    )
  })
}
