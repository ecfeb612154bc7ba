/**
 * @module
 * Warm queries (spec 2.1, 4.1): the list with approver and approval time, and per query its KQL
 * (highlighted), how to call it, and a run preview as the signed-in account: a table, and a line
 * chart when the result has a `timestamp` and a numeric column.
 */
import { InvalidInputError, NotFoundError } from '../../domain/errors.js'
import type { QueryResponse } from '../../domain/queries/index.js'
import { timeTag } from '../format.js'
import { type Html, html } from '../html.js'
import { highlightKql } from '../kql-highlight.js'
import { chartDataOf, renderLineChart } from '../line-chart.js'
import { definePortalRoute, type PortalRoute } from '../portal-route.js'
import { pageOf } from './page.js'

/** Rows shown in the preview table (the chart uses every returned row). */
export const PREVIEW_ROWS = 200

const NUMERIC = new Set(['int', 'long', 'real', 'decimal'])

function cell(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="null">null</span>`
  if (typeof value === 'object') return html`<code>${JSON.stringify(value)}</code>`
  return html`${String(value)}`
}

function resultView(result: QueryResponse, now: number): Html {
  const shown = result.results.slice(0, PREVIEW_ROWS)
  const chart = chartDataOf(result.columns, result.results)
  return html`<section aria-labelledby="result-title" id="result">
<h2 id="result-title">Preview</h2>
<p>${result.rowCount} row${result.rowCount === 1 ? '' : 's'}, ${result.columns.length} column${result.columns.length === 1 ? '' : 's'}, run ${timeTag(now, now)}.
${result.truncated ? html`<strong>The result was cut at the workspace's row cap.</strong>` : ''}
${result.rowCount > PREVIEW_ROWS ? html`The table shows the first ${PREVIEW_ROWS}.` : ''}</p>
${chart ? renderLineChart(chart) : ''}
${
  result.columns.length === 0
    ? ''
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Result rows</caption>
<thead><tr>${result.columns.map((c) => html`<th scope="col">${c.name}<span class="coltype">${c.type}</span></th>`)}</tr></thead>
<tbody>${shown.map((row) => html`<tr>${result.columns.map((c) => html`<td${NUMERIC.has(c.type) ? html` class="num"` : ''}>${cell(row[c.name])}</td>`)}</tr>`)}</tbody>
</table></div>`
}
</section>`
}

export function warmQueryRoutes(): PortalRoute[] {
  return [
    definePortalRoute({
      method: 'GET',
      path: '/warm-queries',
      rights: ['warm-queries:read'],
      handler: async (ctx) => {
        const current = await ctx.deps.services.config.current(ctx.session.workspace.id)
        const queries = current.document.warmQueries
        return pageOf(
          ctx,
          'Warm queries',
          'warm-queries',
          html`
<h1>Warm queries</h1>
<p class="lead">Saved, approved queries. Dashboards and programs run them by lookup or API path
(<code>GET ${ctx.publicUrl}/oi-api/warm-queries/&lt;lookup or path&gt;</code>); each run returns who approved the query and when.</p>
${
  queries.length === 0
    ? html`<p class="muted">This workspace has no warm queries yet. They are added with the workspace configuration (<code>provenant apply</code>).</p>`
    : html`<div class="table-wrap"><table>
<caption class="visually-hidden">Warm queries</caption>
<thead><tr><th scope="col">Lookup</th><th scope="col">API path</th><th scope="col">Description</th><th scope="col">Approved by</th><th scope="col">Approved</th></tr></thead>
<tbody>${queries.map((q) => {
        const approval = current.approvals[q.lookup]
        return html`<tr>
  <th scope="row"><a href="/portal/warm-queries/${q.lookup}">${q.lookup}</a></th>
  <td>${q.path ? html`<code>${q.path}</code>` : html`<span class="muted">none</span>`}</td>
  <td>${q.description ?? ''}${q.query ? '' : html` <span class="badge expired">no saved text</span>`}</td>
  <td>${approval?.accountName ?? html`<span class="muted">not approved</span>`}</td>
  <td>${approval ? timeTag(approval.at, ctx.now) : ''}</td>
</tr>`
      })}</tbody></table></div>`
}`,
        )
      },
    }),
    definePortalRoute({
      method: 'GET',
      path: '/warm-queries/:lookup',
      rights: ['warm-queries:read'],
      handler: async (ctx) => {
        const services = ctx.deps.services
        const current = await services.config.current(ctx.session.workspace.id)
        const lookup = ctx.params['lookup'] ?? ''
        const query = current.document.warmQueries.find((q) => q.lookup === lookup)
        if (!query) throw new NotFoundError(`this workspace has no warm query "${lookup}"`)
        const approval = current.approvals[query.lookup]
        const address = query.path ?? query.lookup
        let outcome: Html = html``
        let status = 200
        if (ctx.query.get('run') === '1') {
          try {
            const result = await services.queries.runWarm(ctx.caller, query.lookup)
            outcome = resultView(result, ctx.now)
          } catch (error) {
            if (!(error instanceof InvalidInputError)) throw error
            status = 400
            outcome = html`<div class="alert error" role="alert" id="result"><h2>The preview could not run</h2><p>${error.message}</p></div>`
          }
        }
        return pageOf(
          ctx,
          `Warm query ${query.lookup}`,
          'warm-queries',
          html`
<p><a href="/portal/warm-queries">← All warm queries</a></p>
<h1>${query.lookup}</h1>
${query.description ? html`<p class="lead">${query.description}</p>` : ''}
<div class="panel"><dl class="facts">
  <dt>API path</dt><dd>${query.path ? html`<code>${query.path}</code>` : html`<span class="muted">none (call it by lookup)</span>`}</dd>
  <dt>Call it</dt><dd><code>GET ${ctx.publicUrl}/oi-api/warm-queries/${address}</code></dd>
  <dt>Approved by</dt><dd>${approval?.accountName ?? html`<span class="muted">not approved</span>`}</dd>
  <dt>Approved</dt><dd>${approval ? timeTag(approval.at, ctx.now) : html`<span class="muted">never</span>`}</dd>
</dl></div>
<h2 id="kql-title">Query</h2>
${
  query.query
    ? html`<pre aria-labelledby="kql-title"><code class="kql">${highlightKql(query.query)}</code></pre>
<form method="get" action="/portal/warm-queries/${query.lookup}" data-busy-label="Running…">
  <input type="hidden" name="run" value="1">
  <button type="submit">Run preview</button>
  <span class="muted">Runs now, as you (${ctx.session.account.name}), under the workspace's row and time caps.</span>
</form>`
    : html`<p class="alert warn">This warm query has no saved query text, so it cannot run (the API answers 400).</p>`
}
${outcome}`,
          status,
        )
      },
    }),
  ]
}
