/**
 * @module
 * "Every call is recorded" (spec 1, design §5): each /oi-api call appends an `api-call` record to
 * the workspace-level activity log, committed before the response is sent. Routes that hijack the
 * reply (SSE, WebSocket, MCP) skip Fastify's onSend: they declare `hijacks: true` and hijack through
 * the route context, and the route registry calls recordHijackedCall() just before hijacking.
 * Routes that append an event declare `commitsCallWithEvent: true`: the registry hands the domain
 * command a pending record (recordCallAhead), queued in the event's group commit.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { ApiCall } from '../../domain/activity/index.js'
import { DomainError } from '../../domain/errors.js'
import { envelope } from '../error-envelope.js'

/** A call as the activity log records it (the domain's `ApiCall`: method, route template, status, caller …). */
export type CallRecord = ApiCall

export interface CallRecorder {
  /** MUST resolve only after the record is committed; rejects when it cannot be recorded. */
  record(workspaceId: string, call: CallRecord): Promise<void>
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the /oi-api context (registerCallRecording). */
    callRecorder?: CallRecorder
    /** A call record submitted ahead of the reply (recordCallAhead): its status and outcome. */
    callAhead?: { readonly status: number; readonly committed: Promise<boolean> }
  }
}

/**
 * Submits the call's record now, with the status the reply will have if the work just queued
 * commits, so both share one group commit (an append costs one commit instead of two). Only the
 * route registry calls it, as the PendingCallRecord a `commitsCallWithEvent` route hands to the
 * domain, which queues it in the same synchronous stretch as the event. If the reply ends up with another
 * status, or this record was not committed, onSend records the call as usual; `durationMs` is then
 * measured up to this point, not up to the reply.
 */
export function recordCallAhead(request: FastifyRequest, reply: FastifyReply, status: number): void {
  if (!request.callRecorder || !request.caller) return
  const committed = request.callRecorder.record(request.caller.workspaceId, callRecordOf(request, reply, status)).then(
    () => true,
    () => false,
  )
  request.callAhead = { status, committed }
}

export function callRecordOf(request: FastifyRequest, reply: FastifyReply, status: number, via?: CallRecord['via']): CallRecord {
  return {
    method: request.method,
    route: request.routeOptions.url ?? 'unknown',
    status,
    durationMs: Math.round(reply.elapsedTime * 1000) / 1000,
    requestId: String(request.id),
    clientAddress: request.ip,
    tokenId: request.caller?.tokenId,
    accountId: request.caller?.accountId,
    accountName: request.caller?.accountName,
    ...(via ? { via } : {}),
  }
}

/** Records a call whose reply is about to be hijacked (SSE, WebSocket upgrade, MCP): the route registry's. */
export async function recordHijackedCall(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  via?: CallRecord['via'],
): Promise<void> {
  if (!request.callRecorder || !request.caller) return
  await request.callRecorder.record(request.caller.workspaceId, callRecordOf(request, reply, status, via))
}

/**
 * Installs call recording on the /oi-api context: every reply of an authenticated call waits in
 * onSend until its `api-call` record is committed. Calls without a valid token are not recorded in
 * any workspace's log (no workspace is known); the server log has them.
 *
 * NOTE: this must stay an onSend hook. onResponse runs after the reply was written, which would let
 * a call go unrecorded (design §5). When the record cannot be committed, the reply is replaced by a
 * 503 envelope and the original payload (a stream, say) is discarded unsent.
 */
export function registerCallRecording(api: FastifyInstance, recorder: CallRecorder): void {
  api.addHook('onRequest', async (request) => {
    request.callRecorder = recorder
  })
  api.addHook('onSend', async (request, reply, payload) => {
    const caller = request.caller
    if (!caller) return payload
    if (request.callAhead && request.callAhead.status === reply.statusCode && (await request.callAhead.committed)) return payload
    try {
      await recorder.record(caller.workspaceId, callRecordOf(request, reply, reply.statusCode))
      return payload
    } catch (error) {
      // A log that failed its integrity check (its chain head is not what the server signed) is not
      // a passing outage: the reply says so, as a 500, like the refused append itself.
      const integrity = error instanceof DomainError && error.kind === 'integrity'
      request.log.error({ err: error }, `the api-call record could not be committed; the call is answered ${integrity ? 500 : 503}`)
      const stream = payload as { destroy?: (error?: Error) => void } | null
      if (stream && typeof stream === 'object' && typeof stream.destroy === 'function') stream.destroy()
      reply.code(integrity ? 500 : 503)
      reply.removeHeader('content-disposition')
      reply.removeHeader('content-length')
      reply.header('content-type', 'application/json; charset=utf-8')
      const message =
        integrity || (error instanceof Error && error.name === 'UnavailableError')
          ? (error as Error).message
          : 'the activity log could not record this call, so it was not completed; retry shortly'
      return JSON.stringify(envelope(message))
    }
  })
}
