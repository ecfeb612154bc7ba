/**
 * @module
 * join (every kind; lookup is a join with `isLookup`) and union, over an OperatorContext
 * (split out of evaluator.ts, issue 19 item 6). Join keys match nulls to nulls, as Kusto's hash
 * join does; innerunique keeps the first left row per key.
 */

import { KqlError } from '../kql-error.js'
import type * as P from '../plan/plan.js'
import type { KqlValue } from '../types.js'
import { compositeKey } from './compile-expr.js'
import { CHECK_EVERY, MAX_INTERMEDIATE_ROWS, nullOf, type OperatorContext } from './operator-context.js'
import type { Row } from './rows.js'
import { keyOf } from './value-ops.js'

export async function join(ex: OperatorContext, node: P.Join): Promise<Row[]> {
  const left = await ex.run(node.left)
  const right = await ex.run(node.right)
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
    ex.cap(out.length)
    await ex.pulse()
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

export async function union(ex: OperatorContext, node: P.Union): Promise<Row[]> {
  const out: Row[] = []
  for (let k = 0; k < node.inputs.length; k++) {
    const rows = await ex.run(node.inputs[k]!)
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
    ex.cap(out.length)
    await ex.pulse()
  }
  return out
}
