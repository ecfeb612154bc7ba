/**
 * @module
 * Throughput of the strict body parser against JSON.parse (and lossless-json, which the research
 * note suggested) on representative request bodies. Not a test: run it by hand on a quiet machine,
 * `node --import tsx bench/strict-json.bench.ts`, and read the ratio column.
 */
import { parse as losslessParse } from 'lossless-json'
import { parseStrictJson } from '../src/shared/strict-json.js'

const append = JSON.stringify({
  ScopeKey: 'plant-7/line-1',
  entityType: 'batch',
  entityId: 'B-2026-000184',
  actionType: 'release',
  details: { operator: 'user:alice', reason: 'QA sign-off complete', temperature: 21.5, readings: [3, 5, 8, 13], ok: true, note: null },
})
const nested = JSON.stringify({
  Query: 'Temperatures | where timestamp > ago(1h) | summarize avg(value) by bin(timestamp, 5m), sensor',
  params: Array.from({ length: 40 }, (_, i) => ({ name: `p${i}`, value: i * 1.25, tags: ['a', 'b', `c${i}`], nested: { deep: { x: i } } })),
})
const numbers = JSON.stringify(Array.from({ length: 500 }, (_, i) => [i, i * 0.1, -i * 1e-5, 1e21 + i * 1e6]))
const strings = JSON.stringify(
  Array.from({ length: 300 }, (_, i) => `Entr\u00e9e n\u00b0${i} \u2014 "quoted" \\ path\\to\\file ${'x'.repeat(i % 40)}`),
)

function measure(label: string, fn: () => unknown, ms = 700): number {
  for (let i = 0; i < 2000; i++) fn() // warm up the JIT
  let n = 0
  const t0 = performance.now()
  let t = t0
  while (t - t0 < ms) {
    for (let i = 0; i < 200; i++) fn()
    n += 200
    t = performance.now()
  }
  const perSec = (n * 1000) / (t - t0)
  void label
  return perSec
}

console.log('body                 bytes   JSON.parse/s   strict/s   ratio   lossless-json/s')
for (const [name, text] of [
  ['append event', append],
  ['nested query', nested],
  ['numbers', numbers],
  ['escaped strings', strings],
] as const) {
  const native = measure('native', () => JSON.parse(text))
  const strict = measure('strict', () => parseStrictJson(text))
  const lossless = measure('lossless', () => losslessParse(text), 400)
  console.log(
    `${name.padEnd(18)} ${String(text.length).padStart(7)} ${Math.round(native).toLocaleString('en').padStart(14)} ${Math.round(strict).toLocaleString('en').padStart(10)}   ${(strict / native).toFixed(2)}x ${Math.round(lossless).toLocaleString('en').padStart(16)}`,
  )
}
