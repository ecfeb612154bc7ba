/**
 * @module
 * Shared page helpers: wrap content in the shell, and the placeholder for pages of the second pass.
 */
import { type Html, html } from '../html.js'
import { NAV, type NavKey, renderLayout } from '../layout.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'

export function pageOf(ctx: PortalContext, title: string, active: NavKey | undefined, body: Html, status = 200): PortalResult {
  return { status, page: renderLayout({ title, active, session: ctx.session, workspaces: ctx.workspaces, body, version: ctx.deps.version }) }
}

/** The pages whose capability is built in parallel: navigable now, filled in the second pass. */
export function comingSoonRoutes(): PortalRoute[] {
  return NAV.filter((entry) => entry.comingWith !== undefined).map((entry) => definePortalRoute({
    method: 'GET',
    path: entry.href.slice('/portal'.length),
    rights: entry.rights,
    handler: async (ctx) => pageOf(ctx, entry.label, entry.key, html`
<h1>${entry.label}</h1>
<p class="lead">${entry.blurb}</p>
<div class="alert info soon-panel" role="status"><p>Coming soon: this page is being built together with the server's support for ${entry.comingWith ?? ''}.</p></div>`),
  }))
}
