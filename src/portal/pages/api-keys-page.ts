/**
 * @module
 * API Keys (spec 5.3, 5.8): create a token with a name, an expiry from the spec's list or a custom
 * duration, a subset of the account's rights and optional scopes; the token is shown once, on the
 * response to the creating POST, and never again (only its record is stored). The list shows every
 * token of the account (administrators: of the workspace) with its status; revoking takes effect on
 * the next API request in every process.
 */

import type { TokenViewer } from '../../domain/access/access-service.js'
import type { TokenRecord } from '../../domain/access/access-store.js'
import type { TokenScopes } from '../../domain/access/caller.js'
import { type ApiRight, apiRightsOf, roleHas } from '../../domain/access/rights.js'
import { EXPIRY_CHOICES } from '../../domain/access/token-expiry.js'
import { InvalidInputError } from '../../domain/errors.js'
import { timeTag } from '../format.js'
import { type Html, html } from '../html.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'
import { pageOf } from './page.js'

/** What the creation form holds, so a refused submission is shown again as it was typed. */
interface TokenForm {
  readonly name: string
  readonly expires: string
  readonly customExpires: string
  readonly rights: ReadonlySet<string>
  readonly connections: ReadonlySet<string>
  readonly surfaces: ReadonlySet<string>
  readonly scopeKeys: string
}

interface CreatedView {
  readonly token: string
  readonly record: TokenRecord
}

interface PageState {
  readonly form: TokenForm
  readonly error?: { readonly field: 'name' | 'expires' | 'rights' | 'scopes' | undefined; readonly message: string }
  readonly created?: CreatedView
  readonly notice?: string
}

const RIGHT_HELP: Readonly<Record<ApiRight, string>> = {
  'warm-queries:read': 'run warm queries',
  'queries:run': 'run ad-hoc KQL',
  'exports:create': 'export cold data',
  'streams:live': 'read the live stream',
  'streams:changes': 'read the change stream',
  'mcp:use': 'use the MCP endpoint',
  'proposals:create': 'propose changes (MCP)',
  'provenance:read': 'read the activity log',
  'provenance:append': 'append to the activity log',
  'provenance:verify': 'verify the activity log',
  'amendments:read': 'read corrections',
  'amendments:create': 'create corrections',
  'amendments:approve': 'approve corrections',
  'ingest:write': 'push rows',
}

function emptyForm(rights: readonly ApiRight[]): TokenForm {
  return { name: '', expires: '8h', customExpires: '', rights: new Set(rights), connections: new Set(), surfaces: new Set(), scopeKeys: '' }
}

function formOf(form: URLSearchParams): TokenForm {
  return {
    name: form.get('name') ?? '',
    expires: form.get('expires') ?? '',
    customExpires: form.get('customExpires') ?? '',
    rights: new Set(form.getAll('rights')),
    connections: new Set(form.getAll('connections')),
    surfaces: new Set(form.getAll('surfaces')),
    scopeKeys: form.get('scopeKeys') ?? '',
  }
}

function statusOf(token: TokenRecord, now: number): 'active' | 'expired' | 'revoked' {
  if (token.revokedAt !== undefined) return 'revoked'
  return token.expiresAt <= now ? 'expired' : 'active'
}

function scopesText(scopes: TokenScopes): Html {
  const parts = (['connections', 'surfaces', 'scopeKeys'] as const).flatMap((d) =>
    scopes[d] ? [html`<div><span class="muted">${d === 'scopeKeys' ? 'scope keys' : d}:</span> ${scopes[d]!.join(', ')}</div>`] : [],
  )
  return parts.length ? html`${parts}` : html`<span class="muted">all</span>`
}

async function render(ctx: PortalContext, state: PageState, status = 200): Promise<PortalResult> {
  const { session, now, deps } = ctx
  const services = deps.services
  const ownRights = apiRightsOf(session.role)
  const manageAll = roleHas(session.role, 'accounts:manage')
  const tokens = await services.access.listTokens(session.workspace.id, manageAll ? undefined : session.account.id)
  const owners = manageAll
    ? new Map((await services.admin.listMembers(session.workspace.id)).map((m) => [m.account.id, m.account.name]))
    : undefined
  const config = (await services.config.current(session.workspace.id)).document
  const f = state.form
  const err = state.error
  const invalid = (field: string) => (err?.field === field ? html` aria-invalid="true" aria-describedby="token-error"` : '')
  const csrf = session.csrfToken
  const created = state.created

  return pageOf(
    ctx,
    'API keys',
    'api-keys',
    html`
<h1>API keys</h1>
<p class="lead">Tokens let programs call the API (<code>${ctx.publicUrl}/oi-api/</code>) as you. A token carries your rights or fewer,
is shown once when it is created, and can be revoked here at any time: it stops working at once.</p>
${state.notice ? html`<div class="alert success" role="status"><p>${state.notice}</p></div>` : ''}
${
  created
    ? html`<section class="alert success" aria-labelledby="new-token-title" id="new-token-panel">
  <h2 id="new-token-title">Token “${created.record.name}” created</h2>
  <p><strong>Copy it now: it is shown only this once.</strong> It expires ${timeTag(created.record.expiresAt, now)}.</p>
  <label for="new-token">Your new token</label>
  <div class="copy-row">
    <input id="new-token" type="text" readonly value="${created.token}" spellcheck="false" autocomplete="off" data-select-on-focus>
    <button type="button" class="secondary" data-copy="new-token" data-status="copy-status" hidden>Copy</button>
  </div>
  <p id="copy-status" class="muted" aria-live="polite"></p>
  <p>Send it as <code>Authorization: Bearer &lt;token&gt;</code>, for example
  <code>curl -H "Authorization: Bearer $TOKEN" ${ctx.publicUrl}/oi-api/openapi</code>.</p>
</section>`
    : ''
}

<h2 id="create-title">Create a token</h2>
${err ? html`<div class="alert error" role="alert" id="token-error"><p>${err.message}</p></div>` : ''}
<form method="post" action="/portal/api-keys" class="stack panel" aria-labelledby="create-title">
  <input type="hidden" name="_csrf" value="${csrf}">
  <div>
    <label for="token-name">Name <span class="hint">What uses it, e.g. “Grafana line 1” (1–100 characters)</span></label>
    <input id="token-name" name="name" type="text" required maxlength="100" value="${f.name}"${invalid('name')}>
  </div>
  <fieldset${invalid('expires')}>
    <legend>Expires after</legend>
    <div class="choices">
      ${EXPIRY_CHOICES.map((c) => html`<label><input type="radio" name="expires" value="${c.value}"${f.expires === c.value ? html` checked` : ''}> ${c.label}</label>`)}
      <label><input type="radio" name="expires" value="custom"${f.expires === 'custom' ? html` checked` : ''}> Custom</label>
    </div>
    <div class="custom-expiry">
      <label for="custom-expires">Custom duration <span class="hint">From 15 minutes to 30 days, e.g. 90m, 36h, 2d12h or 14d</span></label>
      <input id="custom-expires" name="customExpires" type="text" value="${f.customExpires}" spellcheck="false"${err?.field === 'expires' ? html` aria-invalid="true" aria-describedby="token-error"` : ''}>
    </div>
  </fieldset>
  <fieldset${invalid('rights')}>
    <legend>Rights</legend>
    <p class="hint">Your role (${session.role}) allows these; untick what the token does not need.</p>
    <div class="checks">
      ${ownRights.map((r) => html`<label><input type="checkbox" name="rights" value="${r}"${f.rights.has(r) ? html` checked` : ''}> <span><code>${r}</code> <span class="hint">${RIGHT_HELP[r]}</span></span></label>`)}
    </div>
  </fieldset>
  <fieldset${invalid('scopes')}>
    <legend>Scopes (optional)</legend>
    <p class="hint">Leave them empty for the whole workspace.</p>
    ${config.connections.length ? html`<div class="scope-group" role="group" aria-labelledby="scope-connections"><p class="scope-group-title" id="scope-connections">Only these connections</p><div class="checks">${config.connections.map((c) => html`<label><input type="checkbox" name="connections" value="${c.lookup}"${f.connections.has(c.lookup) ? html` checked` : ''}> ${c.lookup}</label>`)}</div></div>` : ''}
    ${config.surfaces.length ? html`<div class="scope-group" role="group" aria-labelledby="scope-surfaces"><p class="scope-group-title" id="scope-surfaces">Only these surfaces</p><div class="checks">${config.surfaces.map((s) => html`<label><input type="checkbox" name="surfaces" value="${s.lookup}"${f.surfaces.has(s.lookup) ? html` checked` : ''}> ${s.name ?? s.lookup}</label>`)}</div></div>` : ''}
    <div>
      <label for="scope-keys">Only these scope keys <span class="hint">Activity log and correction scopes, separated by commas</span></label>
      <input id="scope-keys" name="scopeKeys" type="text" value="${f.scopeKeys}" spellcheck="false">
    </div>
  </fieldset>
  <div><button type="submit">Create token</button></div>
</form>

<h2 id="list-title">${manageAll ? 'Tokens of this workspace' : 'Your tokens'}</h2>
${
  tokens.length === 0
    ? html`<p class="muted">No tokens yet.</p>`
    : html`<div class="table-wrap"><table aria-labelledby="list-title">
  <thead><tr><th scope="col">Name</th>${owners ? html`<th scope="col">Owner</th>` : ''}<th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col">Rights</th><th scope="col">Scopes</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
  <tbody>
  ${tokens.map((t) => {
    const status = statusOf(t, now)
    const canRevoke = status === 'active' && (t.accountId === session.account.id || manageAll)
    return html`<tr data-token-id="${t.id}">
    <th scope="row">${t.name}</th>${owners ? html`<td>${owners.get(t.accountId) ?? t.accountId}</td>` : ''}
    <td>${timeTag(t.createdAt, now)}</td>
    <td>${timeTag(t.expiresAt, now)}</td>
    <td>${timeTag(t.lastUsedAt, now)}</td>
    <td class="rights"><details><summary>${t.rights.length} right${t.rights.length === 1 ? '' : 's'}</summary><ul class="chips">${t.rights.map((r) => html`<li>${r}</li>`)}</ul></details></td>
    <td>${scopesText(t.scopes)}</td>
    <td><span class="badge ${status}">${status}</span>${t.revokedAt !== undefined ? html`<div class="muted">${timeTag(t.revokedAt, now)}</div>` : ''}</td>
    <td>${canRevoke ? html`<form method="post" action="/portal/api-keys/${t.id}/revoke"><input type="hidden" name="_csrf" value="${csrf}"><button class="danger" type="submit" aria-label="Revoke token ${t.name}">Revoke</button></form>` : ''}</td>
  </tr>`
  })}
  </tbody></table></div>`
}`,
    status,
  )
}

function fieldOf(message: string): NonNullable<PageState['error']>['field'] {
  if (/scope/.test(message)) return 'scopes'
  if (/right/.test(message)) return 'rights'
  if (/lifetime|duration|expir/.test(message)) return 'expires'
  if (/name/.test(message)) return 'name'
  return undefined
}

/** The signed-in account as a token viewer (the visibility rule itself is the access service's). */
function viewerOf(session: PortalContext['session']): TokenViewer {
  return { id: session.account.id, canRevokeOthers: roleHas(session.role, 'accounts:manage') }
}

export function apiKeyRoutes(): PortalRoute[] {
  return [
    definePortalRoute({
      method: 'GET',
      path: '/api-keys',
      rights: [],
      handler: async (ctx) => {
        const revoked = ctx.query.get('revoked')
        const token = revoked
          ? await ctx.deps.services.access.visibleToken(ctx.session.workspace.id, revoked, viewerOf(ctx.session))
          : undefined
        const notice =
          token && token.revokedAt !== undefined
            ? `Token “${token.name}” was revoked. API calls with it are refused from now on.`
            : undefined
        return render(ctx, { form: emptyForm(apiRightsOf(ctx.session.role)), ...(notice ? { notice } : {}) })
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/api-keys',
      rights: [],
      handler: async (ctx) => {
        const { session, deps } = ctx
        const form = formOf(ctx.form)
        try {
          const choices: readonly string[] = EXPIRY_CHOICES.map((c) => c.value)
          if (form.expires !== 'custom' && !choices.includes(form.expires)) throw new InvalidInputError('choose when the token expires')
          if (form.expires === 'custom' && form.customExpires.trim() === '')
            throw new InvalidInputError('type a custom duration (from 15 minutes to 30 days), or choose one of the listed expiries')
          const scopeKeys = form.scopeKeys
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
          const scopes: TokenScopes = {
            ...(form.connections.size ? { connections: [...form.connections] } : {}),
            ...(form.surfaces.size ? { surfaces: [...form.surfaces] } : {}),
            ...(scopeKeys.length ? { scopeKeys } : {}),
          }
          const created = await deps.services.access.createToken({
            workspaceId: session.workspace.id,
            accountId: session.account.id,
            name: form.name,
            expires: form.expires === 'custom' ? form.customExpires : form.expires,
            rights: [...form.rights],
            scopes,
            createdBy: { id: session.account.id, name: session.account.name, via: 'portal' },
          })
          return render(ctx, { form: emptyForm(apiRightsOf(session.role)), created }, 200)
        } catch (error) {
          if (!(error instanceof InvalidInputError)) throw error
          return render(
            ctx,
            { form, error: { field: fieldOf(error.message), message: `The token was not created: ${error.message}.` } },
            400,
          )
        }
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/api-keys/:id/revoke',
      rights: [],
      handler: async (ctx) => {
        const { session, deps } = ctx
        const id = ctx.params['id'] ?? ''
        const before = await deps.services.access.visibleToken(session.workspace.id, id, viewerOf(session))
        if (before?.revokedAt !== undefined) {
          return { redirect: `/portal/api-keys?revoked=${encodeURIComponent(before.id)}` }
        }
        // revokeToken refuses another account's token unless the role may manage accounts (403).
        const token = await deps.services.access.revokeToken(session.workspace.id, id, {
          ...viewerOf(session),
          name: session.account.name,
          via: 'portal',
        })
        return { redirect: `/portal/api-keys?revoked=${encodeURIComponent(token.id)}` }
      },
    }),
  ]
}
