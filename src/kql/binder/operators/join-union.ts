/**
 * @module
 * join, lookup and union (the operator and the `union` source): the operators that combine
 * tables. Duplicate right-side join columns get a numeric suffix; union columns of different types
 * become `name_type` (src/kql/README.md "Semantics decisions").
 */
import { KqlError } from '../../kql-error.js'
import * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import { isNumericType, type KqlType } from '../../types.js'
import { type BindContext, visible, withoutHidden } from '../bind-context.js'
import { didYouMean, matchesPattern, uniqueName } from '../names.js'
import type { Scope, TabularValue } from '../scope.js'

const JOIN_KINDS: ReadonlySet<string> = new Set(P.JOIN_KINDS)
const JOIN_ALIASES: Readonly<Record<string, P.JoinKind>> = {
  anti: 'leftanti',
  leftantisemi: 'leftanti',
  rightantisemi: 'rightanti',
  semi: 'leftsemi',
}

export function bindJoin(b: BindContext, leftPlan: P.PlanNode, op: A.JoinOp | A.LookupOp, scope: Scope): P.Join {
  const isLookup = op.kind === 'Lookup'
  let kind: P.JoinKind = isLookup ? 'leftouter' : 'innerunique'
  for (const p of op.params) {
    if (p.name !== 'kind') continue
    const v = String(p.value)
    const k = (JOIN_ALIASES[v] ?? v) as P.JoinKind
    if (!JOIN_KINDS.has(k) || (isLookup && k !== 'leftouter' && k !== 'inner')) {
      throw b.err(
        p.valueStart,
        isLookup
          ? `lookup kind must be leftouter or inner, got '${v}'`
          : `unknown join kind '${v}': expected innerunique, inner, leftouter, rightouter, fullouter, leftanti, rightanti, leftsemi or rightsemi`,
      )
    }
    kind = k
  }
  const left = withoutHidden(leftPlan)
  const right = withoutHidden(b.bindTabular(op.right, scope).plan)
  const leftKeys: number[] = []
  const rightKeys: number[] = []
  const what = isLookup ? 'lookup' : 'join'
  const keyIndex = (side: 'left' | 'right', plan: P.PlanNode, name: string, offset: number): number => {
    const i = plan.columns.findIndex((c) => c.name === name)
    if (i >= 0) return i
    const names = plan.columns.map((c) => c.name)
    throw b.err(offset, `the ${side} side of the ${what} has no column '${name}'${didYouMean(name, names)}`)
  }
  for (const cond of op.on) {
    const li = keyIndex('left', left, cond.left, cond.leftStart)
    const ri = keyIndex('right', right, cond.right, cond.rightStart)
    const lt = left.columns[li]!.type
    const rt = right.columns[ri]!.type
    if (lt !== rt && !(isNumericType(lt) && isNumericType(rt))) {
      throw b.err(cond.start, `join keys must have the same type: '${cond.left}' is ${lt} and '${cond.right}' is ${rt}`)
    }
    leftKeys.push(li)
    rightKeys.push(ri)
  }
  let columns: P.PlanColumn[]
  let rightOutput: number[]
  if (kind === 'leftsemi' || kind === 'leftanti') {
    columns = [...left.columns]
    rightOutput = []
  } else if (kind === 'rightsemi' || kind === 'rightanti') {
    columns = [...right.columns]
    rightOutput = right.columns.map((_, i) => i)
  } else {
    rightOutput = right.columns.map((_, i) => i).filter((i) => !isLookup || !rightKeys.includes(i))
    const taken = new Set(left.columns.map((c) => c.name))
    columns = [...left.columns]
    for (const i of rightOutput) {
      const c = right.columns[i]!
      const name = uniqueName(c.name, taken)
      taken.add(name)
      columns.push({ name, type: c.type })
    }
  }
  return { kind: 'Join', columns, joinKind: kind, left, right, leftKeys, rightKeys, rightOutput, isLookup }
}

export function bindUnion(
  b: BindContext,
  first: TabularValue | undefined,
  params: readonly A.OperatorParam[],
  tables: readonly A.Expr[],
  scope: Scope,
): TabularValue {
  let kind: 'inner' | 'outer' = 'outer'
  let withSource: string | undefined
  let fuzzy = false
  for (const p of params) {
    if (p.name === 'kind') {
      if (p.value !== 'inner' && p.value !== 'outer') throw b.err(p.valueStart, "union kind must be 'inner' or 'outer'")
      kind = p.value
    } else if (p.name === 'withsource') {
      withSource = String(p.value)
    } else if (p.name === 'isfuzzy') {
      fuzzy = p.value === true
    }
  }
  const inputs: TabularValue[] = first ? [first] : []
  let firstFailure: KqlError | undefined
  for (const t of tables) {
    if (t.kind === 'Name' && t.name.includes('*')) {
      // wildcards reach workspace tables and `view` lets (documentation: the union scope)
      const views = scope.names().filter((n) => {
        const binding = scope.get(n)
        return binding?.kind === 'function' && binding.lambda.isView
      })
      const matches = [...new Set([...b.tables.keys(), ...views])].filter((n) => matchesPattern(t.name, n)).sort()
      if (matches.length === 0 && !fuzzy) throw b.err(t.start, `no table matches '${t.name}'`)
      for (const m of matches) inputs.push(b.bindTableName(m, t.start, scope))
      continue
    }
    try {
      inputs.push(b.bindTabular(t, scope))
    } catch (error) {
      // isfuzzy: legs that do not resolve are left out, as long as one leg remains
      if (!fuzzy || !(error instanceof KqlError) || error.kind !== 'semantic') throw error
      firstFailure ??= error
    }
  }
  if (inputs.length === 0) throw firstFailure ?? b.err(tables[0]?.start ?? 0, 'union needs at least one table')
  return { plan: unionPlan(inputs, kind, withSource) }
}

/**
 * Union columns: by name in first-appearance order; a name that comes with different types in
 * different inputs becomes one column per type, `name_type` (Kusto's rule), suffixed on clashes.
 */
function unionPlan(inputs: readonly TabularValue[], kind: 'inner' | 'outer', withSource: string | undefined): P.Union {
  const typesByName = new Map<string, KqlType[]>()
  for (const inp of inputs) {
    for (const c of visible(inp.plan.columns)) {
      const list = typesByName.get(c.name) ?? []
      if (!list.includes(c.type)) list.push(c.type)
      typesByName.set(c.name, list)
    }
  }
  interface Slot {
    name: string
    type: KqlType
    key: string
    conflicting: boolean
  }
  const slots: Slot[] = []
  const slotIndex = new Map<string, number>()
  for (const inp of inputs) {
    for (const c of visible(inp.plan.columns)) {
      const conflicting = typesByName.get(c.name)!.length > 1
      const key = conflicting ? `${c.name}\u0000${c.type}` : c.name
      if (slotIndex.has(key)) continue
      slotIndex.set(key, slots.length)
      slots.push({ name: c.name, type: c.type, key, conflicting })
    }
  }
  // names that need no suffix are reserved first; `name_type` columns yield on a clash (x_long1)
  const taken = new Set<string>(slots.filter((sl) => !sl.conflicting).map((sl) => sl.name))
  if (withSource) taken.add(withSource)
  for (const slot of slots) {
    if (!slot.conflicting) continue
    slot.name = uniqueName(`${slot.name}_${slot.type}`, taken)
    taken.add(slot.name)
  }
  let chosen = slots.map((_, i) => i)
  if (kind === 'inner') {
    chosen = chosen.filter((i) =>
      inputs.every((inp) =>
        inp.plan.columns.some(
          (c) => !c.hidden && (typesByName.get(c.name)!.length > 1 ? `${c.name}\u0000${c.type}` : c.name) === slots[i]!.key,
        ),
      ),
    )
  }
  const columns: P.PlanColumn[] = []
  if (withSource) columns.push({ name: withSource, type: 'string' })
  for (const i of chosen) columns.push({ name: slots[i]!.name, type: slots[i]!.type })
  const mappings = inputs.map((inp) => {
    const m: number[] = []
    if (withSource) m.push(-1)
    for (const i of chosen) {
      const slot = slots[i]!
      m.push(
        inp.plan.columns.findIndex(
          (c) => !c.hidden && (typesByName.get(c.name)!.length > 1 ? `${c.name}\u0000${c.type}` : c.name) === slot.key,
        ),
      )
    }
    return m
  })
  const sourceNames = withSource ? inputs.map((inp, i) => inp.name ?? `union_arg${i}`) : undefined
  return { kind: 'Union', columns, inputs: inputs.map((i) => i.plan), mappings, sourceNames }
}
