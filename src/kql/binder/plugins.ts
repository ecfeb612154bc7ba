/**
 * @module
 * The `evaluate` plugins the engine implements (bag_unpack, pivot, narrow; issue 19 item 6: moved
 * out of binder.ts as they were). bag_unpack without a schema and pivot produce columns that
 * depend on the data: the first bind records a `PendingDiscovery`, and the query is bound again
 * with what the input held (src/kql/README.md "Data-dependent schemas").
 */
import { valueToString } from '../functions/value-conversions.js'
import type * as P from '../plan/plan.js'
import type * as A from '../syntax/ast.js'
import type { KqlValue } from '../types.js'
import { notSupported, pluginRefusal } from '../unsupported.js'
import { type AggCollector, type BindContext, literal, type RowCtx, ref } from './bind-context.js'
import { uniqueName } from './names.js'
import type { Scope } from './scope.js'

export function bindEvaluate(b: BindContext, plan: P.PlanNode, op: A.EvaluateOp, ctx: RowCtx): P.PlanNode {
  const call = op.call
  switch (call.name) {
    case 'bag_unpack':
      return bindBagUnpack(b, plan, op, ctx)
    case 'pivot':
      return bindPivot(b, plan, op, ctx)
    case 'narrow':
      return bindNarrow(plan)
    default:
      throw b.err(call.start, notSupported(`the evaluate plugin '${call.name}'`, pluginRefusal(call.name)), 'unsupported')
  }
}

function constantArg(b: BindContext, e: A.Expr | undefined, scope: Scope, what: string): KqlValue | undefined {
  if (!e) return undefined
  const v = b.bindScalar(e, { columns: [], scope })
  if (v.kind !== 'Literal') throw b.err(e.start, `${what} must be a constant`)
  return v.value
}

/**
 * bag_unpack(column [, prefix [, columnsConflict [, ignoredProperties]]]) [: (schema)]. Without a
 * schema the properties come from the data: the query is bound again once they are known.
 */
function bindBagUnpack(b: BindContext, plan: P.PlanNode, op: A.EvaluateOp, ctx: RowCtx): P.BagUnpack {
  // positional arguments, or named ones (columnsConflict='keep_source')
  const names = ['column', 'outputcolumnprefix', 'columnsconflict', 'ignoredproperties']
  const positional: (A.Expr | undefined)[] = []
  for (const a of op.call.args) {
    if (a.kind !== 'NamedArg') {
      positional.push(a)
      continue
    }
    const at = names.indexOf(a.name.toLowerCase())
    if (at < 0) throw b.err(a.start, `bag_unpack() has no parameter '${a.name}'`)
    positional[at] = a.value
  }
  const call = { ...op.call, args: positional as A.Expr[] }
  const arg = call.args[0]
  if (!arg) throw b.err(call.start, 'bag_unpack() expects the dynamic column to unpack')
  const bag = b.bindScalar(arg, ctx)
  if (bag.kind !== 'ColumnRef' || bag.type !== 'dynamic') throw b.err(arg.start, 'bag_unpack() expects a dynamic column')
  const prefix = constantArg(b, call.args[1], ctx.scope, 'bag_unpack(): the prefix') ?? ''
  if (typeof prefix !== 'string') throw b.err(call.args[1]!.start, 'bag_unpack(): the prefix must be a string')
  const conflict = constantArg(b, call.args[2], ctx.scope, 'bag_unpack(): columnsConflict') ?? 'error'
  if (conflict !== 'error' && conflict !== 'replace_source' && conflict !== 'keep_source') {
    throw b.err(call.args[2]!.start, "bag_unpack(): columnsConflict must be 'error', 'replace_source' or 'keep_source'")
  }
  const ignoredValue = constantArg(b, call.args[3], ctx.scope, 'bag_unpack(): ignoredProperties')
  const ignored = Array.isArray(ignoredValue) ? ignoredValue.filter((x): x is string => typeof x === 'string') : []
  const kept = plan.columns.map((c, i) => ({ c, i })).filter(({ c, i }) => !c.hidden && i !== bag.index)
  const columns: P.PlanColumn[] = []
  const sources: P.BagUnpack['sources'][number][] = []
  if (op.schema) {
    if (op.schemaStar) {
      for (const { c, i } of kept) {
        columns.push(c)
        sources.push({ column: i })
      }
    }
    for (const decl of op.schema) {
      const existing = kept.find(({ c }) => c.name === decl.name)
      if (existing && !op.schemaStar) {
        columns.push({ name: decl.name, type: existing.c.type })
        sources.push({ column: existing.i })
        continue
      }
      if (existing) continue
      columns.push({ name: decl.name, type: decl.type })
      sources.push({ property: decl.name.startsWith(prefix) ? decl.name.slice(prefix.length) : decl.name })
    }
    return { kind: 'BagUnpack', columns, input: plan, bagColumn: bag.index, sources }
  }
  const found = b.discovered.get(op.start)
  if (!found) b.pending.push({ kind: 'bag', key: op.start, input: plan, bag, ignored })
  const slots = found?.kind === 'bag' ? found.slots : []
  const keptNames = new Set(kept.map(({ c }) => c.name))
  const replaced = new Set<string>()
  const slotColumns: P.PlanColumn[] = []
  const slotSources: { property: string }[] = []
  for (const slot of slots) {
    const name = prefix + slot.name
    if (keptNames.has(name)) {
      if (conflict === 'error') {
        throw b.err(
          call.start,
          `bag_unpack(): the property '${slot.name}' would become a column '${name}', which already exists (use columnsConflict)`,
        )
      }
      if (conflict === 'keep_source') continue
      replaced.add(name)
    }
    slotColumns.push({ name, type: slot.type })
    slotSources.push({ property: slot.name })
  }
  for (const { c, i } of kept) {
    if (replaced.has(c.name)) continue
    columns.push(c)
    sources.push({ column: i })
  }
  columns.push(...slotColumns)
  sources.push(...slotSources)
  return { kind: 'BagUnpack', columns, input: plan, bagColumn: bag.index, sources }
}

/** pivot(column [, aggregation [, keys...]]): one column per distinct value of `column`. */
function bindPivot(b: BindContext, plan: P.PlanNode, op: A.EvaluateOp, ctx: RowCtx): P.Pivot {
  const call = op.call
  const [pivotArg, second, ...rest] = call.args
  if (!pivotArg) throw b.err(call.start, 'pivot() expects the column to pivot')
  const pivot = b.bindScalar(pivotArg, ctx)
  let aggAst: A.CallExpr | undefined
  let keyArgs: A.Expr[] = rest
  if (second) {
    if (second.kind === 'Call' && b.lib.lookupAggregate(second.name)) aggAst = second
    else keyArgs = [second, ...rest]
  }
  const agg: AggCollector = { input: ctx, base: 0, calls: [], width: 0 }
  b.bindScalar(aggAst ?? { kind: 'Call', name: 'count', nameEnd: call.start, args: [], start: call.start, end: call.start }, {
    ...ctx,
    agg,
  })
  const aggregate = agg.calls[0]!
  const referenced = new Set<string>()
  const collect = (e: A.Expr): void => {
    if (e.kind === 'Name') referenced.add(e.name)
    else if (e.kind === 'Call') e.args.forEach(collect)
    else if (e.kind === 'Binary') {
      collect(e.left)
      collect(e.right)
    } else if (e.kind === 'Paren') collect(e.expr)
    else if (e.kind === 'Member' || e.kind === 'Index') collect(e.target)
  }
  if (aggAst) aggAst.args.forEach(collect)
  const pivotName = pivot.kind === 'ColumnRef' ? pivot.name : undefined
  const keys: P.Expr[] = []
  const columns: P.PlanColumn[] = []
  if (keyArgs.length > 0) {
    for (const k of keyArgs) {
      const e = b.bindScalar(k, ctx)
      keys.push(e)
      columns.push({ name: b.nameOf(k, ctx) ?? `Column${columns.length + 1}`, type: e.type })
    }
  } else {
    plan.columns.forEach((c, i) => {
      if (c.hidden || c.name === pivotName || referenced.has(c.name)) return
      keys.push(ref(i, c))
      columns.push(c)
    })
  }
  const found = b.discovered.get(op.start)
  if (!found) b.pending.push({ kind: 'pivot', key: op.start, input: plan, pivot })
  const values = found?.kind === 'pivot' ? found.values : []
  const taken = new Set(columns.map((c) => c.name))
  const outType = aggregate.outputs[0]!.type
  for (const v of values) {
    const name = uniqueName(v === null || v === undefined ? '' : valueToString(pivot.type, v), taken)
    taken.add(name)
    columns.push({ name, type: outType })
  }
  return { kind: 'Pivot', columns, input: plan, keys, pivot, aggregate, values }
}

/** evaluate narrow(): one row per (row, column) with the value as text: Row, Column, Value. */
function bindNarrow(plan: P.PlanNode): P.PlanNode {
  const cols = plan.columns.map((c, i) => ({ c, i })).filter(({ c }) => !c.hidden)
  const serialized: P.Serialize = { kind: 'Serialize', columns: plan.columns, input: plan }
  // the row number and its [column, value] pairs, before and after expanding the pairs
  const rowPairs: P.PlanColumn[] = [
    { name: 'Row', type: 'long' },
    { name: 'Pairs', type: 'dynamic' },
  ]
  const numbered: P.Project = {
    kind: 'Project',
    columns: rowPairs,
    input: serialized,
    exprs: [
      { kind: 'Window', fn: 'row_number', args: [literal('long', 0)], type: 'long' },
      {
        kind: 'Pack',
        type: 'dynamic',
        skipNullAndEmpty: false,
        entries: cols.map(({ c, i }) => ({ key: c.name, value: { kind: 'Convert', type: 'string', operand: ref(i, c) } as P.Expr })),
      },
    ],
  }
  const expanded: P.MvExpand = {
    kind: 'MvExpand',
    columns: rowPairs,
    input: numbered,
    items: [{ expr: { kind: 'ColumnRef', index: 1, name: 'Pairs', type: 'dynamic' }, output: 1, type: 'dynamic' }],
    bagExpansion: 'array',
  }
  const pair = (i: number): P.Expr => ({
    kind: 'Convert',
    type: 'string',
    operand: {
      kind: 'Member',
      type: 'dynamic',
      target: { kind: 'ColumnRef', index: 1, name: 'Pairs', type: 'dynamic' },
      key: literal('long', i),
    },
  })
  return {
    kind: 'Project',
    columns: [
      { name: 'Row', type: 'long' },
      { name: 'Column', type: 'string' },
      { name: 'Value', type: 'string' },
    ],
    input: expanded,
    exprs: [{ kind: 'ColumnRef', index: 0, name: 'Row', type: 'long' }, pair(0), pair(1)],
  }
}
