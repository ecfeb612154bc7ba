/**
 * @module
 * The portal's shell: top bar (workspace, account, role, sign-out), side navigation for every page
 * of issue 9 the role may open, and the main region. Pages render only their content.
 */
import { type Right, roleHas } from '../domain/access/index.js'
import type { PortalSession, WorkspaceMembership } from '../domain/sessions/index.js'
import { type Html, html } from './html.js'
import { PORTAL_CSS, PORTAL_JS } from './portal-assets.js'

export type NavKey = 'overview' | 'warm-queries' | 'explore' | 'api-keys' | 'proposals' | 'corrections' | 'activity' | 'connections'

export interface NavEntry {
  readonly key: NavKey
  readonly label: string
  readonly href: string
  /** What the role must hold to open the page (the page's route declares the same). */
  readonly rights: readonly Right[]
  /** One line for the overview page. */
  readonly blurb: string
}

export const NAV: readonly NavEntry[] = [
  { key: 'overview', label: 'Overview', href: '/portal/', rights: [], blurb: 'Your workspace, role and what you can do here.' },
  {
    key: 'warm-queries',
    label: 'Warm queries',
    href: '/portal/warm-queries',
    rights: ['warm-queries:read'],
    blurb: 'Approved queries with their approver: read the KQL, run a preview, see a chart.',
  },
  {
    key: 'explore',
    label: 'Explore',
    href: '/portal/explore',
    rights: ['queries:run'],
    blurb: 'Write KQL with completion, run it, see a grid and a chart, download it or propose it as a warm query.',
  },
  {
    key: 'api-keys',
    label: 'API keys',
    href: '/portal/api-keys',
    rights: [],
    blurb: 'Create tokens for the API with an expiry, rights and scopes; revoke them at once.',
  },
  {
    key: 'proposals',
    label: 'Proposals',
    href: '/portal/proposals',
    rights: ['proposals:create'],
    blurb: 'Changes proposed by people and AI clients (MCP), with a readable diff; accept or reject.',
  },
  {
    key: 'corrections',
    label: 'Corrections',
    href: '/portal/corrections',
    rights: ['amendments:read'],
    blurb: 'Pending corrections with before and after; approve or reject with an electronic signature.',
  },
  {
    key: 'activity',
    label: 'Activity log',
    href: '/portal/activity',
    rights: ['provenance:read'],
    blurb: 'Every call and decision, tamper-evident: browse, filter, verify the chain, export.',
  },
  {
    key: 'connections',
    label: 'Connections',
    href: '/portal/connections',
    rights: ['connections:manage'],
    blurb: 'Connector status (last run, rows, last error) and write-only credentials.',
  },
]

export function navFor(session: PortalSession): NavEntry[] {
  return NAV.filter((entry) => entry.rights.every((r) => roleHas(session.role, r)))
}

function head(title: string, extra: Html | undefined = undefined): Html {
  return html`<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Provenant</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/portal/assets/${PORTAL_CSS.name}">
<script src="/portal/assets/${PORTAL_JS.name}" defer></script>${extra ?? ''}`
}

export interface LayoutInput {
  readonly title: string
  readonly active: NavKey | undefined
  readonly session: PortalSession
  readonly workspaces: readonly WorkspaceMembership[]
  readonly body: Html
  readonly version: string
  /** More stylesheets and scripts for this page (the Explore page's bundle). */
  readonly extraHead?: Html
}

export function renderLayout(input: LayoutInput): Html {
  const { session } = input
  const csrf = session.csrfToken
  return html`<!doctype html>
<html lang="en">
<head>${head(input.title, input.extraHead)}</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="topbar">
  <a class="brand" href="/portal/"><span class="brand-mark" aria-hidden="true"></span>Provenant</a>
  ${
    input.workspaces.length > 1
      ? html`<form method="post" action="/portal/workspace"><input type="hidden" name="_csrf" value="${csrf}">
      <label for="workspace-switch">Workspace</label>
      <select id="workspace-switch" name="workspace">${input.workspaces.map((m) => html`<option value="${m.workspace.name}"${m.workspace.id === session.workspace.id ? html` selected` : ''}>${m.workspace.name}</option>`)}</select>
      <button class="btn-quiet" type="submit">Switch</button></form>`
      : html`<span class="who">Workspace <strong>${session.workspace.name}</strong></span>`
  }
  <span class="spacer"></span>
  <span class="who">Signed in as <strong>${session.account.displayName}</strong>${session.account.displayName !== session.account.name ? html` (${session.account.name})` : ''}<span class="role-badge">${session.role}</span></span>
  <form method="post" action="/portal/sign-out"><input type="hidden" name="_csrf" value="${csrf}"><button class="btn-quiet" type="submit">Sign out</button></form>
</header>
<div class="frame">
  <nav class="sidenav" aria-label="Portal">
    <ul>${navFor(session).map((entry) => html`<li><a href="${entry.href}"${entry.key === input.active ? html` aria-current="page"` : ''}>${entry.label}</a></li>`)}</ul>
  </nav>
  <main id="main" tabindex="-1">
${input.body}
  </main>
</div>
<footer class="page-foot">Provenant ${input.version}</footer>
</body>
</html>`
}

/** A page without the signed-in shell (sign-in, errors before sign-in). */
export function renderBarePage(title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en">
<head>${head(title)}</head>
<body>
<main id="main">
${body}
</main>
</body>
</html>`
}
