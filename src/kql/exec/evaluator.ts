/**
 * @module
 * The in-memory evaluator: runs a plan over positional rows. Table scans read through the
 * caller's SqlSource (phase one: a plain SELECT of the table's columns); everything else runs
 * here. Long loops check the abort signal and yield to the event loop, and no intermediate result
 * may exceed MAX_INTERMEDIATE_ROWS.
 */
import type { SqlSource } from '../engine-types.js'
import type { EvalContext } from '../functions/function-types.js'
import { convertValue } from '../functions/value-conversions.js'
import { KqlError, SqlRefusalError } from '../kql-error.js'
import { canonLong, type Long, longToBigInt } from '../long.js'
import type * as P from '../plan/plan.js'
import type { KqlColumn } from '../schema.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { makeSeries, topHitters, topNested } from './aggregating-operators.js'
import { compileExpr, compositeKey } from './compile-expr.js'
import { join, union } from './join-operators.js'
import { CHECK_EVERY, MAX_INTERMEDIATE_ROWS, nullOf, type OperatorContext } from './operator-context.js'
import { parse, parseKv } from './parse-operators.js'
import type { CompiledExpr, ExprRuntime, Row, SubqueryValue } from './rows.js'
import { runScan } from './scan.js'
import { scanSql } from './scan-sql.js'
import { compareNonNull, keyOf } from './value-ops.js'

export interface RunOptions {
  readonly source?: SqlSource
  readonly ctx: EvalContext
  readonly signal?: AbortSignal
}

const SOURCE_FAILURES = new WeakSet<object>()

/**
 * Whether an error came from the SqlSource (the database), not from the query: the caller maps
 * those as infrastructure failures, so they are passed through unchanged.
 */
export function isSourceFailure(error: unknown): boolean {
  return error !== null && typeof error === 'object' && SOURCE_FAILURES.has(error)
}

/** 2 for null, 1 for NaN, 0 for any other value (their place in a sort). */
function nullRank(v: KqlValue): number {
  if (v === null || v === undefined) return 2
  return typeof v === 'number' && Number.isNaN(v) ? 1 : 0
}

/** Runs a plan and returns its rows. Rejects with KqlError (or the abort signal's reason). */
export async function runPlan(plan: P.PlanNode, options: RunOptions): Promise<Row[]> {
  return new Executor(options).run(plan)
}

/**
 * A runner for several plans of one query run: they share the run's table fetches and
 * materialized results (schema discovery runs part of the query before the whole).
 */
export function createRunner(options: RunOptions): { run(plan: P.PlanNode): Promise<Row[]> } {
  return new Executor(options)
}

class Executor implements OperatorContext {
  private readonly subqueries = new Map<P.Expr, SubqueryValue>()
  private readonly rt: ExprRuntime
  private readonly materialized = new Map<number, Promise<Row[]>>()
  private readonly applyStack: Row[][] = []
  private readonly scans = new Map<string, Promise<Row[]>>()
  private counter = 0

  constructor(private readonly options: RunOptions) {
    this.rt = { ctx: options.ctx, subqueries: this.subqueries }
  }

  /** Called every CHECK_EVERY rows: honours the abort signal and lets timers fire. */
  async pulse(): Promise<void> {
    const signal = this.options.signal
    if (signal?.aborted) throw signal.reason ?? new KqlError('runtime', 'the query was cancelled')
    if ((++this.counter & 15) === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (signal?.aborted) throw signal.reason ?? new KqlError('runtime', 'the query was cancelled')
    }
  }

  cap(count: number): void {
    if (count > MAX_INTERMEDIATE_ROWS) {
      throw new KqlError(
        'runtime',
        `an intermediate result has more than ${MAX_INTERMEDIATE_ROWS.toLocaleString('en-US')} rows; narrow the query (filter or summarize earlier)`,
      )
    }
  }

  async run(node: P.PlanNode): Promise<Row[]> {
    const signal = this.options.signal
    if (signal?.aborted) throw signal.reason ?? new KqlError('runtime', 'the query was cancelled')
    const rows = await this.dispatch(node)
    this.cap(rows.length)
    return rows
  }

  compile(e: P.Expr): CompiledExpr {
    return compileExpr(e, this.rt)
  }

  /** Evaluates the subqueries (toscalar, in (T)) an expression needs, once per run. */
  async prepare(exprs: readonly P.Expr[]): Promise<void> {
    for (const e of exprs) await this.prepareOne(e)
  }

  async prepareOne(e: P.Expr): Promise<void> {
    switch (e.kind) {
      case 'Literal':
      case 'ColumnRef':
        return
      case 'ScalarSubquery': {
        if (this.subqueries.has(e)) return
        const rows = await this.run(e.plan)
        const col = e.plan.columns.findIndex((c) => !c.hidden)
        const value = rows.length > 0 ? (rows[0]![col] ?? null) : nullOf(e.type)
        this.subqueries.set(e, { kind: 'scalar', value })
        return
      }
      case 'InSubquery': {
        await this.prepareOne(e.operand)
        if (this.subqueries.has(e)) return
        const rows = await this.run(e.subquery)
        const col = e.subquery.columns.findIndex((c) => !c.hidden)
        this.subqueries.set(e, { kind: 'rows', values: rows.map((r) => r[col] ?? null) })
        return
      }
      case 'Call':
      case 'Window':
        return this.prepare(e.args)
      case 'Binary':
        await this.prepareOne(e.left)
        return this.prepareOne(e.right)
      case 'Unary':
      case 'Convert':
        return this.prepareOne(e.operand)
      case 'InList':
        await this.prepareOne(e.operand)
        return this.prepare(e.items)
      case 'Between':
        await this.prepareOne(e.operand)
        await this.prepareOne(e.low)
        return this.prepareOne(e.high)
      case 'Member':
        await this.prepareOne(e.target)
        return this.prepareOne(e.key)
      case 'Pack':
        return this.prepare(e.entries.map((x) => x.value))
    }
  }

  async constant(e: P.Expr): Promise<KqlValue> {
    await this.prepareOne(e)
    return this.compile(e)([], 0, [])
  }

  private dispatch(node: P.PlanNode): Promise<Row[]> {
    switch (node.kind) {
      case 'TableScan':
        return this.tableScan(node)
      case 'Values':
        return Promise.resolve(node.rows as Row[])
      case 'Range':
        return this.range(node)
      case 'Filter':
        return this.filter(node)
      case 'Project':
        return this.project(node)
      case 'Summarize':
        return this.summarize(node)
      case 'Sort':
        return this.sort(node)
      case 'Take':
        return this.run(node.input).then((rows) => rows.slice(0, node.count))
      case 'Top':
        return this.top(node)
      case 'Distinct':
        return this.distinct(node)
      case 'Count':
        return this.run(node.input).then((rows) => [[rows.length]])
      case 'Join':
        return join(this, node)
      case 'Union':
        return union(this, node)
      case 'MvExpand':
        return this.mvExpand(node)
      case 'MvApply':
        return this.mvApply(node)
      case 'ApplyInput': {
        const rows = this.applyStack[this.applyStack.length - 1]
        if (!rows) throw new KqlError('runtime', 'internal error: mv-apply input is missing')
        return Promise.resolve(rows)
      }
      case 'Parse':
        return parse(this, node)
      case 'ParseKv':
        return parseKv(this, node)
      case 'MakeSeries':
        return makeSeries(this, node)
      case 'Serialize':
        return this.run(node.input)
      case 'Sample':
        return this.sample(node)
      case 'SampleDistinct':
        return this.sampleDistinct(node)
      case 'TopNested':
        return topNested(this, node)
      case 'ScanPattern':
        return this.scanPattern(node)
      case 'TopHitters':
        return topHitters(this, node)
      case 'BagUnpack':
        return this.bagUnpack(node)
      case 'Pivot':
        return this.pivot(node)
      case 'Partition':
        return this.partition(node)
      case 'SqlQuery':
        return this.sqlQuery(node)
      case 'Materialize': {
        let p = this.materialized.get(node.id)
        if (!p) {
          p = this.run(node.input)
          this.materialized.set(node.id, p)
        }
        return p
      }
    }
  }

  // -------------------------------------------------------------------------------------------
  // Sources
  // -------------------------------------------------------------------------------------------

  /** A table read twice in one query (self-join, union) is fetched once: same SQL, same rows. */
  private tableScan(node: P.TableScan): Promise<Row[]> {
    const source = this.options.source
    if (!source) return Promise.reject(new KqlError('runtime', `the query reads table '${node.table}', but no data source was given`))
    const sql = scanSql(node)
    let rows = this.scans.get(sql)
    if (!rows) {
      const columns: KqlColumn[] = node.columns.map((c) => ({ name: c.name, type: c.type }))
      rows = (async () => {
        try {
          return await source.query(sql, [], columns)
        } catch (error) {
          if (error !== null && typeof error === 'object') SOURCE_FAILURES.add(error)
          throw error
        }
      })()
      this.scans.set(sql, rows)
    }
    return rows
  }

  /**
   * A pushed-down statement. The same statement with the same parameters in one run is sent once.
   * When the database refuses the data (SqlRefusalError: a NaN SQLite cannot hold, an overflow),
   * the subtree it replaces runs in memory instead, so the answer never depends on the pushdown.
   */
  private sqlQuery(node: P.SqlQuery): Promise<Row[]> {
    const source = this.options.source
    if (!source) return Promise.reject(new KqlError('runtime', 'the query reads a workspace table, but no data source was given'))
    const now = this.options.ctx.now
    const params = node.params.map((p) => ('now' in p ? now : p.value))
    const key = `${node.sql}\u0000${params.map((p) => `${typeof p}:${String(p)}`).join('\u0000')}`
    let rows = this.scans.get(key)
    if (!rows) {
      const columns: KqlColumn[] = node.columns.map((c) => ({ name: c.name, type: c.type }))
      rows = (async () => {
        let out: Row[]
        try {
          out = await source.query(node.sql, params, columns)
        } catch (error) {
          if (error instanceof SqlRefusalError) return this.run(node.fallback)
          if (error !== null && typeof error === 'object') SOURCE_FAILURES.add(error)
          throw error
        }
        if (node.nullIsNaN.length > 0) {
          for (const r of out as KqlValue[][]) for (const c of node.nullIsNaN) if (r[c] === null) r[c] = NaN
        }
        return out
      })()
      this.scans.set(key, rows)
    }
    return rows
  }

  private async range(node: P.Range): Promise<Row[]> {
    const from = await this.constant(node.from)
    const to = await this.constant(node.to)
    const step = await this.constant(node.step)
    if (from === null || to === null || step === null) return []
    const rows: Row[] = []
    if (node.columns[0]?.type === 'long' && (typeof from === 'bigint' || typeof to === 'bigint' || typeof step === 'bigint')) {
      // a long range beyond 2^53: exact bigint steps, each value in canonical form
      const f = longToBigInt(from as Long)
      const t = longToBigInt(to as Long)
      const s = longToBigInt(step as Long)
      if (s === 0n) throw new KqlError('runtime', 'range: the step must not be zero')
      if ((s > 0n && f > t) || (s < 0n && f < t)) return []
      this.cap(Number((t - f) / s + 1n))
      for (let v = f; s > 0n ? v <= t : v >= t; v += s) {
        rows.push([canonLong(v)])
        if ((rows.length & (CHECK_EVERY - 1)) === 0) await this.pulse()
      }
      return rows
    }
    if (typeof from === 'bigint') {
      const s = step as bigint
      const t = to as bigint
      if (s === 0n) throw new KqlError('runtime', 'range: the step must not be zero')
      if ((s > 0n && from > t) || (s < 0n && from < t)) return []
      const count = (t - from) / s + 1n
      this.cap(Number(count))
      for (let v = from; s > 0n ? v <= t : v >= t; v += s) {
        rows.push([v])
        if ((rows.length & (CHECK_EVERY - 1)) === 0) await this.pulse()
      }
      return rows
    }
    const f = from as number
    const t = to as number
    const s = step as number
    if (s === 0 || !Number.isFinite(s)) throw new KqlError('runtime', 'range: the step must be a non-zero number')
    if ((s > 0 && f > t) || (s < 0 && f < t)) return []
    const count = Math.floor((t - f) / s + 1e-9) + 1
    this.cap(count)
    for (let k = 0; k < count; k++) {
      rows.push([f + k * s])
      if ((k & (CHECK_EVERY - 1)) === 0) await this.pulse()
    }
    return rows
  }

  // -------------------------------------------------------------------------------------------
  // Row-wise operators
  // -------------------------------------------------------------------------------------------

  private async filter(node: P.Filter): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepareOne(node.predicate)
    const pred = this.compile(node.predicate)
    const out: Row[] = []
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      if (pred(r, i, rows) === true) out.push(r)
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    return out
  }

  private async project(node: P.Project): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepare(node.exprs)
    const fns = node.exprs.map((e) => this.compile(e))
    const width = fns.length
    const out = new Array<Row>(rows.length)
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const o = new Array<KqlValue>(width)
      for (let c = 0; c < width; c++) o[c] = fns[c]!(r, i, rows)
      out[i] = o
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    return out
  }

  // -------------------------------------------------------------------------------------------
  // Grouping
  // -------------------------------------------------------------------------------------------

  private async summarize(node: P.Summarize): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepare(node.keys)
    for (const a of node.aggregates) await this.prepare(a.args)
    const keyFns = node.keys.map((k) => this.compile(k))
    const aggArgs = node.aggregates.map((a) => a.args.map((x) => this.compile(x)))
    interface Group {
      readonly keys: KqlValue[]
      readonly accs: ReturnType<P.AggregateCall['impl']['create']>[]
    }
    const groups: Group[] = []
    const newGroup = (keys: KqlValue[]): Group => {
      const g = { keys, accs: node.aggregates.map((a) => a.impl.create()) }
      groups.push(g)
      return g
    }
    // one Map level per key (no composite key strings): Map<k0, Map<k1, ... Group>>
    const root = new Map<unknown, unknown>()
    const depth = keyFns.length
    let noKeyGroup: Group | undefined
    const keys = new Array<KqlValue>(depth)
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      for (let k = 0; k < depth; k++) keys[k] = keyFns[k]!(r, i, rows)
      let g: Group | undefined
      if (depth === 0) {
        g = noKeyGroup ??= newGroup([])
      } else {
        let level = root
        for (let k = 0; k < depth - 1; k++) {
          const key = keyOf(keys[k]!)
          let next = level.get(key) as Map<unknown, unknown> | undefined
          if (!next) {
            next = new Map()
            level.set(key, next)
          }
          level = next
        }
        const last = keyOf(keys[depth - 1]!)
        g = level.get(last) as Group | undefined
        if (!g) {
          g = newGroup([...keys])
          level.set(last, g)
        }
      }
      for (let a = 0; a < aggArgs.length; a++) {
        const fns = aggArgs[a]!
        const values = new Array<KqlValue>(fns.length)
        for (let x = 0; x < fns.length; x++) values[x] = fns[x]!(r, i, rows)
        g.accs[a]!.add(values)
      }
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    if (depth === 0 && groups.length === 0) newGroup([])
    const out: Row[] = []
    for (const g of groups) {
      const row: KqlValue[] = [...g.keys]
      for (const acc of g.accs) row.push(...acc.result())
      out.push(row)
    }
    return out
  }

  private async distinct(node: P.Distinct): Promise<Row[]> {
    const rows = await this.run(node.input)
    const seen = new Set<unknown>()
    const out: Row[] = []
    const single = node.columns.length === 1
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const k = single ? keyOf(r[0] ?? null) : compositeKey(r)
      if (!seen.has(k)) {
        seen.add(k)
        out.push(r)
      }
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    return out
  }

  // -------------------------------------------------------------------------------------------
  // Ordering
  // -------------------------------------------------------------------------------------------

  /**
   * Sorts (stably) by the keys; with `limit`, keeps only the first `limit` rows, selecting them
   * in one pass (top N of millions of rows without sorting them all).
   */
  private async sortRows(rows: Row[], keys: readonly P.SortKey[], limit?: number): Promise<Row[]> {
    await this.prepare(keys.map((k) => k.expr))
    const fns = keys.map((k) => this.compile(k.expr))
    const types = keys.map((k) => k.expr.type)
    interface Decorated {
      readonly r: Row
      readonly i: number
      readonly k: KqlValue[]
    }
    const compare = (a: Decorated, b: Decorated): number => {
      for (let c = 0; c < keys.length; c++) {
        const key = keys[c]!
        const x = a.k[c] ?? null
        const y = b.k[c] ?? null
        // nulls and NaNs travel as a group (sort documentation): nulls first = null, NaN, values;
        // nulls last = values, NaN, null — whatever the direction
        const rx = nullRank(x)
        const ry = nullRank(y)
        if (rx !== 0 || ry !== 0) {
          if (rx === ry) continue
          return key.nullsFirst ? ry - rx : rx - ry
        }
        const cmp = compareNonNull(types[c]!, x, y)
        if (cmp !== 0) return key.descending ? -cmp : cmp
      }
      return a.i - b.i
    }
    const decorate = (r: Row, i: number): Decorated => ({ r, i, k: fns.map((f) => f(r, i, rows)) })
    if (limit !== undefined && limit < rows.length / 8) {
      if (limit === 0) return []
      // a sorted buffer of the best `limit` rows; a row enters only if it beats the worst kept
      const best: Decorated[] = []
      for (let i = 0; i < rows.length; i++) {
        const d = decorate(rows[i]!, i)
        if (best.length === limit && compare(d, best[limit - 1]!) >= 0) continue
        let lo = 0
        let hi = best.length
        while (lo < hi) {
          const mid = (lo + hi) >>> 1
          if (compare(best[mid]!, d) <= 0) lo = mid + 1
          else hi = mid
        }
        best.splice(lo, 0, d)
        if (best.length > limit) best.pop()
        if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
      }
      return best.map((d) => d.r)
    }
    const decorated = rows.map(decorate)
    decorated.sort(compare)
    const sorted = decorated.map((d) => d.r)
    return limit === undefined ? sorted : sorted.slice(0, limit)
  }

  private async sort(node: P.Sort): Promise<Row[]> {
    return this.sortRows(await this.run(node.input), node.keys)
  }

  private async top(node: P.Top): Promise<Row[]> {
    return this.sortRows(await this.run(node.input), node.keys, node.count)
  }

  // -------------------------------------------------------------------------------------------
  // mv-expand / mv-apply
  // -------------------------------------------------------------------------------------------

  /** The elements one dynamic value expands into (null → one null; empty → none). */
  private elementsOf(v: KqlValue, mode: 'bag' | 'array'): DynamicValue[] {
    if (v === null || v === undefined) return [null]
    if (Array.isArray(v)) return v as DynamicValue[]
    if (typeof v === 'object') {
      const bag = v as Record<string, DynamicValue>
      return Object.keys(bag).map((k) => (mode === 'bag' ? { [k]: bag[k]! } : [k, bag[k]!]))
    }
    return [v as DynamicValue]
  }

  /**
   * `to typeof(t)`: a cast, not a conversion — elements that do not conform to the type become
   * null (mv-expand documentation). Datetimes, timespans and guids live in dynamic values as text.
   */
  private castElement(type: KqlType, el: DynamicValue): KqlValue {
    if (type === 'dynamic') return el
    if (el === null) return nullOf(type)
    switch (type) {
      case 'string':
        return typeof el === 'string' ? el : ''
      case 'bool':
        return typeof el === 'boolean' ? el : null
      case 'int':
        return typeof el === 'number' && Number.isInteger(el) && el >= -2147483648 && el <= 2147483647 ? el : null
      case 'long':
        return (typeof el === 'number' && Number.isInteger(el)) || typeof el === 'bigint' ? el : null
      case 'real':
      case 'decimal':
        return typeof el === 'number' ? el : typeof el === 'bigint' ? Number(el) : null
      default:
        return typeof el === 'string' ? convertValue(type, 'string', el) : null
    }
  }

  /**
   * Each row's element lists, computed before any output row is built so that a blow-up is
   * refused at once (issue 15): the output size is known from the lists' lengths.
   */
  /** The element lists each row expands into (one list per expression), refused above MAX_INTERMEDIATE_ROWS. */
  private async expansions(
    rows: readonly Row[],
    exprs: readonly P.Expr[],
    mode: 'bag' | 'array',
    limit: number,
    operator: string,
  ): Promise<DynamicValue[][][]> {
    await this.prepare(exprs)
    const fns = exprs.map((e) => this.compile(e))
    const out = new Array<DynamicValue[][]>(rows.length)
    let expected = 0
    for (let i = 0; i < rows.length; i++) {
      const lists = fns.map((f) => this.elementsOf(f(rows[i]!, i, rows), mode))
      out[i] = lists
      expected += expansionCount(lists, limit)
      if (expected > MAX_INTERMEDIATE_ROWS)
        throw new KqlError(
          'runtime',
          `${operator} would produce more than ${MAX_INTERMEDIATE_ROWS.toLocaleString('en-US')} rows (the intermediate-result limit); expand fewer rows or use 'limit'`,
        )
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    return out
  }

  private async mvExpand(node: P.MvExpand): Promise<Row[]> {
    const rows = await this.run(node.input)
    const width = node.columns.length
    const limit = node.limit ?? Infinity
    const expansions = await this.expansions(
      rows,
      node.items.map((it) => it.expr),
      node.bagExpansion,
      limit,
      'mv-expand',
    )
    const out: Row[] = []
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const lists = expansions[i]!
      const n = expansionCount(lists, limit)
      for (let k = 0; k < n; k++) {
        const o = new Array<KqlValue>(width)
        for (let c = 0; c < r.length; c++) o[c] = r[c] ?? null
        node.items.forEach((it, j) => {
          const el = lists[j]![k]
          o[it.output] = el === undefined ? nullOf(it.type) : this.castElement(it.type, el)
        })
        if (node.itemIndex !== undefined) o[node.itemIndex] = k
        for (let c = 0; c < width; c++) if (o[c] === undefined) o[c] = null
        out.push(o)
      }
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1 || out.length > MAX_INTERMEDIATE_ROWS) {
        this.cap(out.length)
        await this.pulse()
      }
    }
    return out
  }

  private async mvApply(node: P.MvApply): Promise<Row[]> {
    const rows = await this.run(node.input)
    const limit = node.limit ?? Infinity
    const expansions = await this.expansions(rows, node.items, node.bagExpansion, limit, 'mv-apply')
    const out: Row[] = []
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const lists = expansions[i]!
      const n = expansionCount(lists, limit)
      const sub: Row[] = []
      const width = node.subquery.kind === 'ApplyInput' ? node.subquery.columns.length : 0
      for (let k = 0; k < n; k++) {
        const s: KqlValue[] = node.subtableColumns.map((c) => r[c] ?? null)
        lists.forEach((l, j) => {
          const el = l[k]
          s[node.itemOutputs[j]!] = el === undefined ? nullOf(node.itemTypes[j]!) : this.castElement(node.itemTypes[j]!, el)
        })
        if (node.withItemIndex) s.push(k)
        for (let c = 0; c < Math.max(width, s.length); c++) if (s[c] === undefined) s[c] = null
        sub.push(s)
      }
      this.applyStack.push(sub)
      let result: Row[]
      try {
        result = await this.run(node.subquery)
      } finally {
        this.applyStack.pop()
      }
      const kept = node.keptColumns.map((c) => r[c] ?? null)
      for (const s of result) out.push([...kept, ...s])
      this.cap(out.length)
      if ((i & 255) === 255) await this.pulse()
    }
    return out
  }

  // -------------------------------------------------------------------------------------------
  // sampling, scan, bag_unpack
  // -------------------------------------------------------------------------------------------

  private async sample(node: P.Sample): Promise<Row[]> {
    const rows = await this.run(node.input)
    if (node.count >= rows.length) return rows
    const random = this.options.ctx.random
    const idx = rows.map((_, i) => i)
    for (let i = 0; i < node.count; i++) {
      const j = i + Math.floor(random() * (idx.length - i))
      ;[idx[i], idx[j]] = [idx[j]!, idx[i]!]
    }
    return idx
      .slice(0, node.count)
      .sort((a, b) => a - b)
      .map((i) => rows[i]!)
  }

  private async sampleDistinct(node: P.SampleDistinct): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepareOne(node.expr)
    const f = this.compile(node.expr)
    const seen = new Map<unknown, KqlValue>()
    rows.forEach((r, i) => {
      const v = f(r, i, rows)
      const k = keyOf(v)
      if (!seen.has(k)) seen.set(k, v)
    })
    const values = [...seen.values()]
    const random = this.options.ctx.random
    for (let i = 0; i < Math.min(node.count, values.length); i++) {
      const j = i + Math.floor(random() * (values.length - i))
      ;[values[i], values[j]] = [values[j]!, values[i]!]
    }
    return values.slice(0, node.count).map((v) => [v])
  }

  private async scanPattern(node: P.ScanPattern): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepare(node.steps.flatMap((s) => [s.predicate, ...s.assignments.map((a) => a.expr)]))
    const steps = node.steps.map((s) => ({
      spec: s,
      predicate: this.compile(s.predicate),
      assignments: s.assignments.map((a) => ({ index: a.index, f: this.compile(a.expr) })),
    }))
    return runScan(node, rows, steps)
  }

  private async bagUnpack(node: P.BagUnpack): Promise<Row[]> {
    const rows = await this.run(node.input)
    return rows.map((r) => {
      const bag = r[node.bagColumn]
      const props = bag !== null && typeof bag === 'object' && !Array.isArray(bag) ? (bag as Record<string, DynamicValue>) : undefined
      return node.sources.map((src, k) => {
        if ('column' in src) return r[src.column] ?? null
        const t = node.columns[k]!.type
        const v = props && Object.hasOwn(props, src.property) ? props[src.property]! : undefined
        return v === undefined || v === null ? nullOf(t) : t === 'dynamic' ? v : convertValue(t, 'dynamic', v)
      })
    })
  }

  private async partition(node: P.Partition): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepareOne(node.key)
    const key = this.compile(node.key)
    const groups = new Map<unknown, Row[]>()
    rows.forEach((r, i) => {
      const k = keyOf(key(r, i, rows))
      const g = groups.get(k)
      if (g) g.push(r)
      else groups.set(k, [r])
    })
    const out: Row[] = []
    for (const group of groups.values()) {
      this.applyStack.push(group)
      try {
        for (const r of await this.run(node.subquery)) out.push(r)
      } finally {
        this.applyStack.pop()
      }
      this.cap(out.length)
      await this.pulse()
    }
    return out
  }

  private async pivot(node: P.Pivot): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepare([...node.keys, node.pivot, ...node.aggregate.args])
    const keyFns = node.keys.map((k) => this.compile(k))
    const pivotFn = this.compile(node.pivot)
    const argFns = node.aggregate.args.map((a) => this.compile(a))
    const slot = new Map<unknown, number>()
    node.values.forEach((v, i) => {
      slot.set(keyOf(v), i)
    })
    const groups = new Map<string, { keys: KqlValue[]; accs: (ReturnType<P.AggregateCall['impl']['create']> | undefined)[] }>()
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const keys = keyFns.map((f) => f(r, i, rows))
      const k = compositeKey(keys)
      let g = groups.get(k)
      if (!g) {
        g = { keys, accs: new Array(node.values.length).fill(undefined) }
        groups.set(k, g)
      }
      const s = slot.get(keyOf(pivotFn(r, i, rows)))
      if (s === undefined) continue
      let acc = g.accs[s]
      if (!acc) {
        acc = node.aggregate.impl.create()
        g.accs[s] = acc
      }
      acc.add(argFns.map((f) => f(r, i, rows)))
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    const empty = (): KqlValue => node.aggregate.impl.create().result()[0] ?? null
    return [...groups.values()].map((g) => [...g.keys, ...g.accs.map((a) => (a ? (a.result()[0] ?? null) : empty()))])
  }
}

/** How many rows one input row expands into: its longest element list, at most `limit`. */
function expansionCount(lists: readonly (readonly DynamicValue[])[], limit: number): number {
  let n = 0
  for (const l of lists) n = Math.max(n, l.length)
  return Math.min(n, limit)
}
