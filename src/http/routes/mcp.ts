/**
 * @module
 * The MCP endpoint `/oi-api/mcp` (spec 1, 4.3; design §10): Streamable HTTP, stateless, JSON
 * responses, serving both the current revision (2026-07-28: no handshake, no sessions,
 * `MCP-Protocol-Version`/`Mcp-Method`/`Mcp-Name` headers, `server/discover`) and the earlier ones
 * (≤ 2025-11-25, starting with `initialize`) through the official v2 SDK's `createMcpHandler`.
 * This is the only module that knows both Fastify and the MCP transport.
 *
 * Order of checks: bearer token (401 with `WWW-Authenticate: Bearer`, from the /oi-api context) →
 * right `mcp:use` (plain 403) → `Origin` allow-list (403; DNS rebinding) → capability switch
 * (503) → the SDK. No OAuth Protected Resource Metadata is published (tokens come from the portal).
 */
import type { OutgoingHttpHeaders } from 'node:http'
import { Readable } from 'node:stream'
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpServerFactory,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { Caller } from '../../domain/access/caller.js'
import { ForbiddenError, NotProvisionedError } from '../../domain/errors.js'
import type { ApiServices } from '../../domain/services.js'
import { createMcpServer } from '../../mcp/mcp-server.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'

export interface McpRouteOptions {
  /** This server's public URL: its origin is allowed, and links point there. */
  readonly publicUrl: string
  /** Further browser origins allowed to call the endpoint (PROVENANT_ALLOWED_ORIGINS). */
  readonly allowedOrigins?: readonly string[]
}

interface McpRequestExtra extends Record<string, unknown> {
  readonly caller: Caller
  readonly onUnexpected: (error: unknown, correlationId: string) => void
}

const envelope = z.object({ HasError: z.literal(true), Messages: z.object({ Error: z.string() }) })

const jsonRpcMessage = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string(), z.number()]).optional(),
  method: z.string().optional(),
  params: z.record(z.string(), z.unknown()).optional(),
  result: z.unknown().optional(),
  error: z.object({ code: z.number(), message: z.string(), data: z.unknown().optional() }).optional(),
})

/** `scheme://host[:port]`, lower-cased, or undefined when `value` is not an absolute http(s) URL. */
export function originOf(value: string): string | undefined {
  try {
    const url = new URL(value)
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin.toLowerCase() : undefined
  } catch {
    return undefined
  }
}

/** The tool a JSON-RPC body calls, for the call record. */
function toolOf(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined
  const message = body as { method?: unknown; params?: { name?: unknown } }
  return message.method === 'tools/call' && typeof message.params?.name === 'string' ? message.params.name.slice(0, 200) : undefined
}

/** The Fastify request as a web-standard Request (the SDK's face); the parsed body is passed separately. */
function webRequestOf(request: FastifyRequest, signal: AbortSignal): Request {
  const headers = new Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one)
  }
  const url = `${request.protocol}://${request.host}${request.url}`
  const body = request.body === undefined ? undefined : typeof request.body === 'string' ? request.body : JSON.stringify(request.body)
  return new Request(url, { method: request.method, headers, signal, ...(body !== undefined && request.method === 'POST' ? { body } : {}) })
}

async function sendWebResponse(reply: FastifyReply, response: Response): Promise<void> {
  const raw = reply.raw
  const headers: OutgoingHttpHeaders = { ...(reply.getHeaders() as OutgoingHttpHeaders) }
  response.headers.forEach((value, name) => {
    headers[name] = value
  })
  raw.writeHead(response.status, headers)
  if (!response.body) {
    raw.end()
    return
  }
  await new Promise<void>((resolve) => {
    const body = Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>)
    body.on('error', () => {
      raw.destroy()
      resolve()
    })
    raw.on('close', () => {
      body.destroy()
      resolve()
    })
    body.pipe(raw).on('finish', () => resolve())
  })
}

export function mcpRoutes(services: ApiServices, options: McpRouteOptions): AnyRoute[] {
  const allowed = new Set<string>()
  for (const entry of [options.publicUrl, ...(options.allowedOrigins ?? [])]) {
    const origin = originOf(entry)
    if (origin) allowed.add(origin)
  }

  // A fresh McpServer per request, from the caller the route authenticated (passed through the SDK
  // as authInfo, with the request's logger).
  const factory: McpServerFactory = ({ authInfo }) => {
    const context = authInfo?.extra as McpRequestExtra | undefined
    if (!context?.caller) throw new Error('MCP request without an authenticated caller')
    return createMcpServer(
      {
        queries: services.queries,
        config: services.config,
        proposals: services.proposals,
        publicUrl: options.publicUrl,
        onUnexpected: context.onUnexpected,
      },
      context.caller,
    )
  }
  // Modern (2026-07-28) traffic: the SDK's per-request handler. 'auto' answers with one JSON body
  // because no tool emits a message before its result ('json' would do the same but prints a
  // warning at every start).
  const modern = createMcpHandler(factory, { legacy: 'reject', responseMode: 'auto' })

  /**
   * Legacy (≤ 2025-11-25) traffic, stateless with JSON responses: the SDK's own stateless fallback
   * answers requests as SSE streams, so the legacy leg is routed here (the pattern the SDK
   * documents for isLegacyRequest) to a per-request transport with JSON responses.
   */
  async function serveLegacy(request: Request, authInfo: AuthInfo, parsedBody: unknown): Promise<Response> {
    const server = await factory({ era: 'legacy', authInfo, requestInfo: request })
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    await server.connect(transport)
    try {
      return await transport.handleRequest(request, { authInfo, parsedBody })
    } finally {
      await transport.close().catch(() => {})
      await server.close().catch(() => {})
    }
  }

  async function serve(request: Request, authInfo: AuthInfo, parsedBody: unknown): Promise<Response> {
    if (await isLegacyRequest(request, parsedBody)) return serveLegacy(request, authInfo, parsedBody)
    return modern.fetch(request, { authInfo, parsedBody })
  }

  const notAllowed = (method: 'GET' | 'DELETE') =>
    defineRoute({
      method,
      path: '/mcp',
      operationId: method === 'GET' ? 'mcpGetNotAllowed' : 'mcpDeleteNotAllowed',
      summary: `MCP: ${method} is not used (405)`,
      description:
        'The MCP endpoint is stateless and takes POST only: there is no GET event stream and no session to delete. Answered at once with 405 and `Allow: POST`.',
      tag: 'MCP',
      rights: ['mcp:use'],
      responses: { 405: { description: 'Method not allowed; use POST.', schema: envelope } },
      handler: async ({ reply }) =>
        reply
          .code(405)
          .header('allow', 'POST')
          .type('application/json; charset=utf-8')
          .send({
            HasError: true,
            Messages: {
              Error: `the MCP endpoint takes POST only (stateless Streamable HTTP: no ${method === 'GET' ? 'GET event stream' : 'sessions to delete'})`,
            },
          }),
    })

  return [
    defineRoute({
      method: 'POST',
      path: '/mcp',
      operationId: 'mcp',
      summary: 'MCP endpoint for AI clients (Streamable HTTP)',
      description: [
        'Model Context Protocol over Streamable HTTP, stateless with JSON responses. Serves MCP 2026-07-28 (no initialize handshake; `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers; `server/discover`)',
        'and the earlier revisions up to 2025-11-25 (starting with `initialize`). Tools: list_warm_queries, get_warm_query, run_warm_query (warm-queries:read), run_kql (queries:run),',
        'propose_change, get_proposal, list_proposals (proposals:create); warm queries are also resources (`provenant://warm-queries/{lookup}`). Tools the token may not use are not listed.',
        'Nothing here accepts, approves, commits or applies anything: proposals are reviewed in the portal. Browser requests must come from an allowed `Origin` (403 otherwise).',
      ].join(' '),
      tag: 'MCP',
      rights: ['mcp:use'],
      rawBody: { contentTypes: ['application/json'], schema: jsonRpcMessage, description: 'One JSON-RPC 2.0 request or notification.' },
      responses: {
        200: { description: 'The JSON-RPC response (JSON-RPC errors included, as MCP requires).', schema: jsonRpcMessage },
        202: { description: 'A notification was accepted (no body).' },
      },
      hijacks: true,
      handler: async ({ caller, request, reply, hijack }) => {
        const origin = request.headers.origin
        if (origin !== undefined && !allowed.has(originOf(origin) ?? `invalid:${origin}`)) {
          throw new ForbiddenError(
            `requests from the origin ${origin.slice(0, 200)} are not allowed on the MCP endpoint; allowed: ${[...allowed].join(', ') || '(none)'} (PROVENANT_ALLOWED_ORIGINS adds more)`,
          )
        }
        const current = await services.config.current(caller.workspaceId)
        if (!current.document.settings.capabilities.mcp)
          throw new NotProvisionedError("MCP is switched off in this workspace's settings (settings.capabilities.mcp)")

        const authInfo: AuthInfo = {
          // The token's id, not the token: nothing behind the SDK needs the secret.
          token: caller.tokenId ?? '',
          clientId: caller.accountId,
          scopes: [...caller.rights],
          ...(caller.expiresAt !== undefined ? { expiresAt: Math.floor(caller.expiresAt / 1000) } : {}),
          extra: {
            caller: { ...caller, via: 'mcp' },
            onUnexpected: (error, correlationId) => request.log.error({ err: error, correlationId }, 'MCP tool failed'),
          } satisfies McpRequestExtra,
        }
        const abort = new AbortController()
        reply.raw.on('close', () => abort.abort())
        const response = await serve(webRequestOf(request, abort.signal), authInfo, request.body)

        const tool = toolOf(request.body)
        await hijack(response.status, { kind: 'mcp', ...(tool !== undefined ? { tool } : {}) })
        await sendWebResponse(reply, response)
        return reply
      },
    }),
    notAllowed('GET'),
    notAllowed('DELETE'),
  ]
}
