/**
 * @module
 * parse and parse-kv: columns extracted from text (a parse pattern compiled to one RE2 regex by
 * parse-pattern.ts; parse-kv's delimiters or regex).
 */
import { compileRegex } from '../../functions/regex.js'
import type * as P from '../../plan/plan.js'
import type * as A from '../../syntax/ast.js'
import type { KqlType } from '../../types.js'
import { type BindContext, putColumn, type RowCtx } from '../bind-context.js'
import { buildParseRegex } from '../parse-pattern.js'
import { toText } from '../scalar-expressions.js'

export function bindParse(b: BindContext, plan: P.PlanNode, op: A.ParseOp, ctx: RowCtx): P.Parse {
  let mode: 'simple' | 'relaxed' | 'regex' = 'simple'
  let flags = ''
  for (const p of op.params) {
    if (p.name === 'kind') {
      if (p.value !== 'simple' && p.value !== 'relaxed' && p.value !== 'regex')
        throw b.err(p.valueStart, 'parse kind must be simple, relaxed or regex')
      mode = p.value
    } else if (p.name === 'flags') {
      for (const f of String(p.value)) {
        if (f === 'i' || f === 'm' || f === 's' || f === 'U') flags += f
        else throw b.err(p.valueStart, `unknown regex flag '${f}' (parse knows i, m, s and U)`)
      }
    }
  }
  const source = toText(b.bindScalar(op.source, ctx), op.source.start)
  const columns: P.PlanColumn[] = [...plan.columns]
  const types: KqlType[] = []
  const outputs: number[] = []
  for (const part of op.pattern) {
    if (part.kind !== 'column') continue
    const type = part.type ?? 'string'
    types.push(type)
    outputs.push(putColumn(columns, part.name, type))
  }
  if (outputs.length === 0) throw b.err(op.start, 'the parse pattern names no column to extract')
  const built = buildParseRegex(op.pattern, mode, types, flags)
  try {
    compileRegex(built.source, built.flags, 'parse')
  } catch (error) {
    b.rethrowAt(error, op.start)
  }
  const captures = built.groups.map((group, k) => ({ group, output: outputs[k]!, type: types[k]! }))
  return {
    kind: 'Parse',
    columns,
    input: plan,
    source,
    regex: built.source,
    flags: built.flags,
    captures,
    dropUnmatched: op.where,
    relaxed: mode === 'relaxed',
  }
}

export function bindParseKv(b: BindContext, plan: P.PlanNode, op: A.ParseKvOp, ctx: RowCtx): P.ParseKv {
  const source = toText(b.bindScalar(op.source, ctx), op.source.start)
  const columns: P.PlanColumn[] = [...plan.columns]
  const keys = op.keys.map((k) => ({ name: k.name, type: k.type, output: putColumn(columns, k.name, k.type) }))
  const opt = (name: string): string | undefined => {
    const p = op.options.find((o) => o.name === name)
    return p === undefined ? undefined : String(p.value)
  }
  const regex = opt('regex')
  if (regex !== undefined) {
    try {
      compileRegex(regex, '', 'parse-kv')
    } catch (error) {
      b.rethrowAt(error, op.start)
    }
  }
  const pairDelimiter = opt('pair_delimiter')
  const kvDelimiter = opt('kv_delimiter')
  if ((pairDelimiter === undefined) !== (kvDelimiter === undefined)) {
    throw b.err(op.start, 'parse-kv needs both pair_delimiter and kv_delimiter, or neither')
  }
  return {
    kind: 'ParseKv',
    columns,
    input: plan,
    source,
    keys,
    ...(pairDelimiter !== undefined ? { pairDelimiter } : {}),
    ...(kvDelimiter !== undefined ? { kvDelimiter } : {}),
    ...(opt('quote') !== undefined ? { quote: opt('quote') } : {}),
    ...(opt('escape') !== undefined ? { escape: opt('escape') } : {}),
    ...(regex !== undefined ? { regex } : {}),
    greedy: op.options.some((o) => o.name === 'greedy' && o.value === true),
  }
}
