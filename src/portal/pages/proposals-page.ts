/**
 * @module
 * Proposals (spec 1; issue 9 item 3): open proposals filed through MCP or the API with their author,
 * rationale and a readable diff; a reviewer (`proposals:review`) accepts one — the change is
 * committed and the acceptor becomes the approver of every warm query it adds or changes — or
 * rejects it with a reason. The author cannot accept their own proposal, and the page says why.
 * Accepting and rejecting exist only here: `services.proposalReview` is given to the portal alone.
 */
import { roleHas } from '../../domain/access/index.js'
import { DomainError } from '../../domain/errors.js'
import { MAX_REASON_LENGTH, type Proposal, type ProposalDiff } from '../../domain/proposals/index.js'
import { timeTag } from '../format.js'
import { type Html, html } from '../html.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'
import { pageOf } from './page.js'

const STATUS_OF_KIND = { 'invalid-input': 400, forbidden: 403, 'not-found': 404 } as const

interface Notice {
  readonly kind: 'success' | 'warn' | 'error'
  readonly text: string
}

const CHANNEL: Readonly<Record<string, string>> = { mcp: 'an AI client (MCP)', portal: 'the portal', api: 'the API' }

/** The diff text with one class per line: added, removed, entity heading. */
export function renderDiff(diff: ProposalDiff, label: string): Html {
  const lines = diff.text.split('\n').map((line) => {
    const heading = /^[+~=-] \S/.test(line)
    const kind = heading ? 'diff-head' : line.startsWith('+') ? 'diff-add' : line.startsWith('-') ? 'diff-del' : 'diff-same'
    return html`<span class="${kind}">${line}</span>`
  })
  return html`<pre class="diff" aria-label="${label}"><code>${lines.map((l, i) => (i === 0 ? l : html`\n${l}`))}</code></pre>`
}

/** How a decided proposal ended: status, who and when, and the commit or the reason. */
function decisionText(proposal: Proposal, now: number): Html {
  return html`<p class="decision"><span class="badge ${proposal.status}">${proposal.status}</span> by ${proposal.decidedBy?.name ?? 'unknown'}, ${timeTag(proposal.decidedAt, now)}${
    proposal.status === 'accepted'
      ? html`; committed as <span class="mono">${proposal.commitId ?? ''}</span>.`
      : proposal.decisionReason
        ? html`. Reason: ${proposal.decisionReason}`
        : '.'
  }</p>`
}

function proposalCard(ctx: PortalContext, proposal: Proposal, canReview: boolean, focused = false): Html {
  const { session, now } = ctx
  const own = proposal.author.id === session.account.id
  const csrf = session.csrfToken
  const id = proposal.id
  return html`<article class="panel proposal${focused ? ' focused' : ''}" id="${id}" aria-labelledby="title-${id}" data-proposal-id="${id}">
  <h3 id="title-${id}">Proposal by ${proposal.author.name} <span class="muted mono small">${id}</span></h3>
  <p class="muted">Filed ${timeTag(proposal.createdAt, now)} through ${CHANNEL[proposal.via] ?? proposal.via}; ${proposal.changes.length} change${proposal.changes.length === 1 ? '' : 's'}.</p>
  ${proposal.status === 'open' ? '' : decisionText(proposal, now)}
  <h4>Rationale</h4>
  <blockquote class="rationale">${proposal.rationale}</blockquote>
  <h4>Changes</h4>
  ${renderDiff(proposal.diff, `Changes of proposal ${id}`)}
  ${
    canReview && proposal.status === 'open'
      ? html`<div class="review">
    ${
      own
        ? html`<p class="alert info explain"><strong>You filed this proposal, so you cannot accept it.</strong> Another person with review rights must: a change is accepted by a second pair of eyes. You may reject it to withdraw it.</p>`
        : html`<form method="post" action="/portal/proposals/${id}/accept" class="inline-form">
      <input type="hidden" name="_csrf" value="${csrf}">
      <button type="submit" aria-label="Accept proposal ${id}">Accept and commit</button>
      <span class="muted">Commits the change as you; you become the approver of the warm queries it adds or changes.</span>
    </form>`
    }
    <form method="post" action="/portal/proposals/${id}/reject" class="stack reject-form">
      <input type="hidden" name="_csrf" value="${csrf}">
      <div>
        <label for="reason-${id}">Reason for rejecting <span class="hint">The author reads it (required, up to ${MAX_REASON_LENGTH} characters)</span></label>
        <textarea id="reason-${id}" name="reason" rows="2" required maxlength="${MAX_REASON_LENGTH}"></textarea>
      </div>
      <div><button type="submit" class="danger" aria-label="Reject proposal ${id}">Reject</button></div>
    </form>
  </div>`
      : ''
  }
</article>`
}

function decidedRow(proposal: Proposal, now: number): Html {
  return html`<tr data-proposal-id="${proposal.id}">
  <th scope="row"><span class="mono small">${proposal.id}</span></th>
  <td>${proposal.author.name}<div class="muted small">via ${proposal.via}</div></td>
  <td>${proposal.rationale.length > 160 ? `${proposal.rationale.slice(0, 160)}…` : proposal.rationale}</td>
  <td><span class="badge ${proposal.status}">${proposal.status}</span></td>
  <td>${proposal.decidedBy?.name ?? ''}<div>${timeTag(proposal.decidedAt, now)}</div></td>
  <td>${proposal.status === 'accepted' ? html`commit <span class="mono small">${proposal.commitId ?? ''}</span>` : (proposal.decisionReason ?? '')}</td>
</tr>`
}

async function render(ctx: PortalContext, notice?: Notice, status = 200, focus?: Proposal): Promise<PortalResult> {
  const { session, deps, now } = ctx
  // The proposal a link points at (`?proposal=`, the MCP reviewUrl) is shown first and not again below.
  const all = (await deps.services.proposals.list(session.workspace.id, { limit: 500 })).filter((p) => p.id !== focus?.id)
  const open = all.filter((p) => p.status === 'open')
  const decided = all
    .filter((p) => p.status !== 'open')
    .sort((a, b) => (b.decidedAt ?? 0) - (a.decidedAt ?? 0))
    .slice(0, 50)
  const canReview = roleHas(session.role, 'proposals:review')
  return pageOf(
    ctx,
    'Proposals',
    'proposals',
    html`
<h1>Proposals</h1>
<p class="lead">Changes to the workspace configuration proposed by people or AI clients (through MCP). Nothing changes until a
reviewer accepts a proposal here; accepting is possible only in the portal.${canReview ? '' : html` Your role (${session.role}) can read proposals; an approver or admin reviews them.`}</p>
${notice ? html`<div class="alert ${notice.kind}" role="${notice.kind === 'error' ? 'alert' : 'status'}"><p>${notice.text}</p></div>` : ''}
${
  focus
    ? html`<h2 id="focus-title">The proposal you followed <a class="small" href="/portal/proposals">(show all)</a></h2>
${proposalCard(ctx, focus, canReview, true)}`
    : ''
}
<h2 id="open-title">Open proposals <span class="count">${open.length}</span></h2>
${open.length === 0 ? html`<p class="muted">No open proposals.</p>` : html`<div class="proposals" aria-labelledby="open-title">${open.map((p) => proposalCard(ctx, p, canReview))}</div>`}
<h2 id="decided-title">Decided proposals</h2>
${
  decided.length === 0
    ? html`<p class="muted">None yet.</p>`
    : html`<div class="table-wrap"><table aria-labelledby="decided-title">
<thead><tr><th scope="col">Proposal</th><th scope="col">Author</th><th scope="col">Rationale</th><th scope="col">Status</th><th scope="col">Decided by</th><th scope="col">Commit or reason</th></tr></thead>
<tbody>${decided.map((p) => decidedRow(p, now))}</tbody></table></div>`
}`,
    status,
  )
}

/**
 * A refusal the page explains in place (bad input, conflict, rights); the rest goes to the portal's
 * error edge: signing in again, a 503, an unprovisioned deployment, or a bug.
 */
function isRefusalToShow(error: unknown): error is DomainError {
  return (
    error instanceof DomainError && error.kind !== 'unauthenticated' && error.kind !== 'unavailable' && error.kind !== 'not-provisioned'
  )
}

function statusOf(error: DomainError): number {
  return (STATUS_OF_KIND as Record<string, number>)[error.kind] ?? 400
}

export function proposalRoutes(): PortalRoute[] {
  return [
    definePortalRoute({
      method: 'GET',
      path: '/proposals',
      rights: ['proposals:create'],
      handler: async (ctx) => {
        const wanted = ctx.query.get('proposal')
        if (wanted !== null) {
          const focus = await ctx.deps.services.proposals.find(ctx.session.workspace.id, wanted.trim().slice(0, 100))
          if (!focus)
            return render(
              ctx,
              {
                kind: 'error',
                text: `There is no proposal "${wanted.slice(0, 100)}" in this workspace. The open and decided ones are listed below.`,
              },
              404,
            )
          return render(ctx, undefined, 200, focus)
        }
        const decided = ['accepted', 'rejected', 'superseded'].find((k) => ctx.query.has(k))
        if (!decided) return render(ctx)
        const proposal = await ctx.deps.services.proposals.find(ctx.session.workspace.id, ctx.query.get(decided) ?? '')
        if (!proposal || proposal.status !== decided) return render(ctx)
        const text =
          proposal.status === 'accepted'
            ? `Proposal ${proposal.id} by ${proposal.author.name} was accepted and committed as ${proposal.commitId ?? ''}.`
            : proposal.status === 'rejected'
              ? `Proposal ${proposal.id} by ${proposal.author.name} was rejected. The reason is recorded with it.`
              : `Proposal ${proposal.id} could not be accepted and is now superseded, so nothing was committed: ${proposal.decisionReason ?? ''}`
        return render(ctx, { kind: proposal.status === 'superseded' ? 'warn' : 'success', text })
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/proposals/:id/accept',
      rights: ['proposals:review'],
      handler: async (ctx) => {
        const { session, deps } = ctx
        try {
          const { proposal } = await deps.services.proposalReview.accept(
            { accountId: session.account.id, accountName: session.account.name, role: session.role },
            session.workspace.id,
            ctx.params['id'] ?? '',
          )
          return { redirect: `/portal/proposals?${proposal.status}=${encodeURIComponent(proposal.id)}` }
        } catch (error) {
          if (!isRefusalToShow(error)) throw error
          return render(ctx, { kind: 'error', text: `The proposal was not accepted: ${error.message}.` }, statusOf(error))
        }
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/proposals/:id/reject',
      rights: ['proposals:review'],
      handler: async (ctx) => {
        const { session, deps } = ctx
        try {
          const proposal = await deps.services.proposalReview.reject(
            { accountId: session.account.id, accountName: session.account.name, role: session.role },
            session.workspace.id,
            ctx.params['id'] ?? '',
            ctx.form.get('reason') ?? '',
          )
          return { redirect: `/portal/proposals?rejected=${encodeURIComponent(proposal.id)}` }
        } catch (error) {
          if (!isRefusalToShow(error)) throw error
          return render(ctx, { kind: 'error', text: `The proposal was not rejected: ${error.message}.` }, statusOf(error))
        }
      },
    }),
  ]
}
