/**
 * @module
 * How portal pages are declared: method, path, the rights the signed-in account's role must hold,
 * and a handler returning a page or a redirect. The plugin enforces sign-in, CSRF and the rights
 * before any handler runs, the same way /oi-api routes declare theirs (a viewer's forged POST to
 * an approver's action is a 403 before the handler sees it).
 */
import type { Readable } from 'node:stream'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { Caller } from '../domain/access/caller.js'
import type { Right } from '../domain/access/rights.js'
import type { PortalServices } from '../domain/services.js'
import type { PortalSession } from '../domain/sessions/session-service.js'
import type { WorkspaceMembership } from '../domain/sessions/session-store.js'
import type { Html } from './html.js'

export interface PortalDeps {
  readonly services: PortalServices
  /** The public base URL (cookies are Secure when it is https; links in pages). */
  readonly publicUrl: string
  readonly version: string
  /** The columnar tier's progress per connection of a workspace; absent when the tier is off. */
  readonly columnarProgress?: (workspaceId: string) => Promise<readonly ColumnarProgressView[]>
}

/** What the Connections page shows of the columnar compactor for one connection. */
export interface ColumnarProgressView {
  readonly lookup: string
  readonly segments: number
  readonly compactedRows: number
  /** Rows not compacted yet (every query reads them from the row store): the compactor's lag. */
  readonly tailRows: number
  readonly lastCompactedAt: number | undefined
}

export interface PortalContext {
  readonly deps: PortalDeps
  readonly request: FastifyRequest
  readonly reply: FastifyReply
  readonly session: PortalSession
  /** The session acting as an API caller: the API rights of the account's current role. */
  readonly caller: Caller
  /** The account's workspaces (for the workspace switcher). */
  readonly workspaces: readonly WorkspaceMembership[]
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  /** The submitted form (empty for GET). */
  readonly form: URLSearchParams
  /** The API's base URL to show in pages (the configured public URL). */
  readonly publicUrl: string
  /** The clock's now, once per request, so a page shows consistent relative times. */
  readonly now: number
}

export type PortalResult =
  | { readonly page: Html; readonly status?: number }
  | { readonly redirect: string }
  /** A JSON answer for the page's own script (the Explore page), already serialised. */
  | { readonly json: string; readonly status?: number }
  /** A file the browser saves (streamed; e.g. an activity-log export). */
  | { readonly download: Readable; readonly contentType: string; readonly fileName: string }

export interface PortalRoute {
  readonly method: 'GET' | 'POST'
  /** Path under /portal, e.g. `/api-keys/:id/revoke`. */
  readonly path: string
  /** Every right listed is required of the account's role; [] = any member of the workspace. */
  readonly rights: readonly Right[]
  readonly handler: (ctx: PortalContext) => Promise<PortalResult>
}

export function definePortalRoute(route: PortalRoute): PortalRoute {
  return route
}
