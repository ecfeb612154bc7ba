/**
 * @module
 * THE mapping from errors to responses (statuses from HTTP_STATUS in domain/errors.ts, shared with
 * the portal) and the spec's error envelope (spec 2.11, 7):
 * `{"HasError": true, "Messages": {"Error": "..."}}`. Deliberate errors keep their message; anything
 * unexpected becomes a generic 500 with a correlation id, and its details go only to the log.
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { DomainError, HTTP_STATUS } from '../domain/errors.js'
import { scrub } from '../shared/secret-scrubber.js'

export interface ErrorEnvelope {
  readonly HasError: true
  readonly Messages: { readonly Error: string }
}

/** The envelope of `message`, with any registered secret scrubbed out (design §11). */
export function envelope(message: string): ErrorEnvelope {
  return { HasError: true, Messages: { Error: scrub(message) } }
}

export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  if (status === 401) reply.header('WWW-Authenticate', 'Bearer realm="oi-api"')
  return reply.code(status).type('application/json; charset=utf-8').send(envelope(message))
}

/** Fastify's own client errors (bad JSON, body too large, wrong content type) are 400s for us. */
function frameworkClientError(error: FastifyError): string | undefined {
  const status = error.statusCode ?? 0
  if (status < 400 || status >= 500) return undefined
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'the request body is larger than this endpoint accepts'
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `unsupported Content-Type; send application/json`
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'the request body is empty; send a JSON object'
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return `the request body is not valid JSON: ${error.message}`
    default:
      return error.message
  }
}

export function registerErrorEnvelope(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error instanceof DomainError) return sendError(reply, HTTP_STATUS[error.kind], error.message)
    const clientMessage = frameworkClientError(error)
    if (clientMessage !== undefined) return sendError(reply, error.statusCode === 404 ? 404 : 400, clientMessage)
    request.log.error({ err: error }, 'unhandled error')
    return sendError(reply, 500, `internal error; the server log has the details under correlation id ${request.id}`)
  })
}
