/**
 * @module
 * parse and parse-kv over an OperatorContext (split out of evaluator.ts, issue 19 item 6): the
 * pattern is one RE2 regex compiled by the binder; a row that does not match gets nulls ("" for
 * strings).
 */

import { compileRegex } from '../functions/regex.js'
import { convertValue } from '../functions/value-conversions.js'
import type * as P from '../plan/plan.js'
import type { KqlValue } from '../types.js'
import { CHECK_EVERY, nullOf, type OperatorContext } from './operator-context.js'
import { extractKeyValues } from './parse-kv.js'
import type { Row } from './rows.js'

export async function parse(ex: OperatorContext, node: P.Parse): Promise<Row[]> {
  const rows = await ex.run(node.input)
  await ex.prepareOne(node.source)
  const src = ex.compile(node.source)
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
    if ((i & (CHECK_EVERY - 1)) === CHECK_EVERY - 1) await ex.pulse()
  }
  return out
}

export async function parseKv(ex: OperatorContext, node: P.ParseKv): Promise<Row[]> {
  const rows = await ex.run(node.input)
  await ex.prepareOne(node.source)
  const src = ex.compile(node.source)
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
