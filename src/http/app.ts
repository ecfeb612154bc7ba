/**
 * @module
 * buildApp(): the Fastify application (design §2). `/healthz` (no auth), `/oi-api/*` (bearer auth,
 * routes from the registry), and later `/portal/*` as a sibling encapsulated context. Does not
 * listen: main.ts and the tests do.
 */
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import { UnauthenticatedError } from '../domain/errors.js'
import type { ApiServices } from '../domain/services.js'
import { stringifyExact } from '../shared/exact-json.js'
import { envelope, registerErrorEnvelope, sendError } from './error-envelope.js'
import { buildOpenApiDocument } from './openapi.js'
import { registerCallRecording } from './plugins/record-call.js'
import { requestIdOf } from './request-id.js'
import { type AnyRoute, defineRoute, registerRoutes } from './route-registry.js'
import { registerWellKnownRoutes } from './routes/well-known.js'
import { bearerFromSubprotocol } from './websocket-upgrade.js'
import { type BodyKind, decodeTextBody, parseJsonBody, type UnparsedBody } from './wire/json-body.js'

export interface AppOptions {
  readonly services: ApiServices
  readonly routes: readonly AnyRoute[]
  readonly version: string
  /** Public base URL (scheme://host:port) used in the OpenAPI `servers` entry and in links. */
  readonly publicUrl: string
  readonly logger: FastifyServerOptions['logger'] | FastifyServerOptions['loggerInstance']
  /** Registers sibling contexts (portal, MCP) and extra routes before the app is ready. */
  readonly extend?: (app: FastifyInstance) => Promise<void>
}

const SAFE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
} as const

export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { services } = options
  const loggerOption =
    options.logger && typeof (options.logger as { child?: unknown }).child === 'function'
      ? { loggerInstance: options.logger as FastifyServerOptions['loggerInstance'] }
      : { logger: options.logger as FastifyServerOptions['logger'] }
  const app = Fastify({
    ...loggerOption,
    genReqId: requestIdOf,
    bodyLimit: 1024 * 1024,
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 1000 },
    // Errors raised by the router before any hook runs (a malformed URL, an over-long path
    // parameter) answer in the envelope like everything else.
    // Malformed requests Node rejects before Fastify sees them (oversized headers, bad syntax): the
    // envelope with 400, and the connection closed.
    clientErrorHandler: (error, socket) => {
      if (!socket.writable) return socket.destroy()
      const message =
        (error as { code?: string }).code === 'HPE_HEADER_OVERFLOW'
          ? 'the request headers are larger than the server accepts'
          : 'the request is not valid HTTP'
      const body = JSON.stringify(envelope(message))
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      )
    },
    frameworkErrors: (error, _request, reply) => {
      const message =
        error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path segment is too long' : `the request URL is malformed (${error.message})`
      return sendError(reply, 400, message)
    },
  })

  // Query results may hold exact 64-bit longs (bigints): written as JSON numbers with every digit
  app.setReplySerializer((payload) => stringifyExact(payload))

  // Closing closes idle keep-alive connections once, when it starts; a connection whose response
  // was finishing at that moment turned idle a moment later and held the close up until the
  // keep-alive timeout (72 s). Keep closing idle ones until the server has closed.
  app.addHook('preClose', (done) => {
    const timer = setInterval(() => app.server.closeIdleConnections(), 100).unref()
    app.server.once('close', () => clearInterval(timer))
    done()
  })

  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id)
    // Node answers an HTTP/0.9 request line ("GET /") as if it were HTTP/1.1; it carries no headers,
    // so no Host and no token: refused, whatever the path.
    if (request.raw.httpVersionMajor < 1) return sendError(reply, 400, 'HTTP/0.9 requests are not served; send an HTTP/1.1 request')
    // Node decodes only the chunked framing; a body announced as gzip (or any other coding) would be
    // read as if it were plain. Refused rather than misread (RFC 9112 §6.1).
    const coding = request.headers['transfer-encoding']
    if (coding !== undefined && coding.trim().toLowerCase() !== 'chunked') {
      return sendError(reply, 400, `unsupported Transfer-Encoding ${JSON.stringify(coding.slice(0, 100))}; send the body plain or chunked`)
    }
  })
  registerErrorEnvelope(app)
  app.removeAllContentTypeParsers()
  type ParserConfig = { exactIntegers?: boolean; bodyBytes?: boolean } | undefined
  // A route declared with bodyBytes reads its body itself (route-registry.ts): it gets the bytes.
  const unparsed = (request: { routeOptions: { config: unknown } }, bytes: Buffer, kind: BodyKind): UnparsedBody | undefined =>
    (request.routeOptions.config as ParserConfig)?.bodyBytes === true ? { bytes, kind } : undefined
  app.addContentTypeParser(['application/json', 'application/*+json'], { parseAs: 'buffer' }, (request, body, done) => {
    try {
      const exactIntegers = (request.routeOptions.config as ParserConfig)?.exactIntegers === true
      done(null, unparsed(request, body as Buffer, 'json') ?? parseJsonBody(body as Buffer, { exactIntegers }))
    } catch (error) {
      done(error as Error)
    }
  })
  // Text bodies are decoded strictly, as JSON ones are: bytes that are not UTF-8 are a 400, never
  // stored as U+FFFD (a lenient decode silently changed ingested values).
  app.addContentTypeParser(['application/x-ndjson', 'text/csv', 'text/plain'], { parseAs: 'buffer' }, (request, body, done) => {
    try {
      done(null, unparsed(request, body as Buffer, 'text') ?? decodeTextBody(body as Buffer))
    } catch (error) {
      done(error as Error)
    }
  })

  const knownPaths = new Map<string, string[]>()
  for (const route of options.routes) {
    const key = `/oi-api${route.openapiPath ?? route.path}`
    knownPaths.set(key, [...(knownPaths.get(key) ?? []), route.method])
  }
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!
    const methods = knownPaths.get(path)
    const hint = methods ? `; this path accepts ${methods.join(', ')}` : ''
    return sendError(reply, 404, `no route ${request.method} ${path}${hint}`)
  })

  // A person who opens the server's address lands in the portal (issue 18); programs use /oi-api.
  app.get('/', async (_request, reply) => reply.redirect('/portal/', 302))

  app.get('/healthz', async () => {
    await services.access.ping()
    return { status: 'ok' }
  })

  const openapiRoute: AnyRoute = defineRoute({
    method: 'GET',
    path: '/openapi',
    operationId: 'getOpenApi',
    summary: 'OpenAPI 3.1 description of the operations this token may call',
    tag: 'OpenAPI',
    rights: [],
    responses: { 200: { description: 'An OpenAPI 3.1 document.' } },
    handler: async ({ caller }): Promise<unknown> =>
      buildOpenApiDocument(allRoutes, caller, { version: options.version, serverUrl: options.publicUrl }),
  })
  const allRoutes: AnyRoute[] = [openapiRoute, ...options.routes]

  await app.register(
    async (api) => {
      api.addHook('onRequest', async (request, reply) => {
        for (const [name, value] of Object.entries(SAFE_HEADERS)) reply.header(name, value)
        if (/%00/.test(request.url)) return sendError(reply, 400, 'the URL may not contain the NUL character (%00)')
        // Node keeps the first of several Authorization headers and drops the rest; a proxy may pick
        // another one. Two credentials are ambiguous, so neither is used.
        if (request.raw.rawHeaders.filter((_, i, all) => i % 2 === 0 && all[i]!.toLowerCase() === 'authorization').length > 1) {
          return sendError(reply, 401, 'malformed Authorization header; send exactly one "Authorization: Bearer <token>"')
        }
        try {
          // Browsers cannot set headers on a WebSocket: they send the token as the subprotocol bearer.<token>.
          request.caller = await services.access.authenticate(request.headers.authorization ?? bearerFromSubprotocol(request))
        } catch (error) {
          if (error instanceof UnauthenticatedError) return sendError(reply, 401, error.message)
          throw error
        }
        if (request.caller.expiresAt !== undefined) reply.header('x-token-expires-at', new Date(request.caller.expiresAt).toISOString())
      })
      registerCallRecording(api, { record: (workspaceId, call) => services.activity.recordCall(workspaceId, call) })
      registerRoutes(api, allRoutes)
    },
    { prefix: '/oi-api' },
  )
  registerWellKnownRoutes(app, services)

  if (options.extend) await options.extend(app)
  return app
}
