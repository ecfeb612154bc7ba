/**
 * @module
 * The tabular operators' table (issue 19 item 6): operator keyword after `|` → the function that
 * reads the rest of the operator. Longer clauses are read by operator-clauses.ts; the keyword's
 * dashed spelling (`project-away`) is joined by `Parser.readOperatorName()`.
 */
import type * as A from './ast.js'
import {
  parseJoinConditions,
  parseMakeSeries,
  parseMvItems,
  parseNamePatterns,
  parseOrderItems,
  parseParenTuple,
  parseParsePattern,
  parseScan,
  parseTopNested,
} from './operator-clauses.js'
import type { SourceParser } from './source-parser.js'

/** Reads one operator after its keyword (`name`, which starts at `start`) has been consumed. */
export type OperatorParser = (p: SourceParser, name: string, start: number) => A.Operator

function spanFrom(p: SourceParser, start: number): A.Span {
  return { start, end: p.lastEnd }
}

function parseWhereOp(p: SourceParser, _name: string, start: number): A.Operator {
  const predicate = p.parseExpr()
  return { kind: 'Where', predicate, ...spanFrom(p, start) }
}

function parseSearchOp(p: SourceParser, _name: string, start: number): A.Operator {
  const body = p.parseSearchBody()
  if (body.tables) throw p.error(start, "search after a pipe searches its input: 'in (tables)' can only start a query")
  return { kind: 'Where', predicate: body.predicate, ...spanFrom(p, start) }
}

function parseProjectOp(p: SourceParser, _name: string, start: number): A.Operator {
  const items = p.parseNamedExprList()
  return { kind: 'Project', items, ...spanFrom(p, start) }
}

function parseProjectAwayOp(p: SourceParser, _name: string, start: number): A.Operator {
  return { kind: 'ProjectAway', patterns: parseNamePatterns(p, false), ...spanFrom(p, start) }
}

function parseProjectKeepOp(p: SourceParser, _name: string, start: number): A.Operator {
  return { kind: 'ProjectKeep', patterns: parseNamePatterns(p, false), ...spanFrom(p, start) }
}

function parseProjectReorderOp(p: SourceParser, _name: string, start: number): A.Operator {
  return { kind: 'ProjectReorder', patterns: parseNamePatterns(p, true), ...spanFrom(p, start) }
}

function parseProjectRenameOp(p: SourceParser, _name: string, start: number): A.Operator {
  const renames = p.list((): A.ProjectRenameOp['renames'][number] => {
    const n = p.expectName('a new column name')
    p.expectPunct('=', 'in project-rename (NewName = OldName)')
    const o = p.expectName('an existing column name')
    return { newName: n.name, oldName: o.name, start: n.start, oldStart: o.start }
  })
  return { kind: 'ProjectRename', renames, ...spanFrom(p, start) }
}

function parseProjectByNamesOp(p: SourceParser, _name: string, start: number): A.Operator {
  const args = p.list(() => p.parseExpr())
  return { kind: 'ProjectByNames', args, ...spanFrom(p, start) }
}

function parseExtendOp(p: SourceParser, _name: string, start: number): A.Operator {
  return { kind: 'Extend', items: p.parseNamedExprList(), ...spanFrom(p, start) }
}

function parseSummarizeOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams([])
  const aggregates = p.isIdent('by') ? [] : p.parseNamedExprList()
  let by: A.NamedExpr[] = []
  if (p.acceptIdent('by')) by = p.parseNamedExprList()
  if (aggregates.length === 0 && by.length === 0) throw p.expected("an aggregate or 'by' after summarize")
  return { kind: 'Summarize', params, aggregates, by, ...spanFrom(p, start) }
}

function parseCountOp(p: SourceParser, _name: string, start: number): A.Operator {
  let countName: string | undefined
  if (p.acceptIdent('as')) countName = p.expectName("a column name after 'as'").name
  return { kind: 'Count', name: countName, ...spanFrom(p, start) }
}

function parseDistinctOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams([])
  const items = p.parseNamedExprList()
  return { kind: 'Distinct', params, items, ...spanFrom(p, start) }
}

function parseTopOp(p: SourceParser, _name: string, start: number): A.Operator {
  const count = p.parseExpr()
  p.expectKeyword('by', 'after the number of rows in top')
  const by = parseOrderItems(p)
  return { kind: 'Top', count, by, ...spanFrom(p, start) }
}

function parseTakeOp(p: SourceParser, _name: string, start: number): A.Operator {
  p.parseParams([])
  const count = p.parseExpr()
  return { kind: 'Take', count, ...spanFrom(p, start) }
}

function parseSortOp(p: SourceParser, name: string, start: number): A.Operator {
  p.parseParams([])
  p.expectKeyword('by', `after '${name}'`)
  return { kind: 'Sort', by: parseOrderItems(p), ...spanFrom(p, start) }
}

function parseJoinOp(p: SourceParser, name: string, start: number): A.Operator {
  const params = p.parseParams(['kind'])
  if (p.isIdent('on') && !p.isPunct('|', 1)) throw p.expected(`the right side of ${name} (a table name or a (subquery))`)
  const right = p.parseExpr()
  p.expectKeyword('on', `after the right side of ${name}`)
  const on = parseJoinConditions(p)
  return { kind: name === 'join' ? 'Join' : 'Lookup', params, right, on, ...spanFrom(p, start) }
}

function parseMvExpandOp(p: SourceParser, name: string, start: number): A.Operator {
  const params = p.parseParams(['bagexpansion', 'with_itemindex', 'kind'])
  const items = parseMvItems(p)
  let limit: A.Expr | undefined
  if (p.acceptIdent('limit')) limit = p.parseExpr()
  // the legacy mvexpand stops at 128 rows per record by default (documentation)
  else if (name === 'mvexpand') limit = { kind: 'Literal', type: 'long', value: 128, start, end: start }
  return { kind: 'MvExpand', params, items, limit, ...spanFrom(p, start) }
}

function parseMvApplyOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams(['with_itemindex', 'bagexpansion', 'kind'])
  const items = parseMvItems(p)
  let limit: A.Expr | undefined
  if (p.acceptIdent('limit')) limit = p.parseExpr()
  p.parseParams(['id'])
  p.expectKeyword('on', 'in mv-apply (mv-apply items on (subquery))')
  const subqueryStart = p.expectPunct('(', "after 'on'").start
  const subquery = p.list(() => p.parseOperator(), { separator: '|' })
  p.expectPunct(')', 'to close the mv-apply subquery')
  return { kind: 'MvApply', params, items, limit, subquery, subqueryStart, ...spanFrom(p, start) }
}

function parseParseOp(p: SourceParser, name: string, start: number): A.Operator {
  const params = p.parseParams(['kind', 'flags'])
  const source = p.parseExpr()
  p.expectKeyword('with', `after the source expression of ${name}`)
  const pattern = parseParsePattern(p)
  return { kind: 'Parse', where: name === 'parse-where', params, source, pattern, ...spanFrom(p, start) }
}

function parseParseKvOp(p: SourceParser, _name: string, start: number): A.Operator {
  const source = p.parseExpr()
  p.expectKeyword('as', 'in parse-kv (parse-kv Expr as (Key:type, ...))')
  p.expectPunct('(')
  const keys = p.list(() => p.parseColumnDecl())
  p.expectPunct(')')
  let options: A.OperatorParam[] = []
  if (p.acceptIdent('with')) {
    p.expectPunct('(')
    const names = ['pair_delimiter', 'kv_delimiter', 'quote', 'escape', 'greedy', 'regex']
    options = p.parseParams(names)
    while (p.acceptPunct(',')) {
      const more = p.parseParams(names)
      if (more.length === 0) throw p.expected('a parse-kv option (pair_delimiter, kv_delimiter, quote, escape, greedy, regex)')
      options = options.concat(more)
    }
    p.expectPunct(')', 'to close the parse-kv options')
  }
  return { kind: 'ParseKv', source, keys, options, ...spanFrom(p, start) }
}

function parseSerializeOp(p: SourceParser, _name: string, start: number): A.Operator {
  const items = p.isName() ? p.parseNamedExprList() : []
  return { kind: 'Serialize', items, ...spanFrom(p, start) }
}

function parseSampleOp(p: SourceParser, _name: string, start: number): A.Operator {
  return { kind: 'Sample', count: p.parseExpr(), ...spanFrom(p, start) }
}

function parseSampleDistinctOp(p: SourceParser, _name: string, start: number): A.Operator {
  const count = p.parseExpr()
  p.expectKeyword('of', 'in sample-distinct (sample-distinct N of Column)')
  const column = p.parseExpr()
  return { kind: 'SampleDistinct', count, column, ...spanFrom(p, start) }
}

function parseAsOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams([])
  const n = p.expectName("a name after 'as'")
  return { kind: 'As', params, name: n.name, ...spanFrom(p, start) }
}

function parseGetschemaOp(p: SourceParser, _name: string, start: number): A.Operator {
  return { kind: 'GetSchema', ...spanFrom(p, start) }
}

function parseRenderOp(p: SourceParser, _name: string, start: number): A.Operator {
  const chart = p.expectName('a visualization (timechart, barchart, table, ...)').name
  let properties: { name: string; value: A.Expr }[] = []
  if (p.acceptIdent('with')) {
    p.expectPunct('(')
    const property = (): { name: string; value: A.Expr } => {
      const n = p.expectName('a render property')
      p.expectPunct('=')
      return { name: n.name, value: p.isPunct('(') ? parseParenTuple(p) : p.parseExpr() }
    }
    properties = p.list(property, { close: ')', trailing: true })
    p.expectPunct(')', 'to close the render properties')
  }
  return { kind: 'Render', chart, properties, ...spanFrom(p, start) }
}

function parseEvaluateOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams([])
  const t = p.peek()
  if (t.kind !== 'ident' || !p.isPunct('(', 1)) throw p.expected('a plugin call after evaluate')
  p.advance()
  const call = p.parseCallArgs(t.text, t.start, t.end)
  let schema: A.ColumnDecl[] | undefined
  let schemaStar = false
  if (p.acceptPunct(':')) {
    p.expectPunct('(')
    schema = []
    for (;;) {
      if (p.acceptPunct('*')) {
        schemaStar = true
        if (!p.acceptPunct(',')) break
        continue
      }
      schema.push(p.parseColumnDecl())
      if (!p.acceptPunct(',')) break
    }
    p.expectPunct(')')
  }
  return { kind: 'Evaluate', params, call, schema, ...(schemaStar ? { schemaStar } : {}), ...spanFrom(p, start) }
}

function parseInvokeOp(p: SourceParser, _name: string, start: number): A.Operator {
  const t = p.peek()
  if (t.kind !== 'ident' || !p.isPunct('(', 1)) throw p.expected('a function call after invoke')
  p.advance()
  const call = p.parseCallArgs(t.text, t.start, t.end)
  return { kind: 'Invoke', call, ...spanFrom(p, start) }
}

function parseConsumeOp(p: SourceParser, _name: string, start: number): A.Operator {
  p.parseParams(['decodeblocks'])
  return { kind: 'Consume', ...spanFrom(p, start) }
}

function parseTopHittersOp(p: SourceParser, _name: string, start: number): A.Operator {
  const count = p.parseExpr()
  p.expectKeyword('of', 'in top-hitters (top-hitters N of Column)')
  const of = p.parseExpr()
  let by: A.Expr | undefined
  if (p.acceptIdent('by')) by = p.parseExpr()
  return { kind: 'TopHitters', count, of, by, ...spanFrom(p, start) }
}

function parseUnionOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams(['kind', 'withsource', 'isfuzzy'])
  const tables = p.parseUnionTables()
  return { kind: 'UnionOp', params, tables, ...spanFrom(p, start) }
}

function parsePartitionOp(p: SourceParser, _name: string, start: number): A.Operator {
  const params = p.parseParams([])
  p.expectKeyword('by', "after 'partition'")
  // the key is a column name: `by Col (` must not read as a call of Col
  const keyName = p.expectName('the partition column')
  const by: A.Expr = { kind: 'Name', start: keyName.start, end: keyName.end, name: keyName.name, quoted: false }
  if (p.isPunct('{'))
    throw p.error(
      p.peek().start,
      'partition with a { subquery with source } is not supported; use partition by Column ( operators )',
      'unsupported',
    )
  p.expectPunct('(', 'to start the partition subquery')
  const subquery = p.list(() => p.parseOperator(), { separator: '|' })
  p.expectPunct(')', 'to close the partition subquery')
  return { kind: 'Partition', params, by, subquery, ...spanFrom(p, start) }
}

/** The operator table: keyword (after `|`) → parse function. Aliases share one function. */
export const OPERATOR_PARSERS: ReadonlyMap<string, OperatorParser> = new Map(
  Object.entries({
    where: parseWhereOp,
    filter: parseWhereOp,
    search: parseSearchOp,
    project: parseProjectOp,
    'project-away': parseProjectAwayOp,
    'project-keep': parseProjectKeepOp,
    'project-reorder': parseProjectReorderOp,
    'project-rename': parseProjectRenameOp,
    'project-by-names': parseProjectByNamesOp,
    extend: parseExtendOp,
    summarize: parseSummarizeOp,
    count: parseCountOp,
    distinct: parseDistinctOp,
    top: parseTopOp,
    take: parseTakeOp,
    limit: parseTakeOp,
    sort: parseSortOp,
    order: parseSortOp,
    join: parseJoinOp,
    lookup: parseJoinOp,
    'mv-expand': parseMvExpandOp,
    mvexpand: parseMvExpandOp,
    'mv-apply': parseMvApplyOp,
    mvapply: parseMvApplyOp,
    parse: parseParseOp,
    'parse-where': parseParseOp,
    'parse-kv': parseParseKvOp,
    'make-series': (p, _name, start) => parseMakeSeries(p, start),
    serialize: parseSerializeOp,
    sample: parseSampleOp,
    'sample-distinct': parseSampleDistinctOp,
    as: parseAsOp,
    getschema: parseGetschemaOp,
    render: parseRenderOp,
    'top-nested': (p, _name, start) => parseTopNested(p, start),
    scan: (p, _name, start) => parseScan(p, start),
    evaluate: parseEvaluateOp,
    invoke: parseInvokeOp,
    consume: parseConsumeOp,
    'top-hitters': parseTopHittersOp,
    union: parseUnionOp,
    partition: parsePartitionOp,
  }),
)

/** Every tabular operator keyword the parser reads after `|` (aliases included), e.g. for editors' completion. */
export const TABULAR_OPERATORS: readonly string[] = [...OPERATOR_PARSERS.keys()]
