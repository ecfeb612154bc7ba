/**
 * @module
 * One registry of /oi-api operations. Each route declares method, path, required rights, request
 * and response schemas (zod 4) and a summary; the same declaration drives request validation, the
 * right check and the OpenAPI 3.1 description (spec 4.4), so the document can never drift from
 * what the server does. Routes that answer on the raw socket declare `hijacks: true` and hijack
 * through the context, which records their call (spec 1: every call is recorded); routes whose
 * event commits with their call's record declare `commitsCallWithEvent: true` and hand the
 * context's `callRecord` to the domain command (issue 19 item 4).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { z } from 'zod'
import type { ApiRight, Caller } from '../domain/access/index.js'
import { ForbiddenError, InvalidInputError, UnauthenticatedError } from '../domain/errors.js'
import type { PendingCallRecord } from '../domain/ledger/index.js'
import { type CallRecord, recordCallAhead, recordHijackedCall } from './plugins/record-call.js'
import { normaliseKeys } from './wire/case-insensitive.js'
import { parseBodyOfKind, type UnparsedBody } from './wire/json-body.js'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE'

export interface ResponseSpec {
  readonly description: string
  readonly schema?: z.ZodType
  /** Defaults to application/json. */
  readonly contentType?: string
}

export interface RouteContext<P, Q, B> {
  readonly caller: Caller
  readonly params: P
  readonly query: Q
  readonly body: B
  readonly request: FastifyRequest
  readonly reply: FastifyReply
  /**
   * For a route declared with `hijacks: true` (SSE, WebSocket, MCP): records the call with the
   * status the raw reply will have (Fastify's onSend, which records every other call, never runs
   * for a hijacked reply), then hijacks the reply. Rejects, with nothing hijacked, when the call
   * cannot be recorded. A route without the flag that calls it is a bug (it throws).
   */
  readonly hijack: (status: number, via?: CallRecord['via']) => Promise<void>
  /**
   * For a route declared with `commitsCallWithEvent: true`: this call's record with status 200, to
   * hand to the domain command that appends the event (whose `call` parameter is mandatory), which
   * queues it in the event's group commit. If the reply ends with another status or the record did
   * not commit, onSend records the call as usual (record-call.ts). Null without the flag: the call
   * is then recorded by onSend alone, in a commit of its own.
   */
  readonly callRecord: PendingCallRecord | null
}

export interface RouteSpec<P = unknown, Q = unknown, B = unknown> {
  readonly method: HttpMethod
  /** Fastify path relative to /oi-api, e.g. `/provenance/events/verify` or `/warm-queries/*`. */
  readonly path: string
  /** OpenAPI path when it differs from the Fastify one (wildcards): `/warm-queries/{lookup}`. */
  readonly openapiPath?: string
  readonly operationId: string
  readonly summary: string
  readonly description?: string
  readonly tag: string
  /** Every right listed is required; an empty list means any valid token. */
  readonly rights: readonly ApiRight[]
  readonly deprecated?: boolean
  readonly params?: z.ZodType<P>
  readonly query?: z.ZodType<Q>
  readonly body?: z.ZodType<B>
  /**
   * A body the handler parses itself (several content types, e.g. JSON and NDJSON): no validation
   * here; documented in OpenAPI with `schema` under each content type.
   */
  readonly rawBody?: { readonly contentTypes: readonly string[]; readonly schema: z.ZodType; readonly description: string }
  /**
   * With `rawBody`: the body reaches the handler unparsed, as `request.body` an UnparsedBody (its
   * bytes and whether its Content-Type is JSON or text) or undefined when there is none, so that
   * the handler can read it in one pass (push ingest). The errors keep their order: a body that
   * would not parse is still refused before the right and path checks (checkRequest).
   */
  readonly bodyBytes?: true
  /** Body size limit in bytes (default 1 MiB). */
  readonly bodyLimit?: number
  /**
   * JSON integers beyond ±2^53 that fit 64 bits arrive as bigints instead of a 400 (ingest of
   * exact KQL longs); other routes keep refusing numbers JavaScript would round.
   */
  readonly exactIntegers?: boolean
  /** The handler answers on the raw socket (ctx.hijack): the registry records the call for it. */
  readonly hijacks?: true
  /** The handler appends an event that commits with this call's record (ctx.callRecord). */
  readonly commitsCallWithEvent?: true
  readonly responses: Readonly<Record<number, ResponseSpec>>
  /** Returns the JSON body of a 200 (or sends the reply itself and returns the reply). */
  readonly handler: (ctx: RouteContext<P, Q, B>) => Promise<unknown>
}

/** A route with its type parameters erased, so routes of different shapes fit one list. */
export type AnyRoute = RouteSpec<unknown, unknown, unknown>

/**
 * Checks a route's handler against its own schemas, then erases the types. The erasure is sound:
 * registerRoutes passes the handler only what `params`, `query` and `body` produced.
 */
export function defineRoute<P, Q, B>(spec: RouteSpec<P, Q, B>): AnyRoute {
  return spec as unknown as AnyRoute
}

/** The declared property names of an object schema (through optional/default/pipe wrappers). */
export function objectKeys(schema: z.ZodType | undefined): string[] {
  let current: unknown = schema
  for (let depth = 0; depth < 10 && current; depth++) {
    if (current instanceof z.ZodObject) return Object.keys(current.shape)
    const def = (current as { def?: { innerType?: unknown; in?: unknown; schema?: unknown } }).def
    current = def?.innerType ?? def?.in ?? def?.schema
  }
  return []
}

function describeIssues(where: string, error: z.ZodError): string {
  return error.issues
    .slice(0, 10)
    .map((issue) => {
      const path = issue.path.map(String).join('.')
      return `${where}${path ? `.${path}` : ''}: ${issue.message}`
    })
    .join('; ')
}

function validate<T>(where: string, schema: z.ZodType<T> | undefined, value: unknown): T {
  if (!schema) return value as T
  // A missing body or query is validated as an empty object, so the messages name the fields
  // that are required ("reason is required") rather than the missing body.
  const missing = value === undefined || value === null
  const input = missing
    ? where === 'body' && schema.safeParse(undefined).success
      ? undefined
      : {}
    : normaliseKeys(value, objectKeys(schema))
  const result = schema.safeParse(input)
  if (!result.success) throw new InvalidInputError(describeIssues(where, result.error))
  return result.data
}

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller
  }
}

export function missingRights(caller: Caller, rights: readonly ApiRight[]): ApiRight[] {
  return rights.filter((r) => !caller.rights.has(r))
}

/** The caller, rights, path, query and body checks every route gets before its handler. */
function checkRequest(route: AnyRoute, request: FastifyRequest): { caller: Caller; params: unknown; query: unknown; body: unknown } {
  try {
    const caller = request.caller
    if (!caller) throw new UnauthenticatedError('missing Authorization header; send "Authorization: Bearer <token>"')
    const missing = missingRights(caller, route.rights)
    if (missing.length > 0) {
      throw new ForbiddenError(
        `this token lacks the right${missing.length > 1 ? 's' : ''} ${missing.join(', ')} needed for ${route.method} ${route.openapiPath ?? route.path}`,
      )
    }
    const params = validate('path', route.params, request.params)
    const query = validate('query', route.query, request.query)
    const body = validate('body', route.body, request.body)
    return { caller, params, query, body }
  } catch (error) {
    // A parsed body would have been refused before these checks ran: an unparsed one still is.
    if (route.bodyBytes === true && request.body !== undefined) {
      const { bytes, kind } = request.body as UnparsedBody
      parseBodyOfKind(bytes, kind, { exactIntegers: route.exactIntegers === true })
    }
    throw error
  }
}

/** Registers the routes on an encapsulated /oi-api context whose onRequest hook sets `request.caller`. */
export function registerRoutes(app: FastifyInstance, routes: readonly AnyRoute[]): void {
  for (const route of routes) {
    app.route({
      method: route.method,
      url: route.path,
      bodyLimit: route.bodyLimit ?? 1024 * 1024,
      config: { exactIntegers: route.exactIntegers === true, bodyBytes: route.bodyBytes === true },
      handler: async (request, reply) => {
        const { caller, params, query, body } = checkRequest(route, request)
        const hijack = async (status: number, via?: CallRecord['via']): Promise<void> => {
          if (route.hijacks !== true)
            throw new Error(
              `${route.method} ${route.path} hijacks its reply without declaring hijacks: true, so its call would go unrecorded`,
            )
          await recordHijackedCall(request, reply, status, via)
          reply.hijack()
        }
        const callRecord: PendingCallRecord | null =
          route.commitsCallWithEvent === true ? { queue: () => recordCallAhead(request, reply, 200) } : null
        const result = await route.handler({ caller, params, query, body, request, reply, hijack, callRecord })
        if (result === reply || reply.sent) return reply
        return result
      },
    })
  }
}
