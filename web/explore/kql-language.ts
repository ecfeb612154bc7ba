/**
 * KQL for CodeMirror 6: a stream tokenizer for highlighting (comments, strings, numbers, operators,
 * function calls, the workspace's tables) and a completion source fed with the schema the server
 * reports for the signed-in account, so only tables and columns it may read are ever offered.
 */
import type { Completion, CompletionContext, CompletionResult } from '@codemirror/autocomplete'
import { StreamLanguage, type StringStream } from '@codemirror/language'

export interface SchemaTable {
  readonly table: string
  readonly connection: string
  readonly columns: readonly { readonly name: string; readonly type: string }[]
}

export interface ExploreSchema {
  readonly tables: readonly SchemaTable[]
  readonly operators: readonly string[]
  /** The operators that may follow a pipe (a subset of `operators`). */
  readonly pipeOperators: readonly string[]
  readonly functions: readonly string[]
  readonly aggregates: readonly string[]
}

const RENDER_KINDS = ['timechart', 'linechart', 'columnchart', 'barchart', 'piechart', 'areachart', 'scatterchart', 'table']

interface TokenState {
  inString: string | null
}

/** The highlighting language; tables are shown as type names. Both sets may arrive after the editor starts. */
export function kqlLanguage(isKeyword: (word: string) => boolean, isTable: (word: string) => boolean): StreamLanguage<TokenState> {
  function token(stream: StringStream, state: TokenState): string | null {
    if (state.inString) {
      const quote = state.inString
      while (!stream.eol()) {
        const ch = stream.next()
        if (ch === '\\') stream.next()
        else if (ch === quote) {
          state.inString = null
          break
        }
      }
      return 'string'
    }
    if (stream.eatSpace()) return null
    if (stream.match('//')) {
      stream.skipToEnd()
      return 'comment'
    }
    const ch = stream.peek() ?? ''
    if (ch === '"' || ch === "'") {
      stream.next()
      state.inString = ch
      return token(stream, state)
    }
    if (/\d/.test(ch)) {
      stream.match(/^\d+(\.\d+)?([eE][+-]?\d+)?(d|h|m|s|ms|microsecond|tick)?/)
      return 'number'
    }
    if (ch === '|') {
      stream.next()
      return 'operator'
    }
    if (/[A-Za-z_]/.test(ch)) {
      const word = (stream.match(/^[A-Za-z_][A-Za-z0-9_-]*/) as RegExpMatchArray)[0]
      // `project-away` is one operator, `a-b` is a subtraction: keep the dash only for keywords
      const dashed = word.includes('-') && !isKeyword(word.toLowerCase())
      if (dashed) stream.backUp(word.length - word.indexOf('-'))
      const name = dashed ? word.slice(0, word.indexOf('-')) : word
      if (isKeyword(name.toLowerCase())) return 'keyword'
      if (isTable(name)) return 'typeName'
      if (stream.peek() === '(') return 'variableName.function'
      if (name === 'true' || name === 'false' || name === 'null') return 'atom'
      return 'variableName'
    }
    stream.next()
    return /[=<>!+\-*/%~]/.test(ch) ? 'operator' : null
  }
  return StreamLanguage.define<TokenState>({
    name: 'kql',
    startState: () => ({ inString: null }),
    token,
    languageData: { commentTokens: { line: '//' } },
  })
}

/** Table names the text mentions (so columns of those tables are offered first). */
function tablesIn(text: string, schema: ExploreSchema): SchemaTable[] {
  const words = new Set(text.match(/[A-Za-z_][A-Za-z0-9_]*/g) ?? [])
  return schema.tables.filter((t) => words.has(t.table))
}

/**
 * Completion by context: after a pipe, the tabular operators; at the start of a statement or after
 * `union`/`join`/`lookup`, the tables; after `render`, the chart kinds; elsewhere the columns of
 * the tables the query names (every visible table's when it names none), functions and aggregates.
 */
export function kqlCompletion(schema: () => ExploreSchema | undefined) {
  return (context: CompletionContext): CompletionResult | null => {
    const current = schema()
    if (!current) return null
    const word = context.matchBefore(/[A-Za-z_][A-Za-z0-9_-]*/)
    if (!word && !context.explicit) return null
    const from = word ? word.from : context.pos
    const before = context.state.sliceDoc(0, from)
    const lastLine = before.slice(before.lastIndexOf('\n') + 1)
    const afterPipe = /\|\s*$/.test(before)
    const statementStart = /(^|;)\s*$/.test(before) || /\b(union|join|lookup)\s+(kind\s*=\s*\w+\s+)?\(?\s*$/.test(before)
    const afterRender = /\brender\s+$/.test(lastLine)
    let options: Completion[]
    if (afterRender) options = RENDER_KINDS.map((k) => ({ label: k, type: 'keyword' }))
    else if (afterPipe) options = current.pipeOperators.map((o) => ({ label: o, type: 'keyword' }))
    else if (statementStart)
      options = current.tables.map((t) => ({ label: t.table, type: 'type', detail: `table (${t.connection})`, boost: 10 }))
    else {
      const named = tablesIn(context.state.doc.toString(), current)
      const sources = named.length > 0 ? named : current.tables
      const seen = new Set<string>()
      const columns: Completion[] = []
      for (const t of sources)
        for (const c of t.columns) {
          if (seen.has(c.name)) continue
          seen.add(c.name)
          columns.push({ label: c.name, type: 'property', detail: `${c.type} · ${t.table}`, boost: 20 })
        }
      options = [
        ...columns,
        ...current.aggregates.map((f) => ({ label: f, type: 'function', detail: 'aggregate', apply: `${f}(` })),
        ...current.functions.map((f) => ({ label: f, type: 'function', apply: `${f}(` })),
        ...current.operators.filter((o) => !current.pipeOperators.includes(o)).map((o) => ({ label: o, type: 'keyword' })),
        ...current.tables.map((t) => ({ label: t.table, type: 'type', detail: `table (${t.connection})` })),
      ]
    }
    return { from, options, validFor: /^[A-Za-z0-9_-]*$/ }
  }
}
