/**
 * @module
 * The in-memory evaluator: runs a plan over positional rows. Table scans read through the
 * caller's SqlSource (phase one: a plain SELECT of the table's columns); everything else runs
 * here. Long loops check the abort signal and yield to the event loop, and no intermediate result
 * may exceed MAX_INTERMEDIATE_ROWS.
 */
import type { SqlSource } from '../engine-types.js'
import type { EvalContext } from '../functions/function-types.js'
import { compileRegex } from '../functions/regex.js'
import { convertValue, toDynamic } from '../functions/value-conversions.js'
import { KqlError, SqlRefusalError } from '../kql-error.js'
import { canonLong, type Long, longToBigInt } from '../long.js'
import type * as P from '../plan/plan.js'
import { scaledColumn } from '../plan/scan-scale.js'
import type { KqlColumn } from '../schema.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { floorDiv } from '../values.js'
import { type CompiledExpr, compileExpr, compositeKey, type ExprRuntime, type Row, type SubqueryValue } from './compile-expr.js'
import { extractKeyValues } from './parse-kv.js'
import { runScan } from './scan.js'
import { compareNonNull, keyOf } from './value-ops.js'

/** The engine refuses intermediate results above this many rows (brief: memory safety). */
export const MAX_INTERMEDIATE_ROWS = 5_000_000

const CHECK_EVERY = 4096

export interface RunOptions {
  readonly source?: SqlSource
  readonly ctx: EvalContext
  readonly signal?: AbortSignal
}

/** Quotes an identifier for SQLite and PostgreSQL alike: double quotes, embedded quotes doubled. */
export function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`
}

/** The first-phase SQL of a table scan. */
export function scanSql(node: P.TableScan): string {
  return `SELECT ${node.sqlColumns.map((c, i) => scaledColumn(quoteIdentifier(c), node.sqlScale?.[i])).join(', ')} FROM ${quoteIdentifier(node.sqlName)}`
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

function nullOf(type: KqlType): KqlValue {
  return type === 'string' ? '' : null
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

class Executor {
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
  private async pulse(): Promise<void> {
    const signal = this.options.signal
    if (signal?.aborted) throw signal.reason ?? new KqlError('runtime', 'the query was cancelled')
    if ((++this.counter & 15) === 0) {
      await new Promise<void>((resolve) => setImmediate(resolve))
      if (signal?.aborted) throw signal.reason ?? new KqlError('runtime', 'the query was cancelled')
    }
  }

  private cap(count: number): void {
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

  private compile(e: P.Expr): CompiledExpr {
    return compileExpr(e, this.rt)
  }

  /** Evaluates the subqueries (toscalar, in (T)) an expression needs, once per run. */
  private async prepare(exprs: readonly P.Expr[]): Promise<void> {
    for (const e of exprs) await this.prepareOne(e)
  }

  private async prepareOne(e: P.Expr): Promise<void> {
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

  private async constant(e: P.Expr): Promise<KqlValue> {
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
        return this.join(node)
      case 'Union':
        return this.union(node)
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
        return this.parse(node)
      case 'ParseKv':
        return this.parseKv(node)
      case 'MakeSeries':
        return this.makeSeries(node)
      case 'Serialize':
        return this.run(node.input)
      case 'Sample':
        return this.sample(node)
      case 'SampleDistinct':
        return this.sampleDistinct(node)
      case 'TopNested':
        return this.topNested(node)
      case 'ScanPattern':
        return this.scanPattern(node)
      case 'TopHitters':
        return this.topHitters(node)
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
  // join / union
  // -------------------------------------------------------------------------------------------

  private async join(node: P.Join): Promise<Row[]> {
    const left = await this.run(node.left)
    const right = await this.run(node.right)
    const keyOfRow = (r: Row, idx: readonly number[]): unknown =>
      idx.length === 1 ? keyOf(r[idx[0]!] ?? null) : compositeKey(idx.map((i) => r[i] ?? null))
    const kind = node.joinKind
    const leftNulls = node.left.columns.map((c) => nullOf(c.type))
    const rightOut = node.rightOutput
    const rightNulls = rightOut.map((i) => nullOf(node.right.columns[i]!.type))
    const leftWidth = node.left.columns.length
    const width = leftWidth + rightOut.length
    const combine = (l: Row, r: Row | undefined): Row => {
      const o = new Array<KqlValue>(width)
      for (let c = 0; c < leftWidth; c++) o[c] = l[c] ?? null
      for (let c = 0; c < rightOut.length; c++) o[leftWidth + c] = r ? (r[rightOut[c]!] ?? null) : rightNulls[c]!
      return o
    }
    const out: Row[] = []
    /** true every CHECK_EVERY rows: the caller then checks the cap and yields */
    const push = (row: Row): boolean => out.push(row) % CHECK_EVERY === 0
    // index the right side
    const index = new Map<unknown, number[]>()
    right.forEach((r, i) => {
      const k = keyOfRow(r, node.rightKeys)
      const list = index.get(k)
      if (list) list.push(i)
      else index.set(k, [i])
    })
    if (kind === 'rightsemi' || kind === 'rightanti') {
      const leftKeys = new Set(left.map((l) => keyOfRow(l, node.leftKeys)))
      const want = kind === 'rightsemi'
      return right.filter((r) => leftKeys.has(keyOfRow(r, node.rightKeys)) === want)
    }
    if (kind === 'leftsemi' || kind === 'leftanti') {
      const want = kind === 'leftsemi'
      return left.filter((l) => index.has(keyOfRow(l, node.leftKeys)) === want)
    }
    let probe = left
    if (kind === 'innerunique') {
      const seen = new Set<unknown>()
      probe = left.filter((l) => {
        const k = keyOfRow(l, node.leftKeys)
        if (seen.has(k)) return false
        seen.add(k)
        return true
      })
    }
    // the output size is known before any row is built: refuse a blow-up (a cross join) at once
    const outer = kind === 'leftouter' || kind === 'fullouter'
    let expected = kind === 'rightouter' || kind === 'fullouter' ? right.length : 0
    const probeMatches = probe.map((l) => index.get(keyOfRow(l, node.leftKeys)))
    for (const matches of probeMatches) {
      expected += matches?.length ?? (outer ? 1 : 0)
      if (expected > MAX_INTERMEDIATE_ROWS) {
        throw new KqlError(
          'runtime',
          `the join would produce more than ${MAX_INTERMEDIATE_ROWS.toLocaleString('en-US')} rows (the intermediate-result limit); join on more selective keys or filter both sides first`,
        )
      }
    }
    const matchedRight = kind === 'rightouter' || kind === 'fullouter' ? new Uint8Array(right.length) : undefined
    const checkpoint = async (): Promise<void> => {
      this.cap(out.length)
      await this.pulse()
    }
    for (let p = 0; p < probe.length; p++) {
      const l = probe[p]!
      const matches = probeMatches[p]
      if (matches) {
        for (const ri of matches) {
          if (matchedRight) matchedRight[ri] = 1
          if (push(combine(l, right[ri]))) await checkpoint()
        }
      } else if (kind === 'leftouter' || kind === 'fullouter') {
        if (push(combine(l, undefined))) await checkpoint()
      }
    }
    if (matchedRight) {
      for (let ri = 0; ri < right.length; ri++) {
        if (matchedRight[ri]) continue
        const r = right[ri]!
        const o: KqlValue[] = [...leftNulls]
        for (const i of rightOut) o.push(r[i] ?? null)
        if (push(o)) await checkpoint()
      }
    }
    return out
  }

  private async union(node: P.Union): Promise<Row[]> {
    const out: Row[] = []
    for (let k = 0; k < node.inputs.length; k++) {
      const rows = await this.run(node.inputs[k]!)
      const mapping = node.mappings[k]!
      const nulls = node.columns.map((c) => nullOf(c.type))
      const source = node.sourceNames?.[k]
      for (const r of rows) {
        const o = new Array<KqlValue>(mapping.length)
        for (let c = 0; c < mapping.length; c++) {
          const from = mapping[c]!
          o[c] = from >= 0 ? (r[from] ?? null) : nulls[c]!
        }
        if (source !== undefined) o[0] = source
        out.push(o)
      }
      this.cap(out.length)
      await this.pulse()
    }
    return out
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
  private async expansions(
    rows: readonly Row[],
    fns: readonly CompiledExpr[],
    mode: 'bag' | 'array',
    limit: number,
    operator: string,
  ): Promise<DynamicValue[][][]> {
    const out = new Array<DynamicValue[][]>(rows.length)
    let expected = 0
    for (let i = 0; i < rows.length; i++) {
      const lists = fns.map((f) => this.elementsOf(f(rows[i]!, i, rows), mode))
      out[i] = lists
      let n = 0
      for (const l of lists) n = Math.max(n, l.length)
      expected += Math.min(n, limit)
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
    await this.prepare(node.items.map((it) => it.expr))
    const fns = node.items.map((it) => this.compile(it.expr))
    const width = node.columns.length
    const limit = node.limit ?? Infinity
    const expansions = await this.expansions(rows, fns, node.bagExpansion, limit, 'mv-expand')
    const out: Row[] = []
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const lists = expansions[i]!
      let n = 0
      for (const l of lists) n = Math.max(n, l.length)
      n = Math.min(n, limit)
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
    await this.prepare(node.items)
    const fns = node.items.map((e) => this.compile(e))
    const limit = node.limit ?? Infinity
    const expansions = await this.expansions(rows, fns, node.bagExpansion, limit, 'mv-apply')
    const out: Row[] = []
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const lists = expansions[i]!
      let n = 0
      for (const l of lists) n = Math.max(n, l.length)
      n = Math.min(n, limit)
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
  // parse / parse-kv
  // -------------------------------------------------------------------------------------------

  private async parse(node: P.Parse): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepareOne(node.source)
    const src = this.compile(node.source)
    const re = compileRegex(node.regex, node.flags, 'parse')
    const width = node.columns.length
    const out: Row[] = []
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const text = (src(r, i, rows) ?? '') as string
      const o = new Array<KqlValue>(width)
      for (let c = 0; c < r.length; c++) o[c] = r[c] ?? null
      const m = re.exec(text)
      let ok = m !== null
      if (m) {
        for (const cap of node.captures) {
          const raw = m[cap.group] ?? ''
          let v: KqlValue = cap.type === 'string' ? raw : convertValue(cap.type, 'string', raw)
          if (v === null && cap.type !== 'string') {
            if (!node.relaxed) {
              ok = false
              break
            }
            v = null
          }
          o[cap.output] = v
        }
      }
      if (!ok) {
        if (node.dropUnmatched) continue
        for (const cap of node.captures) o[cap.output] = nullOf(cap.type)
      }
      for (let c = 0; c < width; c++) if (o[c] === undefined) o[c] = null
      out.push(o)
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    return out
  }

  private async parseKv(node: P.ParseKv): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepareOne(node.source)
    const src = this.compile(node.source)
    const width = node.columns.length
    return rows.map((r, i) => {
      const found = extractKeyValues((src(r, i, rows) ?? '') as string, node)
      const o = new Array<KqlValue>(width)
      for (let c = 0; c < r.length; c++) o[c] = r[c] ?? null
      for (const k of node.keys) {
        const raw = found.get(k.name)
        o[k.output] = raw === undefined ? nullOf(k.type) : k.type === 'string' ? raw : convertValue(k.type, 'string', raw)
      }
      for (let c = 0; c < width; c++) if (o[c] === undefined) o[c] = null
      return o
    })
  }

  // -------------------------------------------------------------------------------------------
  // make-series, top-nested, top-hitters
  // -------------------------------------------------------------------------------------------

  private async makeSeries(node: P.MakeSeries): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepare([...node.keys, node.axis, ...node.aggregates.flatMap((a) => a.args)])
    const keyFns = node.keys.map((k) => this.compile(k))
    const axisFn = this.compile(node.axis)
    const aggArgs = node.aggregates.map((a) => a.args.map((x) => this.compile(x)))
    const step = await this.constant(node.step)
    const ticks = node.axis.type === 'datetime' || node.axis.type === 'timespan'
    if (step === null || (ticks ? (step as bigint) <= 0n : (step as number) <= 0))
      throw new KqlError('runtime', 'make-series: the step must be positive')
    const axisValues = rows.map((r, i) => axisFn(r, i, rows))
    let from = node.from ? await this.constant(node.from) : undefined
    let to = node.to ? await this.constant(node.to) : undefined
    if (node.rangeSyntax) {
      // in range(start, stop, step): bins aligned with bin(), stop inclusive
      const bin = (v: KqlValue): KqlValue =>
        v === null || v === undefined
          ? v
          : ticks
            ? floorDiv(v as bigint, step as bigint) * (step as bigint)
            : Math.floor((v as number) / (step as number)) * (step as number)
      from = bin(from ?? null)
      const last = bin(to ?? null)
      to = last === null ? null : ticks ? (last as bigint) + (step as bigint) : (last as number) + (step as number)
    }
    const present = axisValues.filter((v) => v !== null && v !== undefined) as (number | bigint)[]
    if (from === undefined || from === null) {
      if (present.length === 0) from = null
      else {
        const min = present.reduce((a, b) => (b < a ? b : a))
        from = ticks
          ? floorDiv(min as bigint, step as bigint) * (step as bigint)
          : Math.floor((min as number) / (step as number)) * (step as number)
      }
    }
    if (to === undefined || to === null) {
      if (present.length === 0 || from === null) to = null
      else {
        const max = present.reduce((a, b) => (b > a ? b : a))
        to = ticks ? (max as bigint) + 1n : (max as number) + Number.EPSILON * Math.max(1, Math.abs(max as number))
      }
    }
    let bins = 0
    if (from !== null && to !== null) {
      if (ticks) {
        const span = (to as bigint) - (from as bigint)
        bins = span <= 0n ? 0 : Number((span + (step as bigint) - 1n) / (step as bigint))
      } else {
        const span = (to as number) - (from as number)
        bins = span <= 0 ? 0 : Math.ceil(span / (step as number) - 1e-12)
      }
    }
    this.cap(bins)
    interface Group {
      keys: KqlValue[]
      cells: (ReturnType<P.AggregateCall['impl']['create']> | undefined)[][]
    }
    const groups = new Map<unknown, Group>()
    for (let i = 0; i < rows.length; i++) {
      const r = rows[i]!
      const a = axisValues[i]
      if (a === null || a === undefined || from === null) continue
      let bin: number
      if (ticks) bin = Number(floorDiv((a as bigint) - (from as bigint), step as bigint))
      else bin = Math.floor(((a as number) - (from as number)) / (step as number))
      if (bin < 0 || bin >= bins) continue
      const keys = keyFns.map((f) => f(r, i, rows))
      const k = compositeKey(keys)
      let g = groups.get(k)
      if (!g) {
        g = { keys, cells: node.aggregates.map(() => []) }
        groups.set(k, g)
      }
      node.aggregates.forEach((agg, j) => {
        const cells = g!.cells[j]!
        if (node.preAggregated) {
          const value = aggArgs[j]![0]!(r, i, rows)
          cells[bin] = { add() {}, result: () => [value] }
          return
        }
        let acc = cells[bin]
        if (!acc) {
          acc = agg.impl.create()
          cells[bin] = acc
        }
        const fns = aggArgs[j]!
        acc.add(fns.map((f) => f(r, i, rows)))
      })
      if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await this.pulse()
    }
    if (groups.size === 0 && node.keys.length === 0 && node.nonEmpty) groups.set('', { keys: [], cells: node.aggregates.map(() => []) })
    const axisType = node.axis.type
    const axis: DynamicValue[] = []
    for (let b = 0; b < bins; b++) {
      const v = ticks ? (from as bigint) + BigInt(b) * (step as bigint) : (from as number) + b * (step as number)
      axis.push(toDynamic(axisType, v))
    }
    const out: Row[] = []
    for (const g of groups.values()) {
      const row: KqlValue[] = new Array(node.columns.length).fill(null)
      g.keys.forEach((v, i) => {
        row[i] = v
      })
      node.aggregates.forEach((agg, j) => {
        const outType = agg.outputs[0]!.type
        const series: DynamicValue[] = []
        for (let b = 0; b < bins; b++) {
          const acc = g.cells[j]![b]
          series.push(acc ? toDynamic(outType, acc.result()[0] ?? null) : toDynamic(outType, node.defaults[j] ?? null))
        }
        row[node.aggregateOutputs[j]!] = series
      })
      row[node.axisOutput] = axis
      out.push(row)
    }
    return out
  }

  private async topNested(node: P.TopNested): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepare(node.levels.flatMap((l) => [l.key, ...l.aggregate.args]))
    const keyFns = node.levels.map((l) => this.compile(l.key))
    const argFns = node.levels.map((l) => l.aggregate.args.map((a) => this.compile(a)))
    const out: Row[] = []
    const recurse = (subset: number[], level: number, prefix: KqlValue[]): void => {
      if (level === node.levels.length) {
        out.push(prefix)
        return
      }
      const spec = node.levels[level]!
      const groups = new Map<unknown, { key: KqlValue; members: number[] }>()
      for (const i of subset) {
        const key = keyFns[level]!(rows[i]!, i, rows)
        const k = keyOf(key)
        let g = groups.get(k)
        if (!g) {
          g = { key, members: [] }
          groups.set(k, g)
        }
        g.members.push(i)
      }
      const aggregate = (members: number[]): KqlValue => {
        const acc = spec.aggregate.impl.create()
        for (const i of members) acc.add(argFns[level]!.map((f) => f(rows[i]!, i, rows)))
        return acc.result()[0] ?? null
      }
      const scored = [...groups.values()].map((g) => ({ ...g, value: aggregate(g.members) }))
      const aggType = spec.aggregate.outputs[0]!.type
      scored.sort((a, b) => {
        if (a.value === null || b.value === null) return a.value === null ? (b.value === null ? 0 : 1) : -1
        const c = compareNonNull(aggType, a.value, b.value)
        return spec.descending ? -c : c
      })
      const chosen = spec.count === undefined ? scored : scored.slice(0, spec.count)
      for (const g of chosen) recurse(g.members, level + 1, [...prefix, g.key, g.value])
      if (spec.others !== undefined && spec.count !== undefined && scored.length > spec.count) {
        const rest = scored.slice(spec.count).flatMap((g) => g.members)
        const tail: KqlValue[] = [...prefix, spec.others, aggregate(rest)]
        for (let l = level + 1; l < node.levels.length; l++) tail.push(nullOf(node.columns[l * 2]!.type), null)
        out.push(tail)
      }
    }
    recurse(
      rows.map((_, i) => i),
      0,
      [],
    )
    return out
  }

  private async topHitters(node: P.TopHitters): Promise<Row[]> {
    const rows = await this.run(node.input)
    await this.prepareOne(node.expr)
    if (node.weight) await this.prepareOne(node.weight)
    const f = this.compile(node.expr)
    const w = node.weight ? this.compile(node.weight) : undefined
    const counts = new Map<unknown, { value: KqlValue; n: number }>()
    rows.forEach((r, i) => {
      const v = f(r, i, rows)
      const k = keyOf(v)
      const e = counts.get(k) ?? { value: v, n: 0 }
      e.n += w ? Number(w(r, i, rows) ?? 0) : 1
      counts.set(k, e)
    })
    return [...counts.values()]
      .sort((a, b) => b.n - a.n)
      .slice(0, node.count)
      .map((e) => [e.value, e.n])
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
