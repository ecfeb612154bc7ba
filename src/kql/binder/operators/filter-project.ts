/**
 * @module
 * where, project, extend and the project-* family, distinct and serialize: operators that filter
 * rows or compute, select, rename and reorder columns. Multi-column functions used as a whole
 * item (`extend series_stats(x)`) expand into one column per part (`tupleColumns`).
 */
import { arraySortOutputs } from '../../functions/dynamic-functions.js'
import { multiColumnOutputs } from '../../functions/series-functions.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { KqlType } from '../../types.js'
import { type BindContext, literal, putColumn, type RowCtx, ref, selectColumns, visible, withoutHidden } from '../bind-context.js'
import { matchesPattern, uniqueName } from '../names.js'
import { argInfo, convert, fold } from '../scalar-expressions.js'
import type { Scope } from '../scope.js'
import { bindPredicate, type OperatorInput, unknownColumn } from './operator-input.js'

export function bindWhere(b: BindContext, op: A.WhereOp, at: OperatorInput): P.PlanNode {
  const { plan, ctx } = at
  // search's terms look at the searched tables' columns, not at the `$table` it adds
  const whereCtx: RowCtx = op.searchSource
    ? { ...ctx, columns: plan.columns.map((c) => (c.name === '$table' ? { ...c, hidden: true } : c)) }
    : ctx
  const predicate = bindPredicate(b, op.predicate, whereCtx, 'where')
  return { kind: 'Filter', columns: plan.columns, input: plan, predicate }
}

export function bindProjectAway(b: BindContext, op: A.ProjectAwayOp, at: OperatorInput): P.PlanNode {
  const { plan } = at
  const drop = new Set<number>()
  for (const p of op.patterns) {
    const matched = plan.columns.map((c, i) => (!c.hidden && matchesPattern(p.pattern, c.name) ? i : -1)).filter((i) => i >= 0)
    if (matched.length === 0 && !p.pattern.includes('*')) throw unknownColumn(b, p.pattern, p.start, plan.columns)
    for (const i of matched) drop.add(i)
  }
  return selectColumns(
    plan,
    plan.columns.map((_, i) => i).filter((i) => !drop.has(i) && !plan.columns[i]!.hidden),
  )
}

export function bindProjectKeep(b: BindContext, op: A.ProjectKeepOp, at: OperatorInput): P.PlanNode {
  const { plan } = at
  const keepSet = new Set<number>()
  for (const p of op.patterns) {
    // a wildcard never reaches internal columns; naming one exactly does (like project)
    const matched = plan.columns
      .map((c, i) => ((c.hidden ? c.name === p.pattern : matchesPattern(p.pattern, c.name)) ? i : -1))
      .filter((i) => i >= 0)
    if (matched.length === 0 && !p.pattern.includes('*')) throw unknownColumn(b, p.pattern, p.start, plan.columns)
    for (const i of matched) keepSet.add(i)
  }
  return selectColumns(
    plan,
    plan.columns.map((_, i) => i).filter((i) => keepSet.has(i)),
  )
}

export function bindProjectRename(b: BindContext, op: A.ProjectRenameOp, at: OperatorInput): P.PlanNode {
  const { plan } = at
  // internal columns stay hidden unless renamed by name (`project-rename id = _rowid`)
  const columns = [...plan.columns]
  for (const r of op.renames) {
    const idx = columns.findIndex((c) => c.name === r.oldName)
    if (idx < 0) throw unknownColumn(b, r.oldName, r.oldStart, columns)
    const clash = columns.findIndex((c) => c.name === r.newName)
    if (clash >= 0 && clash !== idx) throw b.err(r.start, `project-rename: a column named '${r.newName}' already exists`)
    columns[idx] = { name: r.newName, type: columns[idx]!.type }
  }
  return { kind: 'Project', columns, input: plan, exprs: plan.columns.map((c, i) => ref(i, c)) }
}

export function bindProjectReorder(b: BindContext, op: A.ProjectReorderOp, at: OperatorInput): P.PlanNode {
  const { plan } = at
  const order: number[] = []
  for (const p of op.patterns) {
    let matched = plan.columns
      .map((c, i) => (!c.hidden && matchesPattern(p.pattern, c.name) && !order.includes(i) ? i : -1))
      .filter((i) => i >= 0)
    if (matched.length === 0 && !p.pattern.includes('*')) throw unknownColumn(b, p.pattern, p.start, plan.columns)
    if (p.direction) {
      const cmp = p.direction.startsWith('granny')
        ? grannyCompare
        : (x: string, y: string) => (x.toLowerCase() < y.toLowerCase() ? -1 : x.toLowerCase() > y.toLowerCase() ? 1 : 0)
      matched = [...matched].sort((i, j) => cmp(plan.columns[i]!.name, plan.columns[j]!.name))
      if (p.direction.endsWith('desc')) matched.reverse()
    }
    order.push(...matched)
  }
  for (let i = 0; i < plan.columns.length; i++) if (!order.includes(i) && !plan.columns[i]!.hidden) order.push(i)
  return selectColumns(plan, order)
}

export function bindProjectByNames(b: BindContext, op: A.ProjectByNamesOp, at: OperatorInput): P.PlanNode {
  const { plan, scope } = at
  const order: number[] = []
  for (const arg of op.args) {
    for (const pattern of projectByNamesPatterns(b, arg, scope)) {
      const matched = plan.columns
        .map((c, i) => (!c.hidden && matchesPattern(pattern, c.name) && !order.includes(i) ? i : -1))
        .filter((i) => i >= 0)
      // documented: names that match no column are ignored
      order.push(...matched)
    }
  }
  return selectColumns(plan, order)
}

export function bindDistinct(b: BindContext, op: A.DistinctOp, at: OperatorInput): P.PlanNode {
  const { plan, ctx } = at
  if (op.items.length === 1 && op.items[0]!.expr.kind === 'Star' && op.items[0]!.names.length === 0) {
    const base = withoutHidden(plan)
    return { kind: 'Distinct', columns: base.columns, input: base }
  }
  const projected = bindProject(b, plan, op.items, ctx)
  return { kind: 'Distinct', columns: projected.columns, input: projected }
}

export function bindSerialize(b: BindContext, op: A.SerializeOp, at: OperatorInput): P.PlanNode {
  const { plan, ctx } = at
  const serialized: P.Serialize = { kind: 'Serialize', columns: plan.columns, input: plan }
  if (op.items.length === 0) return serialized
  return bindExtend(b, serialized, op.items, ctx)
}

function projectByNamesPatterns(b: BindContext, arg: A.Expr, scope: Scope): string[] {
  if (arg.kind === 'Call' && arg.name === 'column_names_of') {
    const t = arg.args[0]
    if (!t) throw b.err(arg.start, 'column_names_of() expects a table')
    return visible(b.bindTabular(t, scope).plan.columns).map((c) => c.name)
  }
  const bound = b.bindScalar(arg, { columns: [], scope })
  if (bound.kind !== 'Literal') throw b.err(arg.start, 'project-by-names expects constant column names or patterns')
  const v = bound.value
  if (typeof v === 'string') return [v]
  if (Array.isArray(v)) return v.filter((x): x is string => typeof x === 'string')
  throw b.err(arg.start, 'project-by-names expects strings, dynamic arrays of strings or column_names_of()')
}

/**
 * A multi-column function used as a whole projection item (`extend series_stats(x)`,
 * `print array_sort_asc(a, b)`): one column per part, named `(a, b) = ...` or by Kusto's
 * defaults. Undefined when the item is an ordinary expression. Print keeps only named parts
 * when names are given; extend/project add the rest with their default names.
 */
export function tupleColumns(
  b: BindContext,
  item: A.NamedExpr,
  ctx: RowCtx,
  print: boolean,
): { name: string; type: KqlType; expr: P.Expr; declared: boolean }[] | undefined {
  const e = item.expr
  if (e.kind !== 'Call' || ctx.scope.get(e.name)) return undefined
  const isSort = e.name === 'array_sort_asc' || e.name === 'array_sort_desc'
  if (!isSort && !multiColumnOutputs(e.name, undefined)) return undefined
  if (isSort && e.args.length < 2) return undefined
  const call = b.bindScalar(e, ctx)
  // the arguments' own types: a call of constants is folded into a literal, which keeps none
  const infos = e.args.map((a) => argInfo(b, a, b.bindScalar(a, ctx)))
  const outputs = isSort ? arraySortOutputs(infos) : multiColumnOutputs(e.name, infos[0])!
  if (isSort && outputs.length < 2) return undefined
  if (item.names.length > outputs.length)
    throw b.err(item.start, `${e.name}() produces ${outputs.length} columns, but ${item.names.length} names were given`)
  const shared: P.Expr = call.kind === 'Call' ? { ...call, shared: true } : call
  const parts = outputs.map((o, i) => {
    const member: P.Expr = {
      kind: 'Member',
      type: 'dynamic',
      target: shared,
      key: isSort ? literal('long', i) : literal('string', o.name.slice(o.name.lastIndexOf('_') + 1)),
    }
    return {
      name: item.names[i] ?? o.name,
      type: o.type,
      expr: fold(convert(member, o.type, e.start)),
      declared: i < item.names.length,
    }
  })
  if (!isSort) {
    // the bag keys are the listed suffixes, which may themselves contain '_' (min_idx)
    const suffixes = multiColumnOutputs(e.name, { type: 'dynamic', text: '', columnName: '' })!.map((o) => o.name.slice(e.name.length + 2))
    parts.forEach((p, i) => {
      const member: P.Expr = { kind: 'Member', type: 'dynamic', target: shared, key: literal('string', suffixes[i]!) }
      p.expr = fold(convert(member, p.type, e.start))
    })
  }
  return print && item.names.length > 0 ? parts.filter((p) => p.declared) : parts
}

export function bindProject(b: BindContext, plan: P.PlanNode, items: readonly A.NamedExpr[], ctx: RowCtx): P.Project {
  const columns: P.PlanColumn[] = []
  const exprs: P.Expr[] = []
  const declared = new Set<string>()
  const taken = new Set<string>()
  let n = 1
  for (const item of items) {
    if (item.expr.kind === 'Star' && item.names.length === 0) {
      plan.columns.forEach((c, i) => {
        if (c.hidden || taken.has(c.name)) return
        taken.add(c.name)
        columns.push(c)
        exprs.push(ref(i, c))
      })
      continue
    }
    const tuple = tupleColumns(b, item, ctx, false)
    if (tuple) {
      for (const part of tuple) {
        if (taken.has(part.name) && part.declared) throw b.err(item.start, `the column '${part.name}' is projected twice`)
        const name = uniqueName(part.name, taken)
        taken.add(name)
        if (part.declared) declared.add(name)
        columns.push({ name, type: part.type })
        exprs.push(part.expr)
      }
      continue
    }
    if (item.names.length > 1) throw b.err(item.start, `only a multi-column function can be assigned to several names`)
    const expr = b.bindScalar(item.expr, ctx)
    let name = item.names[0] ?? b.nameOf(item.expr, ctx)
    const isDeclared = item.names.length > 0 || (item.expr.kind === 'Name' && expr.kind === 'ColumnRef')
    if (!name) {
      do name = `Column${n++}`
      while (taken.has(name))
    }
    if (taken.has(name)) {
      if (isDeclared && declared.has(name)) throw b.err(item.start, `the column '${name}' is projected twice`)
      name = uniqueName(name, taken)
    }
    taken.add(name)
    if (isDeclared) declared.add(name)
    columns.push({ name, type: expr.type })
    exprs.push(expr)
  }
  return { kind: 'Project', columns, input: plan, exprs }
}

export function bindExtend(b: BindContext, plan: P.PlanNode, items: readonly A.NamedExpr[], ctx: RowCtx): P.Project {
  const columns: P.PlanColumn[] = [...plan.columns]
  const exprs: P.Expr[] = plan.columns.map((c, i) => ref(i, c))
  let n = 1
  const put = (name: string, type: KqlType, expr: P.Expr): void => {
    exprs[putColumn(columns, name, type)] = expr
  }
  for (const item of items) {
    const tuple = tupleColumns(b, item, ctx, false)
    if (tuple) {
      for (const part of tuple) put(part.name, part.type, part.expr)
      continue
    }
    if (item.names.length > 1) throw b.err(item.start, `only a multi-column function can be assigned to several names`)
    const expr = b.bindScalar(item.expr, ctx)
    let name = item.names[0] ?? b.nameOf(item.expr, ctx)
    if (!name) {
      do name = `Column${n++}`
      while (columns.some((c) => c.name === name) || ctx.scope.get(name!) !== undefined)
    }
    put(name, expr.type, expr)
  }
  return { kind: 'Project', columns, input: plan, exprs }
}

/** Natural ("granny") order: digit runs compare as numbers, case-insensitively. */
function grannyCompare(a: string, b: string): number {
  return a.localeCompare(b, 'en', { numeric: true, sensitivity: 'base' })
}
