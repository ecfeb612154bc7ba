/**
 * @module
 * Activity log (spec 2.6, 2.7, 4.5; issue 9 item 6): browse one container — the workspace-level
 * Platform-Config records by default, or a scope's — filtered by entity type, action, user and
 * dates, newest first, in pages; verify the whole chain (and optionally one record) and read the
 * verdict fields in words; download the container as the API exports it (JSON or CSV, with its
 * signed checkpoint), streamed. Verifying and exporting are recorded as decisions.
 */
import { InvalidInputError, NotFoundError } from '../../domain/errors.js'
import type { LedgerRecordView, VerifyAnswer } from '../../domain/ledger/index.js'
import { relativeText } from '../format.js'
import { type Html, html } from '../html.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'
import { scopeKeysOf } from './corrections-page.js'
import { pageOf } from './page.js'

export const ACTIVITY_PAGE_SIZE = 50

interface Filter {
  readonly scope: string | undefined
  readonly entityType: string
  readonly actionType: string
  readonly userId: string
  readonly from: string
  readonly to: string
  readonly page: number
}

interface VerifyView {
  /** The verdict, or why verify could not give one (a RecordID past the end of the chain). */
  readonly result: ({ readonly kind: 'verdict' } & VerifyAnswer) | { readonly kind: 'record-not-found'; readonly message: string }
  readonly recordId: string
}

const DAY = /^\d{4}-\d{2}-\d{2}$/

function text(query: URLSearchParams, name: string, max = 200): string {
  return (query.get(name) ?? '').trim().slice(0, max)
}

function filterOf(query: URLSearchParams): Filter {
  const page = Number(query.get('page') ?? '1')
  const scope = text(query, 'scope')
  return {
    scope: scope === '' ? undefined : scope,
    entityType: text(query, 'entityType'),
    actionType: text(query, 'actionType'),
    userId: text(query, 'userId'),
    from: text(query, 'from', 10),
    to: text(query, 'to', 10),
    page: Number.isSafeInteger(page) && page >= 1 && page <= 1_000_000 ? page : 1,
  }
}

/** `from`/`to` days (UTC) as the stored-timestamp range [from 00:00, day after `to` 00:00). */
function rangeOf(filter: Filter): { from?: string; to?: string } {
  const day = (name: string, value: string, end: boolean): string | undefined => {
    if (value === '') return undefined
    const ms = DAY.test(value) ? Date.parse(`${value}T00:00:00Z`) : Number.NaN
    if (Number.isNaN(ms) || new Date(ms).toISOString().slice(0, 10) !== value)
      throw new InvalidInputError(`the ${name} date must be a day like 2026-01-31, not "${value}"`)
    return new Date(end ? ms + 86_400_000 : ms).toISOString()
  }
  const from = day('from', filter.from, false)
  const to = day('to', filter.to, true)
  if (from !== undefined && to !== undefined && from >= to)
    throw new InvalidInputError(`the from date (${filter.from}) is after the to date (${filter.to})`)
  return { ...(from ? { from } : {}), ...(to ? { to } : {}) }
}

function linkOf(filter: Filter, overrides: Partial<Filter> = {}, path = '/portal/activity'): string {
  const f = { ...filter, ...overrides }
  const q = new URLSearchParams()
  if (f.scope !== undefined) q.set('scope', f.scope)
  for (const key of ['entityType', 'actionType', 'userId', 'from', 'to'] as const) if (f[key] !== '') q.set(key, f[key])
  if (f.page > 1) q.set('page', String(f.page))
  const s = q.toString()
  return s ? `${path}?${s}` : path
}

function exportLink(filter: Filter, format: 'json' | 'csv'): string {
  const q = new URLSearchParams({ format })
  if (filter.scope !== undefined) q.set('scope', filter.scope)
  if (filter.from) q.set('from', filter.from)
  if (filter.to) q.set('to', filter.to)
  return `/portal/activity/export?${q}`
}

function whoOf(view: LedgerRecordView, names: ReadonlyMap<string, string>): string {
  const details = (view.details ?? {}) as { actor?: { name?: unknown }; accountName?: unknown }
  const name =
    typeof details.actor?.name === 'string'
      ? details.actor.name
      : typeof details.accountName === 'string'
        ? details.accountName
        : names.get(view.record.userId)
  return name ?? view.record.userId
}

/** Fields an `api-call` record's Entity, Action and User cells already show. */
const SHOWN_ELSEWHERE: Readonly<Record<string, readonly string[]>> = { 'api-call': ['method', 'route', 'requestId', 'accountName'] }

/**
 * One readable line of the details for the closed row: `key: value` pairs separated by ` · `, so
 * it wraps at spaces (raw JSON has none and broke mid-word), nested values as `{…}` / `[n]`.
 */
export function detailsSummary(details: unknown, entityType: string | null | undefined): string {
  if (details === null || typeof details !== 'object' || Array.isArray(details)) return JSON.stringify(details) ?? ''
  const skip = new Set(['actor', ...(SHOWN_ELSEWHERE[entityType ?? ''] ?? [])])
  const parts: string[] = []
  // The outcome first (a call's status), then the stored (alphabetical) order.
  const entries = Object.entries(details as Record<string, unknown>).sort(([a], [b]) => Number(b === 'status') - Number(a === 'status'))
  for (const [key, value] of entries) {
    if (skip.has(key)) continue
    const shown = value === null || typeof value !== 'object' ? String(value) : Array.isArray(value) ? `[${value.length}]` : '{…}'
    parts.push(`${key}: ${shown}`)
  }
  const line = parts.join(' · ')
  return line.length > 160 ? `${line.slice(0, 160)}…` : line || 'no details'
}

/** A route-like action ("GET /oi-api/audit-logs/:lookup/events/export") may wrap after each slash. */
function actionText(action: string): Html {
  const parts = action.split('/')
  return html`${parts.map((part, i) => (i === 0 ? part : html`/<wbr>${part}`))}`
}

/** An account name like `analyst@acme` wraps before its `@`, not mid-word. */
function breakBeforeAt(name: string): Html {
  const at = name.indexOf('@')
  return at > 0 ? html`${name.slice(0, at)}<wbr>${name.slice(at)}` : html`${name}`
}

function recordRow(view: LedgerRecordView, names: ReadonlyMap<string, string>, now: number, brokenAt: string | null): Html {
  const r = view.record
  const at = Date.parse(r.timestamp)
  const [day, time] = r.timestamp.replace('Z', '').split('T')
  return html`<tr${r.recordId === brokenAt ? html` class="broken" title="The chain breaks here"` : ''}>
  <th scope="row" class="mono record-id">${r.recordId}</th>
  <td class="time" data-label="Time"><time datetime="${r.timestamp}"><span class="day">${day}</span> <span class="clock">${time}</span></time><div class="muted small">${relativeText(at, now)}</div></td>
  <td class="entity" data-label="Entity">${view.entityType ?? ''}<div class="muted small mono entity-id">${view.entityId ?? ''}</div></td>
  <td class="action" data-label="Action">${actionText(view.actionType ?? '')}</td>
  <td class="user" data-label="User">${breakBeforeAt(whoOf(view, names))}</td>
  <td class="details" data-label="Details"><details><summary><span class="details-line">${detailsSummary(view.details, view.entityType)}</span></summary><pre class="details-json">${JSON.stringify(view.details, null, 2)}</pre><p class="muted small mono digest">digest ${Buffer.from(r.digest).toString('hex')}</p></details></td>
</tr>`
}

/** The verdict fields (spec 2.7), each said in words. */
export function verdictInWords(view: VerifyView): Html {
  const { result } = view
  if (result.kind !== 'verdict') {
    return html`<div class="alert error verdict" role="alert" id="verdict"><h2>Verify could not answer</h2><p>${result.message}</p></div>`
  }
  const v = result.verdict
  const ok = v.ChainValid && v.Valid !== false
  const rows: [string, string, Html | string][] = [
    [
      'ChainValid',
      String(v.ChainValid),
      v.Empty
        ? 'Nothing to contradict: the log was never written.'
        : v.ChainValid
          ? html`Yes: every digest and link from the first record to the last (${result.recordsRead} records) recomputes and agrees with the signed checkpoints.`
          : 'No: the chain does not hold (see where it breaks).',
    ],
    [
      'Valid',
      String(v.Valid),
      v.Valid === null
        ? 'Not asked: no single record was checked (give a RecordID to check one).'
        : v.Valid
          ? `Record ${view.recordId} recomputes to its stored digest.`
          : `Record ${view.recordId} does not match its digest (or is missing).`,
    ],
    ['Empty', String(v.Empty), v.Empty ? 'Yes: there was nothing to check.' : 'No: the log has records.'],
    [
      'BrokenAt',
      v.BrokenAt ?? 'null',
      v.BrokenAt
        ? html`The first bad link is record <strong class="mono">${v.BrokenAt}</strong>; everything before it holds.`
        : 'Nowhere: no bad link.',
    ],
    [
      'ForkDetected',
      String(v.ForkDetected),
      v.ForkDetected
        ? 'Yes: the log was split or rewritten (two records claim one place, or records contradict a signed checkpoint).'
        : 'No split or rewritten history was found.',
    ],
  ]
  return html`<section class="alert ${ok ? 'success' : 'error'} verdict" id="verdict" role="status" aria-labelledby="verdict-title">
  <h2 id="verdict-title">${v.Empty ? 'Nothing to verify: this log is empty' : ok ? 'The chain is intact' : v.BrokenAt ? `The chain is broken at record ${v.BrokenAt}` : 'The chain is not valid'}</h2>
  <dl class="facts verdict-fields">${rows.map(([field, value, words]) => html`<dt><code>${field}</code> <span class="mono">${value}</span></dt><dd>${words}</dd>`)}</dl>
  <p><strong>Reason:</strong> ${v.Reason}</p>
</section>`
}

async function render(ctx: PortalContext, extra: { verify?: VerifyView; error?: string } = {}, status = 200): Promise<PortalResult> {
  const { session, deps, now } = ctx
  const services = deps.services
  const filter = filterOf(ctx.query.size ? ctx.query : ctx.form)
  const scopes = await scopeKeysOf(ctx)
  const members = await services.admin.listMembers(session.workspace.id)
  const names = new Map<string, string>([
    ['system', 'Provenant (system)'],
    ...members.map((m) => [m.account.id, m.account.name] as [string, string]),
  ])
  let records: LedgerRecordView[] = []
  let total = 0
  let error = extra.error
  try {
    const found = await services.ledger.query(ctx.caller, {
      scopeKey: filter.scope ?? null,
      filter: {
        ...(filter.entityType ? { entityType: filter.entityType } : {}),
        ...(filter.actionType ? { actionType: filter.actionType } : {}),
        ...(filter.userId ? { userId: filter.userId } : {}),
        ...rangeOf(filter),
      },
      page: { limit: ACTIVITY_PAGE_SIZE, offset: (filter.page - 1) * ACTIVITY_PAGE_SIZE, order: 'desc' },
    })
    records = found.records
    total = found.total
  } catch (e) {
    if (!(e instanceof InvalidInputError)) throw e
    error = e.message
    status = 400
  }
  const pages = Math.max(1, Math.ceil(total / ACTIVITY_PAGE_SIZE))
  const first = total === 0 ? 0 : (filter.page - 1) * ACTIVITY_PAGE_SIZE + 1
  const canVerify = services.sessions.can(session, 'provenance:verify')
  const logName = filter.scope === undefined ? 'Platform-Config (workspace)' : `scope ${filter.scope}`
  const apiScope = filter.scope === undefined ? '' : `&scopeKey=${encodeURIComponent(filter.scope)}`
  return pageOf(
    ctx,
    'Activity log',
    'activity',
    html`
<h1>Activity log</h1>
<p class="lead">Every API call and decision, in tamper-evident hash chains: one per scope, plus the workspace-level Platform-Config log
(the platform's own change history). Records are never edited; verifying recomputes every digest.</p>
${error ? html`<div class="alert error" role="alert"><p>${error}</p></div>` : ''}
<form method="get" action="/portal/activity" class="filters" aria-label="Choose a log and filter it">
  <div><label for="f-scope">Log</label>
  <select id="f-scope" name="scope"><option value="">Platform-Config (workspace)</option>${scopes.map((s) => html`<option value="${s}"${filter.scope === s ? html` selected` : ''}>scope ${s}</option>`)}</select></div>
  <div><label for="f-entity">Entity type</label><input id="f-entity" name="entityType" type="text" value="${filter.entityType}" placeholder="e.g. correction" spellcheck="false"></div>
  <div><label for="f-action">Action</label><input id="f-action" name="actionType" type="text" value="${filter.actionType}" placeholder="e.g. accepted" spellcheck="false"></div>
  <div><label for="f-user">User</label>
  <select id="f-user" name="userId"><option value="">anyone</option>${[...names].map(([id, name]) => html`<option value="${id}"${filter.userId === id ? html` selected` : ''}>${name}</option>`)}</select></div>
  <div><label for="f-from">From (UTC)</label><input id="f-from" name="from" type="date" value="${filter.from}"></div>
  <div><label for="f-to">To (UTC, inclusive)</label><input id="f-to" name="to" type="date" value="${filter.to}"></div>
  <div><button type="submit" class="secondary">Show</button></div>
</form>

<div class="log-actions">
${
  canVerify
    ? html`<form method="post" action="/portal/activity/verify" class="inline-form verify-form" data-busy-label="Verifying…">
  <input type="hidden" name="_csrf" value="${session.csrfToken}">
  <input type="hidden" name="scope" value="${filter.scope ?? ''}">
  <label for="verify-record">Also check record <span class="hint">Optional RecordID, 12 digits</span></label>
  <input id="verify-record" name="RecordID" type="text" inputmode="numeric" pattern="[0-9]{12}" maxlength="12" value="${extra.verify?.recordId ?? ''}" spellcheck="false">
  <button type="submit">Verify chain</button>
</form>`
    : ''
}
<div class="export-links"><span class="export-title">Download ${logName}${filter.from || filter.to ? ' (these dates)' : ''}:</span>
  <a class="button secondary-link" href="${exportLink(filter, 'json')}" download>JSON</a>
  <a class="button secondary-link" href="${exportLink(filter, 'csv')}" download>CSV</a>
</div>
</div>
${extra.verify ? verdictInWords(extra.verify) : ''}

<h2 id="records-title">${logName} <span class="count">${total}</span></h2>
${
  records.length === 0
    ? html`<p class="muted">${total === 0 && !filter.entityType && !filter.actionType && !filter.userId && !filter.from && !filter.to ? 'This log has no records yet.' : 'No records match these filters.'}</p>`
    : html`
<p class="muted">Records ${first}–${first + records.length - 1} of ${total}, newest first. Times are UTC.</p>
<div class="table-wrap"><table class="activity-records" aria-labelledby="records-title">
<colgroup><col class="c-id"><col class="c-time"><col class="c-entity"><col class="c-action"><col class="c-user"><col class="c-details"></colgroup>
<thead><tr><th scope="col">RecordID</th><th scope="col">Time</th><th scope="col">Entity</th><th scope="col">Action</th><th scope="col">User</th><th scope="col">Details</th></tr></thead>
<tbody>${records.map((r) => recordRow(r, names, now, extra.verify?.result.kind === 'verdict' ? extra.verify.result.verdict.BrokenAt : null))}</tbody></table></div>`
}
${pages > 1 ? html`<nav class="pager" aria-label="Pages">${filter.page > 1 ? html`<a href="${linkOf(filter, { page: filter.page - 1 })}">← Newer</a>` : ''}<span>Page ${filter.page} of ${pages}</span>${filter.page < pages ? html`<a href="${linkOf(filter, { page: filter.page + 1 })}">Older →</a>` : ''}</nav>` : ''}

<details class="panel api-help"><summary>The same export for programs (API, bearer token)</summary>
<p>Current shape: <code>GET ${ctx.publicUrl}/oi-api/provenance/events/export?format=csv${apiScope}</code> (or <code>format=json</code>, with <code>startDate</code> and <code>endDate</code>).</p>
${filter.scope !== undefined ? html`<p>Earlier per-log shape: <code>GET ${ctx.publicUrl}/oi-api/audit-logs/${encodeURIComponent(filter.scope)}/events/export?format=csv</code>.</p>` : html`<p>The earlier per-log shape names a scope (<code>/oi-api/audit-logs/&lt;scope&gt;/events/export</code>); choose a scope above to see its address.</p>`}
<p>Check a downloaded file offline with <code>provenant verify-export FILE --public-key KEY</code>.</p>
</details>`,
    status,
  )
}

async function recordAction(
  ctx: PortalContext,
  actionType: 'verified' | 'exported',
  scope: string | undefined,
  details: Record<string, unknown>,
): Promise<void> {
  const { session } = ctx
  await ctx.deps.services.activity.recordDecision({
    workspaceId: session.workspace.id,
    entityType: 'activity-log',
    entityId: scope === undefined ? 'platform-config' : `scope:${scope}`,
    actionType,
    actor: { id: session.account.id, name: session.account.name, via: 'portal' },
    details: { ScopeKey: scope ?? null, ...details },
  })
}

export function activityRoutes(): PortalRoute[] {
  return [
    definePortalRoute({ method: 'GET', path: '/activity', rights: ['provenance:read'], handler: (ctx) => render(ctx) }),
    definePortalRoute({
      method: 'POST',
      path: '/activity/verify',
      rights: ['provenance:verify'],
      handler: async (ctx) => {
        const filter = filterOf(ctx.form)
        // An empty field asks for no single record; anything else goes to the ledger as typed (no
        // trimming: " 000000000001 " is refused here exactly as by the API and the CLI).
        const raw = ctx.form.get('RecordID') ?? ''
        let result: VerifyView['result']
        try {
          const answer = await ctx.deps.services.ledger.verify(ctx.caller, {
            scopeKey: filter.scope ?? null,
            recordId: raw === '' ? null : raw,
          })
          result = { kind: 'verdict', ...answer }
        } catch (error) {
          if (error instanceof InvalidInputError) return render(ctx, { error: `Nothing was verified: ${error.message}.` }, 400)
          if (!(error instanceof NotFoundError)) throw error
          result = { kind: 'record-not-found', message: error.message }
        }
        await recordAction(
          ctx,
          'verified',
          filter.scope,
          result.kind === 'verdict'
            ? { ...result.verdict, recordsRead: result.recordsRead, ...(raw ? { RecordID: raw } : {}) }
            : { outcome: result.kind, message: result.message },
        )
        return render(ctx, { verify: { result, recordId: raw } }, result.kind === 'record-not-found' ? 404 : 200)
      },
    }),
    definePortalRoute({
      method: 'GET',
      path: '/activity/export',
      rights: ['provenance:read'],
      handler: async (ctx) => {
        const filter = filterOf(ctx.query)
        const format = ctx.query.get('format') === 'csv' ? 'csv' : 'json'
        let range: { from?: string; to?: string }
        try {
          range = rangeOf(filter)
        } catch (e) {
          if (!(e instanceof InvalidInputError)) throw e
          return render(ctx, { error: `Nothing was exported: ${e.message}.` }, 400)
        }
        const requested: Record<string, string> = { format }
        if (filter.scope !== undefined) requested['scopeKey'] = filter.scope
        if (filter.from) requested['startDate'] = filter.from
        if (filter.to) requested['endDate'] = filter.to
        // Recorded before the file leaves: an export is never unrecorded.
        await recordAction(ctx, 'exported', filter.scope, {
          format,
          ...(filter.from ? { from: filter.from } : {}),
          ...(filter.to ? { to: filter.to } : {}),
        })
        const { contentType, stream } = await ctx.deps.services.ledger.exportLog(ctx.caller, {
          scopeKey: filter.scope ?? null,
          format,
          ...range,
          filter: requested,
        })
        const base = filter.scope === undefined ? 'platform-config' : filter.scope.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 80) || 'scope'
        return { download: stream, contentType, fileName: `activity-log-${base}-${new Date(ctx.now).toISOString().slice(0, 10)}.${format}` }
      },
    }),
  ]
}
