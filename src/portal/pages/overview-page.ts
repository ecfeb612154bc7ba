/**
 * @module
 * The portal's landing page: who you are, your role and its rights, and the pages you can open.
 */
import { apiRightsOf } from '../../domain/access/index.js'
import { timeTag } from '../format.js'
import { html } from '../html.js'
import { navFor } from '../layout.js'
import { definePortalRoute, type PortalRoute } from '../portal-route.js'
import { pageOf } from './page.js'

export function overviewRoutes(): PortalRoute[] {
  return [
    definePortalRoute({
      method: 'GET',
      path: '/',
      rights: [],
      handler: async (ctx) => {
        const { session } = ctx
        const pages = navFor(session).filter((entry) => entry.key !== 'overview')
        return pageOf(
          ctx,
          'Overview',
          'overview',
          html`
<h1>Welcome, ${session.account.displayName}</h1>
<p class="lead">You are signed in to the workspace <strong>${session.workspace.name}</strong> as <strong>${session.role}</strong>.
This session ends ${timeTag(session.expiresAt, ctx.now)}, or after 30 minutes without activity.</p>
<form method="post" action="/portal/sign-out" class="inline-form">
  <input type="hidden" name="_csrf" value="${session.csrfToken}"><input type="hidden" name="everywhere" value="1">
  <button type="submit" class="secondary small">Sign out everywhere</button>
  <span class="muted">Ends every session of your account, in every browser.</span>
</form>
<div class="cards">
${pages.map(
  (entry) => html`<section class="card" aria-labelledby="card-${entry.key}">
  <h2 id="card-${entry.key}"><a href="${entry.href}">${entry.label}</a></h2>
  <p>${entry.blurb}</p>
</section>`,
)}
</div>
<h2>Your API rights</h2>
<p class="muted">A token you create can carry these rights or fewer (never more).</p>
<ul class="chips">${apiRightsOf(session.role).map((r) => html`<li>${r}</li>`)}</ul>`,
        )
      },
    }),
  ]
}
