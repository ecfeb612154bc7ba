/**
 * @module
 * Explore (issue 18): a KQL workbench for accounts with `queries:run`. The page is rendered here
 * with every control in place; its script (explore-bundle.ts: CodeMirror 6 and uPlot) turns the
 * text area into an editor with completion and drives three JSON endpoints of its own, which take
 * the session's CSRF token in a header:
 *
 * - `GET  /portal/explore/schema`: the tables, typed columns, operators and functions the account
 *   may use (its scopes applied), for completion and the schema panel;
 * - `POST /portal/explore/run`: runs the text as an ad-hoc query (spec 2.3) exactly as
 *   `POST /oi-api/warm-queries` does, recorded like an API call; closing the request (Cancel)
 *   stops the query on the server; numbers are sent with their exact digits (64-bit longs);
 * - `POST /portal/explore/propose`: files the text as a proposed warm query, which then goes
 *   through the existing review on the Proposals page (the approval rules are unchanged).
 *
 * "View as a token scoped to" narrows the page to some connections, as a token with those
 * connection scopes would see the workspace: the schema, completion and runs then see only their
 * tables. A portal session itself has no scopes.
 */
import { randomBytes } from 'node:crypto'
import type { FastifyReply } from 'fastify'
import { stringify } from 'lossless-json'
import type { Caller } from '../../domain/access/index.js'
import { DomainError, HTTP_STATUS, InvalidInputError } from '../../domain/errors.js'
import { aggregateNames, scalarNames } from '../../kql/index.js'
import { proposalPageAddress } from '../../shared/portal-links.js'
import { exploreAssets } from '../explore-bundle.js'
import { type Html, html } from '../html.js'
import { KEYWORDS, PIPE_OPERATORS } from '../kql-highlight.js'
import { definePortalRoute, type PortalContext, type PortalResult, type PortalRoute } from '../portal-route.js'
import { policyWithStyleNonce } from '../security-headers.js'
import { pageOf } from './page.js'

const SAMPLE =
  'SensorReadings\n| where timestamp > ago(6h)\n| summarize avg(temperature) by bin(timestamp, 15m), sensor\n| render timechart'

/** The connections the page is narrowed to (`?connections=a,b`), or undefined for the session's own view. */
function narrowedTo(value: string | null | undefined): string[] | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined
  return [
    ...new Set(
      value
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean),
    ),
  ].slice(0, 100)
}

function callerFor(ctx: PortalContext, connections: string[] | undefined): Caller {
  return connections ? { ...ctx.caller, scopes: { ...ctx.caller.scopes, connections } } : ctx.caller
}

/** Aborts when the browser closes the request before the answer is written (the Cancel button). */
function abortOnClose(reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort(new Error('the browser cancelled the query'))
  })
  return controller.signal
}

function json(body: unknown, status = 200): PortalResult {
  return { json: stringify(body) ?? 'null', status }
}

/** A domain error as the API's error envelope, with the KQL position when the message names one. */
function errorJson(error: unknown): PortalResult {
  if (!(error instanceof DomainError)) throw error
  const at = /line (\d+), column (\d+)/.exec(error.message)
  return json({ error: { message: error.message, ...(at ? { line: Number(at[1]), column: Number(at[2]) } : {}) } }, HTTP_STATUS[error.kind])
}

function field(body: unknown, name: string): string | undefined {
  const value = body !== null && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined
  return typeof value === 'string' ? value : undefined
}

async function recordRun(ctx: PortalContext, status: number, started: number): Promise<void> {
  await ctx.deps.services.activity.recordCall(ctx.session.workspace.id, {
    method: 'POST',
    route: '/portal/explore/run',
    status,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    requestId: String(ctx.request.id),
    clientAddress: ctx.request.ip,
    tokenId: undefined,
    accountId: ctx.caller.accountId,
    accountName: ctx.caller.accountName,
  })
}

function page(ctx: PortalContext, connections: readonly string[], narrowed: string[] | undefined, styleNonce: string): Html {
  const text = ctx.query.get('q') ?? ''
  const canPropose = ctx.caller.rights.has('proposals:create')
  return html`
<h1>Explore</h1>
<p class="lead">Write KQL against the workspace's tables, run it as yourself (<kbd>Ctrl</kbd>/<kbd>⌘</kbd>+<kbd>Enter</kbd>), and see the rows and a chart.
Runs are ad-hoc queries, recorded in the activity log like any API call.</p>
<noscript><div class="alert warn"><p>The Explore page needs JavaScript. Programs run the same queries with <code>POST ${ctx.publicUrl}/oi-api/warm-queries</code>.</p></div></noscript>
<div class="explore" id="explore" data-csrf="${ctx.session.csrfToken}" data-api="${ctx.publicUrl}" data-connections="${narrowed?.join(',') ?? ''}" data-style-nonce="${styleNonce}">
  <aside class="schema-panel" aria-labelledby="schema-title">
    <h2 id="schema-title">Tables</h2>
    <form method="get" action="/portal/explore" class="scope-form">
      <label for="connections">View as a token scoped to<span class="hint">connections, comma-separated; empty: everything your role sees</span></label>
      <input id="connections" name="connections" type="text" value="${narrowed?.join(',') ?? ''}" list="connection-list" autocomplete="off">
      <datalist id="connection-list">${connections.map((c) => html`<option value="${c}">`)}</datalist>
      <input type="hidden" name="q" value="${text}">
      <button class="secondary small" type="submit">Apply</button>
    </form>
    <div id="schema-tree" aria-live="polite"><p class="muted">Loading the schema…</p></div>
  </aside>
  <section class="workbench" aria-label="Query">
    <label for="query-text" class="visually-hidden">KQL query</label>
    <textarea id="query-text" class="query-text" rows="8" spellcheck="false">${text || SAMPLE}</textarea>
    <div id="editor" class="editor" hidden></div>
    <div class="run-bar">
      <button type="button" id="run">Run</button>
      <button type="button" id="cancel" class="secondary" disabled>Cancel</button>
      <span id="run-status" class="run-status" role="status" aria-live="polite"></span>
    </div>
    <div id="query-error" class="alert error" role="alert" hidden></div>
    <div id="result" class="result" hidden>
      <div class="result-head">
        <p id="result-summary" class="result-summary"></p>
        <div class="result-actions">
          <button type="button" class="secondary small" id="download-csv">Download CSV</button>
          <button type="button" class="secondary small" id="download-jsonl">Download JSONL</button>
          <button type="button" class="secondary small" id="copy-curl">Copy curl</button>
          <span id="copy-status" class="muted small" role="status"></span>
        </div>
      </div>
      <div id="chart" class="explore-chart" hidden></div>
      <div id="grid" class="grid" tabindex="0" aria-label="Result rows"></div>
      <div id="cell-detail" class="cell-detail" hidden><div class="cell-detail-head"><strong id="cell-detail-title"></strong> <button type="button" class="secondary small" id="cell-detail-close">Close</button></div><pre id="cell-detail-value"></pre></div>
    </div>
    ${
      canPropose
        ? html`<details class="propose" id="propose">
      <summary>Propose as warm query</summary>
      <form id="propose-form" class="stack">
        <p class="hint">The query is filed as a proposal; it becomes a warm query only when a reviewer accepts it on the <a href="/portal/proposals">Proposals</a> page.</p>
        <div><label for="propose-lookup">Lookup<span class="hint">letters, digits, dashes; how programs name it</span></label><input id="propose-lookup" name="lookup" type="text" required maxlength="200"></div>
        <div><label for="propose-path">API path (optional)<span class="hint">e.g. plant/line-1/hourly-temperature</span></label><input id="propose-path" name="path" type="text" maxlength="700"></div>
        <div><label for="propose-description">Description<span class="hint">what it answers; the reviewer reads it as the rationale</span></label><textarea id="propose-description" name="description" rows="2" maxlength="4000" required></textarea></div>
        <div><button type="submit">File the proposal</button></div>
        <div id="propose-status" role="status" aria-live="polite"></div>
      </form>
    </details>`
        : ''
    }
    <details class="history"><summary>Recent queries (this browser)</summary><ol id="history" class="history-list"></ol></details>
  </section>
</div>`
}

export function exploreRoutes(): PortalRoute[] {
  return [
    definePortalRoute({
      method: 'GET',
      path: '/explore',
      rights: ['queries:run'],
      handler: async (ctx) => {
        const assets = await exploreAssets()
        const current = await ctx.deps.services.config.current(ctx.session.workspace.id)
        const narrowed = narrowedTo(ctx.query.get('connections'))
        // The editor adds its stylesheet as a <style> element: allowed with this response's nonce only.
        const styleNonce = randomBytes(18).toString('base64')
        ctx.reply.header('content-security-policy', policyWithStyleNonce(styleNonce))
        return pageOf(
          ctx,
          'Explore',
          'explore',
          page(
            ctx,
            current.document.connections.map((c) => c.lookup),
            narrowed,
            styleNonce,
          ),
          200,
          html`<link rel="stylesheet" href="/portal/assets/${assets.css.name}">
<script src="/portal/assets/${assets.js.name}" defer></script>`,
        )
      },
    }),
    definePortalRoute({
      method: 'GET',
      path: '/explore/schema',
      rights: ['queries:run'],
      handler: async (ctx) => {
        const tables = await ctx.deps.services.queries.schemaFor(callerFor(ctx, narrowedTo(ctx.query.get('connections'))))
        return json({
          tables,
          operators: [...KEYWORDS].sort(),
          pipeOperators: [...PIPE_OPERATORS].sort(),
          functions: [...scalarNames()].sort(),
          aggregates: [...aggregateNames()].sort(),
        })
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/explore/run',
      rights: ['queries:run'],
      handler: async (ctx) => {
        const started = performance.now()
        const body = ctx.request.body
        const caller = callerFor(ctx, narrowedTo(field(body, 'connections')))
        const current = await ctx.deps.services.config.current(ctx.session.workspace.id)
        let result: PortalResult
        try {
          const text = field(body, 'query')
          if (text === undefined) throw new InvalidInputError('query is required: the KQL text to run')
          const outcome = await ctx.deps.services.queries.runAdhoc(caller, text, { signal: abortOnClose(ctx.reply) })
          result = json({ ...outcome, rowCap: current.document.settings.queries.rowCap })
        } catch (error) {
          result = errorJson(error)
        }
        await recordRun(ctx, 'status' in result ? (result.status ?? 200) : 200, started)
        return result
      },
    }),
    definePortalRoute({
      method: 'POST',
      path: '/explore/propose',
      rights: ['queries:run', 'proposals:create'],
      handler: async (ctx) => {
        const body = ctx.request.body
        const lookup = (field(body, 'lookup') ?? '').trim()
        const path = (field(body, 'path') ?? '').trim()
        const description = (field(body, 'description') ?? '').trim()
        try {
          const proposal = await ctx.deps.services.proposals.create(
            ctx.caller,
            {
              rationale: description || `Proposed from the Explore page as the warm query "${lookup}".`,
              changes: [
                {
                  entity: 'warmQuery',
                  action: 'create',
                  lookup,
                  query: field(body, 'query') ?? '',
                  ...(path ? { path } : {}),
                  ...(description ? { description } : {}),
                },
              ],
            },
            'portal',
          )
          return json({ id: proposal.id, status: proposal.status, reviewUrl: proposalPageAddress(proposal.id) }, 201)
        } catch (error) {
          return errorJson(error)
        }
      },
    }),
  ]
}
