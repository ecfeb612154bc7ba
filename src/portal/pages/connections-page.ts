/**
 * @module
 * Connections (issue 9 item 7; issue 6): every data connection of the configuration in force with
 * its kind and table, the pull connectors' status (state, last run, last success, last error —
 * stored scrubbed of secrets — rows ingested and rejected), and a write-only credentials form per
 * connection. The page shows whether credentials are set, their key names, when and by whom; never
 * a value (the credentials service has no way to return one: only the connector vault decrypts).
 */
import type { CredentialStatus } from '../../domain/credentials/credentials-service.js'
import { DomainError } from '../../domain/errors.js'
import { timeTag } from '../format.js'
import { type Html, html } from '../html.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'
import { pageOf } from './page.js'

/** Key/value rows the credentials form offers. */
export const CREDENTIAL_ROWS = 4

/** The key names each connector kind reads (README, "Pull connectors"). */
const SUGGESTED_KEYS: Readonly<Record<string, readonly string[]>> = {
  postgres: ['password'],
  mqtt: ['username', 'password'],
}

const STATE_WORDS: Readonly<Record<string, string>> = {
  starting: 'connecting to the source',
  running: 'connected; the last poll succeeded',
  backoff: 'the last attempt failed; retrying with backoff',
  failed: 'cannot work with these settings; waits for a new configuration',
  stopped: 'not running',
}

interface Notice {
  readonly kind: 'success' | 'error'
  readonly text: string
  /** The connection whose form the error belongs to (its key names are shown again, never values). */
  readonly lookup?: string
  readonly keys?: readonly string[]
}

function credentialsCell(status: CredentialStatus | undefined, now: number): Html {
  if (!status?.set) return html`<span class="badge expired">not set</span>`
  return html`<span class="badge active">set</span>
<div class="small">keys: ${status.keys.map((k, i) => html`${i ? ', ' : ''}<code>${k}</code>`)}</div>
<div class="muted small">by ${status.updatedBy ?? 'unknown'}, ${status.updatedAt ? timeTag(Date.parse(status.updatedAt), now) : ''}</div>`
}

function credentialsForm(
  ctx: PortalContext,
  lookup: string,
  kind: string,
  status: CredentialStatus | undefined,
  notice: Notice | undefined,
): Html {
  const csrf = ctx.session.csrfToken
  const again = notice?.lookup === lookup ? (notice.keys ?? []) : []
  const names = again.length ? again : (SUGGESTED_KEYS[kind] ?? [])
  const rows = Array.from({ length: Math.max(CREDENTIAL_ROWS, names.length) }, (_, i) => names[i] ?? '')
  return html`<section class="panel credentials" aria-labelledby="cred-${lookup}" data-connection="${lookup}">
  <h3 id="cred-${lookup}">Credentials of <code>${lookup}</code></h3>
  <p class="muted small">Write-only: values are encrypted at rest and never shown again, here or anywhere. Setting new ones replaces all earlier keys${SUGGESTED_KEYS[kind] ? html`; a ${kind} connector reads ${SUGGESTED_KEYS[kind]!.map((k, i) => html`${i ? ' and ' : ''}<code>${k}</code>`)}${kind === 'postgres' ? html` (or <code>connectionString</code>)` : ''}` : ''}.</p>
  ${notice?.kind === 'error' && notice.lookup === lookup ? html`<div class="alert error" role="alert" id="cred-error-${lookup}"><p>${notice.text}</p></div>` : ''}
  <form method="post" action="/portal/connections/${lookup}/credentials" class="cred-form" autocomplete="off">
    <input type="hidden" name="_csrf" value="${csrf}">
    <table class="cred-rows"><caption class="visually-hidden">Credential keys and values for ${lookup}</caption>
    <thead><tr><th scope="col">Key name</th><th scope="col">Value</th></tr></thead>
    <tbody>${rows.map(
      (name, i) => html`<tr>
      <td><label class="visually-hidden" for="k-${lookup}-${i}">Key name ${i + 1} of ${lookup}</label><input id="k-${lookup}-${i}" name="key" type="text" value="${name}" spellcheck="false" autocomplete="off"></td>
      <td><label class="visually-hidden" for="v-${lookup}-${i}">Value ${i + 1} of ${lookup}</label><input id="v-${lookup}-${i}" name="value" type="password" autocomplete="new-password" spellcheck="false"></td>
    </tr>`,
    )}</tbody></table>
    <div class="button-row"><button type="submit" aria-label="${status?.set ? 'Replace' : 'Save'} credentials of ${lookup}">${status?.set ? 'Replace credentials' : 'Save credentials'}</button></div>
  </form>
  ${
    status?.set
      ? html`<form method="post" action="/portal/connections/${lookup}/credentials/clear" class="inline-form clear-form">
    <input type="hidden" name="_csrf" value="${csrf}">
    <button type="submit" class="danger" aria-label="Clear credentials of ${lookup}">Clear credentials</button>
  </form>`
      : ''
  }
</section>`
}

async function render(ctx: PortalContext, notice?: Notice, status = 200): Promise<PortalResult> {
  const { session, deps, now } = ctx
  const services = deps.services
  const workspaceId = session.workspace.id
  const current = await services.config.current(workspaceId)
  const connectors = new Map((await services.connectors.status(workspaceId)).map((s) => [s.lookup, s]))
  const pushed = await services.ingest.pushedRowCounts(workspaceId)
  const listed = await services.credentials.list(workspaceId)
  const credentials = new Map(listed.map((c) => [c.connection, c]))
  // Credentials kept for a lookup the configuration no longer has: shown so they can be cleared.
  const orphaned = listed.filter((c) => c.configured === false && c.set)
  const connections = current.document.connections
  // A push connection receives rows through the API and reads no credentials.
  const withForms = connections.filter((c) => c.kind !== 'push' || credentials.get(c.lookup)?.set)
  return pageOf(
    ctx,
    'Connections',
    'connections',
    html`
<h1>Connections</h1>
<p class="lead">The workspace's data connections. <code>push</code> connections receive rows through the API; <code>postgres</code> and
<code>mqtt</code> connectors pull them from a source with the credentials set here. Errors are shown without secrets.</p>
${notice?.kind === 'success' ? html`<div class="alert success" role="status"><p>${notice.text}</p></div>` : ''}
${notice?.kind === 'error' && !connections.some((c) => c.lookup === notice.lookup) ? html`<div class="alert error" role="alert"><p>${notice.text}</p></div>` : ''}
${
  connections.length === 0
    ? html`<p class="muted">This workspace has no connections yet. They are added with the workspace configuration (<code>provenant apply</code>).</p>`
    : html`
<div class="table-wrap"><table aria-labelledby="status-title">
<caption id="status-title" class="visually-hidden">Connection status</caption>
<thead><tr><th scope="col">Connection</th><th scope="col">Kind</th><th scope="col">Table</th><th scope="col">State</th><th scope="col">Last run</th><th scope="col">Rows ingested</th><th scope="col">Last error</th><th scope="col">Credentials</th></tr></thead>
<tbody>${connections.map((c) => {
        const s = connectors.get(c.lookup)
        return html`<tr data-connection="${c.lookup}">
  <th scope="row">${c.lookup}</th>
  <td>${c.kind}</td>
  <td><code>${c.table}</code></td>
  <td>${s ? html`<span class="badge state-${s.state}">${s.state}</span>${s.enabled ? '' : html`<div class="muted small">switched off in the settings</div>`}<div class="muted small">${STATE_WORDS[s.state] ?? ''}</div>` : html`<span class="muted">rows pushed through the API</span>`}</td>
  <td>${s ? html`${timeTag(s.lastRunAt, now)}${s.lastSuccessAt !== undefined ? html`<div class="muted small">last success ${timeTag(s.lastSuccessAt, now)}</div>` : ''}` : html`<span class="muted">—</span>`}</td>
  <td class="num">${s ? html`${s.rowsIngested}${s.rowsRejected ? html`<div class="muted small">${s.rowsRejected} rejected</div>` : ''}` : pushed.has(c.lookup) ? pushed.get(c.lookup) : html`<span class="muted">—</span>`}</td>
  <td>${s?.lastError ? html`<span class="error-text">${s.lastError}</span><div class="muted small">${timeTag(s.lastErrorAt, now)}</div>` : html`<span class="muted">none</span>`}</td>
  <td>${credentialsCell(credentials.get(c.lookup), now)}</td>
</tr>`
      })}</tbody></table></div>
<h2>Credentials</h2>
<p class="muted">For the connections whose connector pulls from a source (push connections need none; one that still holds credentials is listed so they can be cleared).</p>
<div class="credential-forms">${withForms.map((c) => credentialsForm(ctx, c.lookup, c.kind, credentials.get(c.lookup), notice))}</div>`
}
${
  orphaned.length
    ? html`<h2 id="orphaned-title">Credentials of removed connections</h2>
<p class="muted">These lookups are no longer in the configuration but still hold credentials (a connection added again under the same lookup would use them). Clear what is no longer needed.</p>
<div class="table-wrap"><table aria-labelledby="orphaned-title">
<thead><tr><th scope="col">Lookup</th><th scope="col">Credentials</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
<tbody>${orphaned.map(
        (c) => html`<tr data-orphaned="${c.connection}"><th scope="row">${c.connection}</th><td>${credentialsCell(c, now)}</td>
<td><form method="post" action="/portal/connections/${c.connection}/credentials/clear"><input type="hidden" name="_csrf" value="${session.csrfToken}"><button type="submit" class="danger" aria-label="Clear credentials of ${c.connection}">Clear credentials</button></form></td></tr>`,
      )}</tbody></table></div>`
    : ''
}`,
    status,
  )
}

export function connectionRoutes(): PortalRoute[] {
  const actorOf = (ctx: PortalContext) => ({ id: ctx.session.account.id, name: ctx.session.account.name, via: 'portal' as const })
  return [
    definePortalRoute({
      method: 'GET',
      path: '/connections',
      rights: ['connections:manage'],
      handler: async (ctx) => {
        const lookup = ctx.query.get('set') ?? ctx.query.get('cleared')
        if (!lookup) return render(ctx)
        const what = ctx.query.has('set') ? 'saved' : 'cleared'
        return render(ctx, {
          kind: 'success',
          text: `Credentials of ${lookup} ${what}. ${what === 'saved' ? 'Their values are not shown again; the connector uses them from its next start.' : 'The connector no longer has credentials.'}`,
        })
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/connections/:lookup/credentials',
      rights: ['connections:manage'],
      handler: async (ctx) => {
        const lookup = ctx.params['lookup'] ?? ''
        const keys = ctx.form.getAll('key').map((k) => k.trim())
        const values = ctx.form.getAll('value')
        const entered: Record<string, string> = {}
        const named: string[] = []
        for (const [i, key] of keys.entries()) {
          const value = values[i] ?? ''
          if (key === '' && value === '') continue
          named.push(key)
          if (key === '')
            return render(
              ctx,
              {
                kind: 'error',
                lookup,
                keys: named,
                text: `Credentials of ${lookup} were not saved: a value has no key name. Nothing was stored; enter the values again.`,
              },
              400,
            )
          if (key in entered)
            return render(
              ctx,
              {
                kind: 'error',
                lookup,
                keys: named,
                text: `Credentials of ${lookup} were not saved: the key ${key} is given twice. Nothing was stored; enter the values again.`,
              },
              400,
            )
          if (value === '') continue
          entered[key] = value
        }
        try {
          await ctx.deps.services.credentials.set(actorOf(ctx), ctx.session.workspace.id, lookup, entered)
          return { redirect: `/portal/connections?set=${encodeURIComponent(lookup)}` }
        } catch (error) {
          if (!(error instanceof DomainError) || !['invalid-input', 'not-found'].includes(error.kind)) throw error
          return render(
            ctx,
            {
              kind: 'error',
              lookup,
              keys: named,
              text: `Credentials of ${lookup} were not saved: ${error.message}. Nothing was stored; enter the values again.`,
            },
            error.kind === 'not-found' ? 404 : 400,
          )
        }
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/connections/:lookup/credentials/clear',
      rights: ['connections:manage'],
      handler: async (ctx) => {
        const lookup = ctx.params['lookup'] ?? ''
        const cleared = await ctx.deps.services.credentials.clear(actorOf(ctx), ctx.session.workspace.id, lookup)
        if (!cleared) return render(ctx, { kind: 'error', text: `Connection ${lookup} has no credentials to clear.` }, 400)
        return { redirect: `/portal/connections?cleared=${encodeURIComponent(lookup)}` }
      },
    }),
  ]
}
