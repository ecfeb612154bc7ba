/**
 * @module
 * The operators that name, hand over or describe a table rather than compute rows: as, invoke,
 * getschema, render, consume and evaluate (its plugins: ../plugins.ts).
 */
import type { Visualization } from '../../engine-types.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { DynamicValue, KqlType } from '../../types.js'
import { type BindContext, type CallArg, visible } from '../bind-context.js'
import { didYouMean } from '../names.js'
import type { Scope, TabularValue } from '../scope.js'
import type { OperatorInput } from './operator-input.js'

const GETSCHEMA_TYPES: Readonly<Record<KqlType, string>> = {
  bool: 'System.SByte',
  int: 'System.Int32',
  long: 'System.Int64',
  real: 'System.Double',
  decimal: 'System.Data.SqlTypes.SqlDecimal',
  string: 'System.String',
  datetime: 'System.DateTime',
  timespan: 'System.TimeSpan',
  guid: 'System.Guid',
  dynamic: 'System.Object',
}

export function bindAs(b: BindContext, op: A.AsOp, at: OperatorInput): TabularValue {
  const { plan, scope } = at
  let p: P.PlanNode = plan
  if (op.params.some((x) => x.name === 'hint.materialized' && x.value === true)) {
    p = { kind: 'Materialize', columns: plan.columns, input: plan, id: b.nextMaterializeId() }
  }
  const value: TabularValue = { plan: p, name: op.name }
  scope.set(op.name, { kind: 'tabular', value })
  return value
}

export function bindGetSchema(_b: BindContext, _op: A.GetSchemaOp, at: OperatorInput): P.PlanNode {
  const { plan } = at
  const cols = visible(plan.columns)
  return {
    kind: 'Values',
    columns: [
      { name: 'ColumnName', type: 'string' },
      { name: 'ColumnOrdinal', type: 'int' },
      { name: 'DataType', type: 'string' },
      { name: 'ColumnType', type: 'string' },
    ],
    rows: cols.map((c, i) => [c.name, i, GETSCHEMA_TYPES[c.type], c.type]),
  }
}

export function bindInvoke(b: BindContext, op: A.InvokeOp, at: OperatorInput): TabularValue {
  const { input, scope } = at
  const fn = scope.get(op.call.name)
  if (fn?.kind !== 'function') {
    throw b.err(
      op.call.start,
      `invoke needs a user-defined function; '${op.call.name}' is not one${didYouMean(op.call.name, scope.names())}`,
    )
  }
  const args: CallArg[] = [{ kind: 'BoundTable', value: input, start: op.start, end: op.start }, ...op.call.args]
  const v = b.invoke(fn, args, op.call, undefined, scope)
  if (v.kind !== 'tabular') throw b.err(op.call.start, `${op.call.name}() returns a scalar; invoke needs a function that returns a table`)
  return v.value
}

export function bindRender(b: BindContext, op: A.RenderOp, scope: Scope): Visualization {
  const properties: Record<string, unknown> = {}
  for (const p of op.properties) {
    const v = p.value
    if (v.kind === 'Name') properties[p.name] = v.name
    else if (v.kind === 'Call' && v.name === '') properties[p.name] = v.args.map((a) => (a.kind === 'Name' ? a.name : b.src(a)))
    else {
      const bound = b.bindScalar(v, { columns: [], scope })
      properties[p.name] =
        bound.kind === 'Literal' ? (typeof bound.value === 'bigint' ? String(bound.value) : (bound.value as DynamicValue)) : b.src(v)
    }
  }
  return { kind: op.chart, properties }
}
