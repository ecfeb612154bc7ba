/**
 * The Explore page's script (bundled by esbuild into the portal's assets; see explore-bundle.ts).
 * It turns the page's text area into a CodeMirror 6 editor with KQL highlighting and completion
 * from the schema the server reports, runs the query through the portal's JSON endpoint (Cancel
 * aborts the request, which stops the query on the server), and shows the answer as a virtualised
 * grid and a uPlot chart. The query text lives in the URL (`?q=`) and the last 20 runs in this
 * browser's local storage.
 */
import 'uplot/dist/uPlot.min.css'
import './explore.css'
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete'
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands'
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language'
import { type Diagnostic, lintGutter, setDiagnostics } from '@codemirror/lint'
import { EditorState, Prec } from '@codemirror/state'
import { drawSelection, EditorView, highlightActiveLine, keymap, lineNumbers, placeholder } from '@codemirror/view'
import { renderChart } from './chart.js'
import { renderGrid } from './grid.js'
import { type ExploreSchema, kqlCompletion, kqlLanguage } from './kql-language.js'
import { curlCommand, parseResult, type QueryResult, toCsv, toJsonl } from './result-values.js'

const HISTORY_KEY = 'provenant.explore.history'
const HISTORY_SIZE = 20

const root = document.getElementById('explore')
if (root) start(root)

function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  return document.getElementById(id) as T
}

function start(root: HTMLElement): void {
  const csrf = root.dataset['csrf'] ?? ''
  const api = root.dataset['api'] ?? location.origin
  const connections = root.dataset['connections'] ?? ''
  const styleNonce = root.dataset['styleNonce'] ?? ''
  const textarea = byId<HTMLTextAreaElement>('query-text')
  const runButton = byId<HTMLButtonElement>('run')
  const cancelButton = byId<HTMLButtonElement>('cancel')
  const status = byId('run-status')
  const errorBox = byId('query-error')
  const resultBox = byId('result')
  let schema: ExploreSchema | undefined
  let tableNames: ReadonlySet<string> = new Set()
  let keywords: ReadonlySet<string> = new Set()
  let result: QueryResult | undefined
  let running: AbortController | undefined

  const view = new EditorView({
    parent: byId('editor'),
    state: EditorState.create({
      doc: textarea.value,
      extensions: [
        EditorView.cspNonce.of(styleNonce),
        lineNumbers(),
        history(),
        drawSelection(),
        highlightActiveLine(),
        bracketMatching(),
        closeBrackets(),
        lintGutter(),
        placeholder('SensorReadings | take 10'),
        // the language reads the keyword and table sets when it tokenizes, so they may arrive later
        kqlLanguage(
          (word) => keywords.has(word),
          (word) => tableNames.has(word),
        ),
        syntaxHighlighting(defaultHighlightStyle),
        autocompletion({ override: [kqlCompletion(() => schema)], activateOnTyping: true }),
        Prec.highest(
          keymap.of([
            {
              key: 'Mod-Enter',
              run: () => {
                void run()
                return true
              },
            },
          ]),
        ),
        keymap.of([...closeBracketsKeymap, ...defaultKeymap, ...historyKeymap, ...completionKeymap]),
        EditorView.contentAttributes.of({ 'aria-label': 'KQL query', 'aria-describedby': 'run-status' }),
        // a long one-line query wraps instead of scrolling its start out of sight
        EditorView.lineWrapping,
      ],
    }),
  })
  textarea.hidden = true
  byId('editor').hidden = false

  const queryText = () => view.state.doc.toString()
  const setQuery = (text: string) => view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } })

  // The schema: completion, highlighting of table names, the side panel.
  void fetch(`/portal/explore/schema${connections ? `?connections=${encodeURIComponent(connections)}` : ''}`, {
    headers: { accept: 'application/json' },
  })
    .then(async (response) => {
      if (!response.ok) throw new Error(`the schema could not be loaded (${response.status})`)
      schema = (await response.json()) as ExploreSchema
      tableNames = new Set(schema.tables.map((t) => t.table))
      keywords = new Set(schema.operators.map((o) => o.toLowerCase()))
      view.dispatch({}) // re-highlight with the table names
      renderSchema(schema)
    })
    .catch((error: unknown) => {
      byId('schema-tree').textContent = error instanceof Error ? error.message : String(error)
    })

  function renderSchema(s: ExploreSchema): void {
    const tree = byId('schema-tree')
    tree.replaceChildren()
    if (s.tables.length === 0) {
      tree.textContent = 'No tables are visible with these scopes.'
      return
    }
    for (const table of s.tables) {
      const details = document.createElement('details')
      details.open = true
      details.className = 'schema-table'
      const summary = document.createElement('summary')
      const name = insertButton(table.table)
      const from = document.createElement('span')
      from.className = 'muted small'
      from.textContent = ` ${table.connection}`
      summary.append(name, from)
      const list = document.createElement('ul')
      for (const column of table.columns) {
        const item = document.createElement('li')
        const button = insertButton(column.name)
        const type = document.createElement('span')
        type.className = 'coltype-inline'
        type.textContent = column.type
        item.append(button, ' ', type)
        list.append(item)
      }
      details.append(summary, list)
      tree.append(details)
    }
  }

  /** A schema-panel button that inserts `text` at the cursor. */
  function insertButton(text: string): HTMLButtonElement {
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'insert'
    button.textContent = text
    button.title = `Insert ${text}`
    button.addEventListener('click', () => insert(text))
    return button
  }

  function insert(text: string): void {
    const at = view.state.selection.main
    view.dispatch({ changes: { from: at.from, to: at.to, insert: text }, selection: { anchor: at.from + text.length } })
    view.focus()
  }

  function setStatus(text: string): void {
    status.textContent = text
  }

  function showError(message: string, line?: number, column?: number): void {
    errorBox.hidden = false
    errorBox.replaceChildren()
    const p = document.createElement('p')
    p.textContent = message
    errorBox.append(p)
    if (line !== undefined && column !== undefined && line <= view.state.doc.lines) {
      const lineInfo = view.state.doc.line(line)
      const from = Math.min(lineInfo.from + column - 1, lineInfo.to)
      const wordEnd = /^[A-Za-z0-9_-]+/.exec(view.state.sliceDoc(from, lineInfo.to))?.[0].length ?? 1
      const diagnostic: Diagnostic = { from, to: Math.min(from + Math.max(1, wordEnd), view.state.doc.length), severity: 'error', message }
      view.dispatch(setDiagnostics(view.state, [diagnostic]))
    }
  }

  function remember(text: string): void {
    const url = new URL(location.href)
    url.searchParams.set('q', text)
    if (connections) url.searchParams.set('connections', connections)
    window.history.replaceState(null, '', url)
    let list: { q: string; at: string }[] = []
    try {
      list = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]') as { q: string; at: string }[]
    } catch {
      list = []
    }
    list = [{ q: text, at: new Date().toISOString() }, ...list.filter((h) => h.q !== text)].slice(0, HISTORY_SIZE)
    localStorage.setItem(HISTORY_KEY, JSON.stringify(list))
    renderHistory(list)
  }

  function renderHistory(list?: { q: string; at: string }[]): void {
    let entries = list
    if (!entries) {
      try {
        entries = JSON.parse(localStorage.getItem(HISTORY_KEY) ?? '[]') as { q: string; at: string }[]
      } catch {
        entries = []
      }
    }
    const host = byId('history')
    host.replaceChildren()
    for (const entry of entries) {
      const item = document.createElement('li')
      const button = document.createElement('button')
      button.type = 'button'
      button.className = 'history-entry'
      button.textContent = entry.q.length > 160 ? `${entry.q.slice(0, 160)}…` : entry.q
      button.title = `Run at ${entry.at}; click to edit`
      button.addEventListener('click', () => {
        setQuery(entry.q)
        view.focus()
      })
      item.append(button)
      host.append(item)
    }
  }

  async function run(): Promise<void> {
    if (running) return
    const text = queryText()
    if (text.trim() === '') {
      showError('Write a query first.')
      return
    }
    errorBox.hidden = true
    view.dispatch(setDiagnostics(view.state, []))
    // The previous answer stays in view while this one runs, marked as not this query's.
    resultBox.classList.add('stale')
    byId('copy-status').textContent = ''
    running = new AbortController()
    runButton.disabled = true
    cancelButton.disabled = false
    const started = performance.now()
    const seconds = () => ((performance.now() - started) / 1000).toFixed(1)
    setStatus('Running…')
    const timer = setInterval(() => setStatus(`Running… ${seconds()} s`), 100)
    remember(text)
    try {
      const response = await fetch('/portal/explore/run', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, accept: 'application/json' },
        body: JSON.stringify({ query: text, ...(connections ? { connections } : {}) }),
        signal: running.signal,
      })
      const body = await response.text()
      if (!(response.headers.get('content-type') ?? '').includes('application/json')) {
        throw new Error('Your session ended; reload the page and sign in again.')
      }
      const parsed = parseResult(body) as { error?: { message: string; line?: unknown; column?: unknown } } & QueryResult
      if (!response.ok || parsed.error) {
        const e = parsed.error
        setStatus(`Failed after ${seconds()} s`)
        showError(e?.message ?? `The server answered ${response.status}.`, numberOf(e?.line), numberOf(e?.column))
        return
      }
      result = parsed
      const rows = result.rowCount === undefined ? result.results.length : Number(String(result.rowCount))
      setStatus(`${rows.toLocaleString('en')} row${rows === 1 ? '' : 's'} in ${seconds()} s`)
      showResult(result)
    } catch (error) {
      if (running?.signal.aborted) setStatus(`Cancelled after ${seconds()} s; the server stopped the query.`)
      else {
        setStatus(`Failed after ${seconds()} s`)
        showError(error instanceof Error ? error.message : String(error))
      }
    } finally {
      clearInterval(timer)
      running = undefined
      runButton.disabled = false
      cancelButton.disabled = true
    }
  }

  function numberOf(value: unknown): number | undefined {
    if (value === undefined || value === null) return undefined
    const n = Number(String(value))
    return Number.isFinite(n) ? n : undefined
  }

  function showResult(r: QueryResult): void {
    resultBox.hidden = false
    resultBox.classList.remove('stale')
    const cap = Number(String(r.rowCap))
    const summary = byId('result-summary')
    summary.replaceChildren()
    const rows = r.results.length
    summary.append(
      `${rows.toLocaleString('en')} row${rows === 1 ? '' : 's'}, ${r.columns.length} column${r.columns.length === 1 ? '' : 's'}. `,
    )
    if (r.truncated) {
      const strong = document.createElement('strong')
      strong.className = 'truncated'
      strong.textContent = `Truncated: the result was cut at the workspace's row cap of ${cap.toLocaleString('en')} rows (settings.queries.rowCap).`
      summary.append(strong)
    }
    const chartHost = byId('chart')
    chartHost.hidden = false
    const kind = renderChart(chartHost, r)
    chartHost.hidden = kind === undefined
    chartHost.dataset['kind'] = kind ?? ''
    byId('cell-detail').hidden = true
    renderGrid(byId('grid'), r, (title, value) => {
      byId('cell-detail-title').textContent = title
      byId('cell-detail-value').textContent = value
      byId('cell-detail').hidden = false
    })
  }

  function download(name: string, type: string, content: string): void {
    const url = URL.createObjectURL(new Blob([content], { type }))
    const link = document.createElement('a')
    link.href = url
    link.download = name
    document.body.append(link)
    link.click()
    link.remove()
    setTimeout(() => URL.revokeObjectURL(url), 10_000)
  }

  runButton.addEventListener('click', () => void run())
  cancelButton.addEventListener('click', () => running?.abort())
  byId('cell-detail-close').addEventListener('click', () => {
    byId('cell-detail').hidden = true
  })
  byId('download-csv').addEventListener('click', () => {
    if (result) download('query-result.csv', 'text/csv', toCsv(result))
  })
  byId('download-jsonl').addEventListener('click', () => {
    if (result) download('query-result.jsonl', 'application/x-ndjson', toJsonl(result))
  })
  byId('copy-curl').addEventListener('click', () => {
    const command = curlCommand(api, queryText())
    const done = () => {
      byId('copy-status').textContent = 'Copied (replace $TOKEN with an API token).'
    }
    navigator.clipboard?.writeText(command).then(done, () => {
      byId('copy-status').textContent = command
    })
  })

  const proposeForm = document.getElementById('propose-form') as HTMLFormElement | null
  proposeForm?.addEventListener('submit', (event) => {
    event.preventDefault()
    const form = new FormData(proposeForm)
    const out = byId('propose-status')
    out.textContent = 'Filing…'
    void fetch('/portal/explore/propose', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, accept: 'application/json' },
      body: JSON.stringify({
        query: queryText(),
        lookup: String(form.get('lookup') ?? ''),
        path: String(form.get('path') ?? ''),
        description: String(form.get('description') ?? ''),
      }),
    })
      .then(async (response) => {
        const body = (await response.json()) as { id?: string; reviewUrl?: string; error?: { message: string } }
        out.replaceChildren()
        if (!response.ok || !body.id) {
          out.className = 'alert error'
          out.textContent = body.error?.message ?? `The server answered ${response.status}.`
          return
        }
        out.className = 'alert success'
        const link = document.createElement('a')
        link.href = body.reviewUrl ?? '/portal/proposals'
        link.textContent = `Proposal ${body.id}`
        out.append(link, ' is open: a reviewer accepts or rejects it on the Proposals page.')
      })
      .catch((error: unknown) => {
        out.className = 'alert error'
        out.textContent = error instanceof Error ? error.message : String(error)
      })
  })

  renderHistory()
  if (new URL(location.href).searchParams.get('run') === '1') void run()
}
