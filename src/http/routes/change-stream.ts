/**
 * @module
 * The change stream (spec 4.3, 6; design §9): `GET /oi-api/eac-changes/stream`, Server-Sent Events
 * with one `change` message per committed workspace change. `Last-Event-ID` (the header a
 * reconnecting EventSource sends, or the `lastEventId` query parameter) replays every change after
 * it before going live. Errors before the stream starts are ordinary error envelopes; after that
 * the stream simply ends and the client reconnects with its last id.
 */
import type { OutgoingHttpHeaders, Server, ServerResponse } from 'node:http'
import { z } from 'zod'
import type { WorkspaceChange } from '../../domain/changes/workspace-change.js'
import { NotProvisionedError } from '../../domain/errors.js'
import type { ApiServices } from '../../domain/services.js'
import { parseLastEventId } from '../../domain/streams/change-feed.js'
import { type AnyRoute, defineRoute } from '../route-registry.js'

export interface ChangeStreamOptions {
  /** Interval of the heartbeat comment (default 15 s). */
  readonly heartbeatMs?: number
  /** Reconnection delay advised to clients with `retry:` (default 3 s). */
  readonly retryMs?: number
}

/** The `data:` of a change message (documented in the OpenAPI description). */
export const changeEventData = z.object({
  id: z
    .number()
    .int()
    .describe("The change's sequence number in the workspace (also the SSE `id:`); increases by one per committed change."),
  kind: z
    .enum(['config', 'token', 'correction', 'proposal', 'connection', 'credentials', 'account'])
    .describe('What kind of thing changed.'),
  entityType: z.string().describe("The changed entity's type, e.g. `config`, `token`, `proposal`."),
  entityId: z.string().describe("The changed entity's id (a commit id, token id, proposal id, …)."),
  action: z.string().describe('What happened, e.g. `committed`, `created`, `revoked`, `accepted`, `rejected`, `superseded`.'),
  actor: z.object({ id: z.string(), name: z.string() }).describe('Who made the change (`system` for automatic transitions).'),
  at: z.string().describe('Commit time, ISO 8601 UTC.'),
  commitId: z.string().nullable().describe('The configuration commit the change made or belongs to, else null.'),
  summary: z.string().describe('A short human-readable description (never a secret).'),
})

export function changeEventOf(change: WorkspaceChange): z.output<typeof changeEventData> {
  return {
    id: change.seq,
    kind: change.kind,
    entityType: change.entityType,
    entityId: change.entityId,
    action: change.action,
    actor: { id: change.actorId, name: change.actorName },
    at: new Date(change.at).toISOString(),
    commitId: change.commitId ?? null,
    summary: change.summary,
  }
}

/** One SSE message; `data` is single-line JSON, so it needs one `data:` line. */
export function sseMessage(change: WorkspaceChange): string {
  return `id: ${change.seq}\nevent: change\ndata: ${JSON.stringify(changeEventOf(change))}\n\n`
}

// Node's server.close() waits for open connections, and an SSE stream never ends by itself, so
// streams end themselves once their server stops listening (Fastify's close, a process shutdown);
// clients then reconnect, to another process when there is one. One shared watcher for all streams.
const openStreams = new Map<ServerResponse, { server: Server; end: (reason: string) => void }>()
let watcher: NodeJS.Timeout | undefined

function watch(raw: ServerResponse, server: Server, end: (reason: string) => void): void {
  openStreams.set(raw, { server, end })
  watcher ??= setInterval(() => {
    for (const stream of openStreams.values()) if (!stream.server.listening) stream.end('the server is shutting down')
    if (openStreams.size === 0 && watcher) {
      clearInterval(watcher)
      watcher = undefined
    }
  }, 500).unref()
}

export function changeStreamRoutes(services: ApiServices, options: ChangeStreamOptions = {}): AnyRoute[] {
  const heartbeatMs = options.heartbeatMs ?? 15_000
  const retryMs = options.retryMs ?? 3_000
  return [
    defineRoute({
      method: 'GET',
      path: '/eac-changes/stream',
      operationId: 'streamChanges',
      summary: 'Stream committed workspace changes (Server-Sent Events)',
      description: [
        'Emits one `change` message after every committed change to the workspace: configuration commits (warm queries approved, changed or removed),',
        'proposals filed, accepted, rejected or superseded, corrections, connection and credential changes (never the secret), token creation and revocation.',
        "Each message has `id:` (the change's sequence number), `event: change` and `data:` (JSON, the schema below). Nothing is sent for a change that rolled back.",
        'A reconnecting client sends `Last-Event-ID` (EventSource does this itself) or `?lastEventId=`: every change after it is replayed in order before live ones, without gaps or duplicates.',
        "A token limited to some scope keys, connections or surfaces receives nothing about other scopes: no correction of another scope key or of another connection's rows, no connection or credential change of another connection, and configuration summaries list only what it may see (skipped changes leave gaps in the ids).",
        `A heartbeat comment is sent every ${heartbeatMs / 1000} s. The stream ends when the token expires or is revoked.`,
      ].join(' '),
      tag: 'Streams',
      rights: ['streams:changes'],
      query: z.object({
        lastEventId: z
          .string()
          .max(20)
          .optional()
          .describe('Resume after this change id (as the Last-Event-ID header; the header wins when both are sent).'),
      }),
      responses: {
        200: {
          description: "An SSE stream of `change` messages; the schema is that of each message's `data:`.",
          contentType: 'text/event-stream',
          schema: changeEventData,
        },
      },
      hijacks: true,
      handler: async ({ caller, query, request, reply, hijack }) => {
        const current = await services.config.current(caller.workspaceId)
        if (!current.document.settings.capabilities.changeStream)
          throw new NotProvisionedError(
            "the change stream is switched off in this workspace's settings (settings.capabilities.changeStream)",
          )
        const header = request.headers['last-event-id']
        const afterSeq = parseLastEventId(typeof header === 'string' && header.trim() !== '' ? header : query.lastEventId)

        const viewOf = services.changeFeed.viewFor(caller)
        const raw = reply.raw
        let ended = false
        let timers: NodeJS.Timeout[] = []
        let drained: (() => void) | undefined
        let unwatch: (() => void) | undefined
        const end = (reason: string): void => {
          if (ended) return
          ended = true
          feed.close()
          unwatch?.()
          for (const timer of timers) clearTimeout(timer)
          timers = []
          openStreams.delete(raw)
          drained?.()
          // The connection was this stream's alone: close it rather than leave an idle keep-alive
          // socket that would hold up a shutdown until the client's next request on it.
          const socket = raw.socket
          if (!raw.destroyed && !raw.writableEnded) raw.end(`: ${reason}\n\n`, () => socket?.destroy())
        }
        const feed = await services.changeFeed.open(caller.workspaceId, afterSeq, {
          write: async (change) => {
            if (ended) return
            // Changes about scopes outside the token's are skipped (their ids too): issue 14 item 6.
            const visible = await viewOf(change)
            if (ended) return
            const more = visible ? raw.write(sseMessage(visible)) : true
            if (change.kind === 'token' && change.action === 'revoked' && change.entityId === caller.tokenId)
              end('the token of this stream was revoked')
            // Read uncached: the announcement can arrive before this process's config cache is invalidated.
            else if (
              change.kind === 'config' &&
              !(await services.config.fresh(caller.workspaceId)).document.settings.capabilities.changeStream
            )
              end('the change stream was switched off')
            if (!more && !ended)
              await new Promise<void>((resolve) => {
                drained = resolve
                raw.once('drain', resolve)
              })
          },
          fail: (error) => {
            request.log.error({ err: error }, 'change stream failed')
            end('the stream failed; reconnect to resume')
          },
        })

        try {
          await hijack(200)
        } catch (error) {
          feed.close()
          throw error
        }
        raw.writeHead(200, {
          ...(reply.getHeaders() as OutgoingHttpHeaders),
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-store',
          'x-accel-buffering': 'no',
        })
        raw.write(`retry: ${retryMs}\n: connected; changes after ${feed.lastSeq} follow\n\n`)
        raw.on('close', () => end('closed'))
        // Revoked, expired or disabled by anyone, in any process (issue 14 item 7): the guard asks storage.
        unwatch = services.streamGuard.watch(caller, (reason) => end(`the stream ended: ${reason}`))
        watch(raw, request.server.server, end)
        const beat = (): void => {
          if (ended) return
          raw.write(': heartbeat\n\n')
          feed.poll()
          timers[0] = setTimeout(beat, heartbeatMs)
        }
        timers[0] = setTimeout(beat, heartbeatMs)
        if (caller.expiresAt !== undefined) {
          // setTimeout holds at most 2^31-1 ms (24.8 days); tokens live up to 30 days.
          const expire = (): void => {
            const left = caller.expiresAt! - services.clock.now()
            if (left <= 0) end('the token expired')
            else timers[1] = setTimeout(expire, Math.min(left, 2 ** 31 - 1))
          }
          expire()
        }
        feed.start()
        return reply
      },
    }),
  ]
}
