/**
 * @module
 * Corrections (spec 2.8, 3, 4.6; issue 9 item 5): pending corrections of every scope with before and
 * after, reason category and reason; an approver approves or rejects one (a reason is required to
 * reject), with the two-person rule enforced by the corrections service and explained here.
 * Deciding in the portal is an electronic signature (21 CFR Part 11): the signer re-enters the
 * password, and the activity-log record carries `signature: {signer, signedAt, meaning}`. A wrong
 * password signs nothing, counts toward the sign-in throttle and is recorded in the scope's log.
 * The protocol is the signatures service's (src/domain/signatures/); this page only asks for the
 * password and hands the confirmed signature to the decision.
 */
import { roleHas } from '../../domain/access/rights.js'
import type { Correction, CorrectionStatus } from '../../domain/corrections/corrections-service.js'
import { DomainError, NotFoundError } from '../../domain/errors.js'
import type { JsonValue } from '../../shared/strict-json.js'
import { timeTag, utcText } from '../format.js'
import { type Html, html } from '../html.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'
import { pageOf } from './page.js'

export const CORRECTIONS_PAGE_SIZE = 25

const STATUSES = ['pending', 'applied', 'rejected'] as const

interface Notice {
  readonly kind: 'success' | 'warn' | 'error'
  readonly text: string
}

interface Filter {
  readonly status: CorrectionStatus | undefined
  readonly scope: string | undefined
  readonly page: number
}

function filterOf(query: URLSearchParams): Filter {
  const status = query.get('status') ?? 'pending'
  const page = Number(query.get('page') ?? '1')
  const scope = query.get('scope') ?? ''
  return {
    status: (STATUSES as readonly string[]).includes(status) ? (status as CorrectionStatus) : undefined,
    scope: scope === '' ? undefined : scope.slice(0, 200),
    page: Number.isSafeInteger(page) && page >= 1 ? page : 1,
  }
}

function linkOf(filter: Filter, page = filter.page): string {
  const q = new URLSearchParams({ status: filter.status ?? 'all' })
  if (filter.scope) q.set('scope', filter.scope)
  if (page > 1) q.set('page', String(page))
  return `/portal/corrections?${q}`
}

function valueText(value: JsonValue | undefined): Html {
  if (value === undefined) return html`<span class="muted">—</span>`
  if (value === null) return html`<span class="null">null</span>`
  return typeof value === 'string' ? html`${value}` : html`<code>${JSON.stringify(value)}</code>`
}

/** Before and after side by side: one row per corrected field (or one row for a plain value). */
export function beforeAfter(before: JsonValue, after: JsonValue, label: string): Html {
  const isObject = (v: JsonValue): v is Record<string, JsonValue> => v !== null && typeof v === 'object' && !Array.isArray(v)
  const rows: [string, JsonValue | undefined, JsonValue | undefined][] =
    isObject(before) && isObject(after)
      ? [...new Set([...Object.keys(before), ...Object.keys(after)])].map((k) => [k, before[k], after[k]])
      : [['value', before, after]]
  return html`<table class="before-after">
<caption class="visually-hidden">${label}</caption>
<thead><tr><th scope="col">Field</th><th scope="col">Before</th><th scope="col">After</th></tr></thead>
<tbody>${rows.map(([field, b, a]) => html`<tr><th scope="row">${field}</th><td class="was">${valueText(b)}</td><td class="now">${valueText(a)}</td></tr>`)}</tbody>
</table>`
}

function signatureText(c: Correction): Html {
  if (c.status === 'pending' || !c.decidedBy || c.decidedAt === undefined) return html``
  const meaning = c.status === 'applied' ? 'approved' : 'rejected'
  if (c.decidedVia === 'portal') {
    return html`<p class="signature">Signed electronically by <strong>${c.decidedBy.name}</strong> at <time datetime="${new Date(c.decidedAt).toISOString()}">${utcText(c.decidedAt)}</time>; meaning: <strong>${meaning}</strong>.</p>`
  }
  return html`<p class="signature">${meaning === 'approved' ? 'Approved' : 'Rejected'} over the API by <strong>${c.decidedBy.name}</strong> at <time datetime="${new Date(c.decidedAt).toISOString()}">${utcText(c.decidedAt)}</time>.</p>`
}

function correctionCard(ctx: PortalContext, c: Correction, canApprove: boolean, twoPerson: boolean): Html {
  const { session, now } = ctx
  const own = c.amendedBy.id === session.account.id
  const selfBlocked = twoPerson && own
  return html`<article class="panel correction" aria-labelledby="title-${c.id}" data-correction-id="${c.id}">
  <h3 id="title-${c.id}">${c.entityType} <span class="mono">${c.entityId}</span> <span class="badge ${c.status}">${c.status}</span></h3>
  <dl class="facts">
    <dt>Scope</dt><dd><code>${c.scopeKey}</code></dd>
    <dt>Reason category</dt><dd>${c.reasonCategory}</dd>
    <dt>Reason</dt><dd>${c.reason}</dd>
    <dt>Corrected by</dt><dd>${c.amendedBy.name}, ${timeTag(c.createdAt, now)}</dd>
    ${c.effectiveAt ? html`<dt>Refers to</dt><dd>${c.effectiveAt}</dd>` : ''}
    <dt>Chain</dt><dd>correction ${c.chainIndex} of this entity <span class="muted mono small">${c.id}</span></dd>
    ${c.rejectionReason ? html`<dt>Rejection reason</dt><dd>${c.rejectionReason}</dd>` : ''}
    ${c.approvalComment ? html`<dt>Approver's comment</dt><dd class="approval-comment">${c.approvalComment}</dd>` : ''}
  </dl>
  ${beforeAfter(c.before, c.after, `Before and after of correction ${c.id}`)}
  ${signatureText(c)}
  ${
    c.status === 'pending' && canApprove
      ? html`<form method="post" action="/portal/corrections/${c.id}/approve" class="stack sign-form" aria-labelledby="sign-${c.id}">
    <h4 id="sign-${c.id}">Decide and sign</h4>
    <input type="hidden" name="_csrf" value="${session.csrfToken}">
    <input type="hidden" name="scopeKey" value="${c.scopeKey}">
    ${selfBlocked ? html`<p class="alert info explain"><strong>You wrote this correction, so you cannot approve it.</strong> Two-person approval is on in this workspace: another approver must approve it. You may reject it (for example to withdraw it).</p>` : ''}
    <div>
      <label for="reason-${c.id}">Comment or reason <span class="hint">Required to reject (the author reads it); optional when approving</span></label>
      <textarea id="reason-${c.id}" name="reason" rows="2" maxlength="2000"></textarea>
    </div>
    <div>
      <label for="password-${c.id}">Your password <span class="hint">Re-enter it to sign as ${session.account.name}: this is your electronic signature, with the meaning of the button you press</span></label>
      <input id="password-${c.id}" name="password" type="password" autocomplete="current-password" required>
    </div>
    <div class="button-row">
      ${selfBlocked ? '' : html`<button type="submit" aria-label="Approve correction ${c.id} and sign">Approve and sign</button>`}
      <button type="submit" class="danger" formaction="/portal/corrections/${c.id}/reject" aria-label="Reject correction ${c.id} and sign">Reject and sign</button>
    </div>
  </form>`
      : ''
  }
</article>`
}

async function render(ctx: PortalContext, notice?: Notice, status = 200): Promise<PortalResult> {
  const { session, deps } = ctx
  const filter = filterOf(ctx.query)
  const services = deps.services
  const { items, total } = await services.corrections.listAcrossScopes(ctx.caller, {
    ...(filter.status ? { status: filter.status } : {}),
    ...(filter.scope ? { scopeKey: filter.scope } : {}),
    limit: CORRECTIONS_PAGE_SIZE,
    offset: (filter.page - 1) * CORRECTIONS_PAGE_SIZE,
  })
  const { document } = await services.config.current(session.workspace.id)
  const settings = document.settings.amendments
  const canApprove = roleHas(session.role, 'amendments:approve')
  const scopes = await scopeKeysOf(ctx)
  const pages = Math.max(1, Math.ceil(total / CORRECTIONS_PAGE_SIZE))
  const first = total === 0 ? 0 : (filter.page - 1) * CORRECTIONS_PAGE_SIZE + 1
  return pageOf(
    ctx,
    'Corrections',
    'corrections',
    html`
<h1>Corrections</h1>
<p class="lead">Documented edits that keep the original: each one has a reason category, a reason, and the values before and after.
${settings.approvalRequired ? 'Corrections wait here for approval' : 'Approval is switched off in this workspace, so corrections apply at once'}${settings.approvalRequired && settings.twoPersonApproval ? html`; <strong>two-person approval is on</strong>: whoever wrote a correction cannot approve it` : ''}.
${canApprove ? 'Approving or rejecting here is an electronic signature: you re-enter your password, and the record shows your name, the time and the meaning.' : html`Your role (${session.role}) can read corrections; an approver or admin decides them.`}</p>
${notice ? html`<div class="alert ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}"><p>${notice.text}</p></div>` : ''}
<form method="get" action="/portal/corrections" class="filters" aria-label="Filter corrections">
  <div><label for="f-status">Status</label>
  <select id="f-status" name="status">${[...STATUSES, 'all'].map((s) => html`<option value="${s}"${(filter.status ?? 'all') === s ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><label for="f-scope">Scope</label>
  <select id="f-scope" name="scope"><option value="">every scope</option>${scopes.map((s) => html`<option value="${s}"${filter.scope === s ? html` selected` : ''}>${s}</option>`)}</select></div>
  <div><button type="submit" class="secondary">Show</button></div>
</form>
<h2 id="list-title">${filter.status === 'pending' ? 'Pending corrections' : filter.status ? `${filter.status[0]!.toUpperCase()}${filter.status.slice(1)} corrections` : 'All corrections'} <span class="count">${total}</span></h2>
${
  items.length === 0
    ? html`<p class="muted">${filter.status === 'pending' ? 'Nothing is waiting for a decision.' : 'No corrections match.'}</p>`
    : html`
<p class="muted">Showing ${first}–${first + items.length - 1} of ${total}, newest first.</p>
<div class="corrections" aria-labelledby="list-title">${items.map((c) => correctionCard(ctx, c, canApprove, settings.twoPersonApproval))}</div>`
}
${pages > 1 ? html`<nav class="pager" aria-label="Pages">${filter.page > 1 ? html`<a href="${linkOf(filter, filter.page - 1)}">← Newer</a>` : ''}<span>Page ${filter.page} of ${pages}</span>${filter.page < pages ? html`<a href="${linkOf(filter, filter.page + 1)}">Older →</a>` : ''}</nav>` : ''}`,
    status,
  )
}

/** Scope keys that have an activity-log container (every correction writes to its scope's). */
export async function scopeKeysOf(ctx: PortalContext): Promise<string[]> {
  const containers = await ctx.deps.services.ledger.containers(ctx.session.workspace.id)
  return containers.flatMap((c) => (c.containerId.startsWith('scope:') ? [c.containerId.slice('scope:'.length)] : [])).sort()
}

function decide(meaning: 'approved' | 'rejected'): PortalRoute['handler'] {
  return async (ctx) => {
    const { session, deps, caller } = ctx
    const services = deps.services
    const id = ctx.params['id'] ?? ''
    const scopeKey = ctx.form.get('scopeKey') ?? ''
    const reason = (ctx.form.get('reason') ?? '').trim()
    const verb = meaning === 'approved' ? 'approved' : 'rejected'
    try {
      const correction = await services.corrections.get(caller, scopeKey, id)
      if (correction.status !== 'pending')
        throw new NotFoundError(`correction ${id} is ${correction.status}, not pending; only a pending correction can be decided`)
      if (meaning === 'rejected' && reason === '') {
        return await render(
          ctx,
          {
            kind: 'error',
            text: `Correction ${id} was not rejected: a rejection needs a reason (the author reads it). Nothing was signed.`,
          },
          400,
        )
      }
      // Part 11: the signatures service checks the password under the throttle and records a refusal.
      const check = await services.signatures.sign(session, {
        password: ctx.form.get('password') ?? '',
        clientAddress: ctx.request.ip,
        meaning,
        subject: { kind: 'correction', id },
        record: { scopeKey: correction.scopeKey, entityType: correction.entityType, entityId: correction.entityId },
      })
      if (check.outcome !== 'confirmed') {
        if (check.outcome === 'throttled') {
          const minutes = Math.ceil(check.retryAfterMs / 60_000)
          ctx.reply.header('retry-after', String(Math.ceil(check.retryAfterMs / 1000)))
          return await render(
            ctx,
            {
              kind: 'error',
              text: `Too many wrong passwords: signing is paused for ${minutes} minute${minutes === 1 ? '' : 's'}. Nothing was signed.`,
            },
            429,
          )
        }
        return await render(
          ctx,
          {
            kind: 'error',
            text: `The password is not right, so correction ${id} was not ${verb} and nothing was signed. The attempt is recorded.`,
          },
          401,
        )
      }
      const { signature } = check
      const decided =
        meaning === 'approved'
          ? await services.corrections.approve(caller, scopeKey, id, { signature, ...(reason ? { comment: reason } : {}) })
          : await services.corrections.reject(caller, scopeKey, id, reason, { signature })
      const q = new URLSearchParams({ status: 'all', decided: decided.id, scope: decided.scopeKey })
      return { redirect: `/portal/corrections?${q}` }
    } catch (error) {
      if (!(error instanceof DomainError) || !['invalid-input', 'forbidden', 'not-found'].includes(error.kind)) throw error
      const status = error.kind === 'forbidden' ? 403 : error.kind === 'not-found' ? 404 : 400
      return render(ctx, { kind: 'error', text: `Correction ${id} was not ${verb}: ${error.message}. Nothing was signed.` }, status)
    }
  }
}

export function correctionRoutes(): PortalRoute[] {
  return [
    definePortalRoute({
      method: 'GET',
      path: '/corrections',
      rights: ['amendments:read'],
      handler: async (ctx) => {
        const decidedId = ctx.query.get('decided')
        const scope = ctx.query.get('scope')
        if (!decidedId || !scope) return render(ctx)
        const decided = await ctx.deps.services.corrections.get(ctx.caller, scope, decidedId).catch(() => undefined)
        if (!decided || decided.status === 'pending' || !decided.decidedBy || decided.decidedAt === undefined) return render(ctx)
        const meaning = decided.status === 'applied' ? 'approved' : 'rejected'
        return render(ctx, {
          kind: 'success',
          text: `Correction ${decided.id} was ${meaning}${decided.status === 'applied' ? ' and applied' : ''}. Signed by ${decided.decidedBy.name} at ${utcText(decided.decidedAt)}, meaning: ${meaning}.`,
        })
      },
    }),
    definePortalRoute({ method: 'POST', path: '/corrections/:id/approve', rights: ['amendments:approve'], handler: decide('approved') }),
    definePortalRoute({ method: 'POST', path: '/corrections/:id/reject', rights: ['amendments:approve'], handler: decide('rejected') }),
  ]
}
