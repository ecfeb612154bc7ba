/**
 * @module
 * "Every call is recorded" (spec 1, design §5): each /oi-api call appends an `api-call` record to
 * the workspace-level activity log, committed before the response is sent. Routes that hijack the
 * reply (SSE, WebSocket, MCP) skip Fastify's onSend, so they call recordHijackedCall() themselves
 * just before hijacking.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'

export interface CallRecord {
  readonly method: string
  /** The route template (`/oi-api/warm-queries/*`), never the raw URL (no query strings, no secrets). */
  readonly route: string
  readonly status: number
  readonly durationMs: number
  readonly requestId: string
  readonly clientAddress: string
  readonly tokenId: string | undefined
  readonly accountId: string | undefined
  readonly accountName: string | undefined
  /** Set when an AI client acted for the token's owner (MCP), with the tool name. */
  readonly via?: { readonly kind: 'mcp'; readonly tool?: string }
}

export interface CallRecorder {
  /** MUST resolve only after the record is committed; rejects when it cannot be recorded. */
  record(workspaceId: string, call: CallRecord): Promise<void>
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the /oi-api context; undefined until call recording is wired. */
    callRecorder?: CallRecorder
  }
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

/** Records a call whose reply is about to be hijacked (SSE, WebSocket upgrade, MCP). */
export async function recordHijackedCall(request: FastifyRequest, reply: FastifyReply, status: number, via?: CallRecord['via']): Promise<void> {
  if (!request.callRecorder || !request.caller) return
  await request.callRecorder.record(request.caller.workspaceId, callRecordOf(request, reply, status, via))
}
