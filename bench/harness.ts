/**
 * @module
 * The benchmark harness (`npm run bench`): named scenarios, each measuring a subject against a
 * baseline in the same process and run, printing ratios and writing its table into
 * docs/benchmarks.md between `<!-- bench:<id> -->` markers (other sections are kept).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { cpus, totalmem } from 'node:os'

export interface BenchRow {
  /** What was measured, e.g. "GET no-op, 32 connections". */
  readonly measure: string
  readonly subject: string
  readonly baseline: string
  /** subject / baseline (or as the scenario defines it); undefined when there is no baseline. */
  readonly ratio?: number
  readonly target: string
  readonly met: boolean | undefined
}

export interface ScenarioResult {
  readonly rows: readonly BenchRow[]
  /** Extra notes printed under the table (conditions, what the baseline is). */
  readonly notes?: readonly string[]
}

export interface Scenario {
  readonly id: string
  readonly title: string
  run(): Promise<ScenarioResult>
}

export function machine(): string {
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  return `${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node ${process.version}, ${process.platform}/${process.arch}`
}

export function formatRate(perSecond: number): string {
  return perSecond >= 1000 ? `${(perSecond / 1000).toFixed(1)}k/s` : `${perSecond.toFixed(0)}/s`
}

function markdown(scenario: Scenario, result: ScenarioResult, at: string): string {
  const lines = [
    `### ${scenario.title}`,
    '',
    `Measured ${at} on ${machine()}.`,
    '',
    '| measure | subject | baseline (same run) | ratio | target | met |',
    '|---|---|---|---|---|---|',
    ...result.rows.map((r) => `| ${r.measure} | ${r.subject} | ${r.baseline} | ${r.ratio === undefined ? '–' : `${r.ratio.toFixed(2)}×`} | ${r.target} | ${r.met === undefined ? '–' : r.met ? 'yes' : '**no**'} |`),
    ...(result.notes?.length ? ['', ...result.notes.map((n) => `- ${n}`)] : []),
  ]
  return lines.join('\n')
}

export function writeSection(file: string, scenario: Scenario, result: ScenarioResult): void {
  const at = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
  const block = `<!-- bench:${scenario.id} -->\n${markdown(scenario, result, at)}\n<!-- /bench:${scenario.id} -->`
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n\nWritten by `npm run bench`; each section is replaced when its scenario runs again.\n'
  const pattern = new RegExp(`<!-- bench:${scenario.id} -->[\\s\\S]*?<!-- /bench:${scenario.id} -->`)
  writeFileSync(file, pattern.test(current) ? current.replace(pattern, block) : `${current.trimEnd()}\n\n${block}\n`)
}

export function printResult(scenario: Scenario, result: ScenarioResult): void {
  console.log(`\n== ${scenario.title}`)
  for (const r of result.rows) {
    const ratio = r.ratio === undefined ? '' : `  ratio ${r.ratio.toFixed(2)}×`
    const met = r.met === undefined ? '' : r.met ? '  [target met]' : '  [TARGET MISSED]'
    console.log(`  ${r.measure}: ${r.subject} vs ${r.baseline}${ratio}  (target ${r.target})${met}`)
  }
}
