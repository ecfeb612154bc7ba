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
    ...result.rows.map(
      (r) =>
        `| ${r.measure} | ${r.subject} | ${r.baseline} | ${r.ratio === undefined ? '–' : `${r.ratio.toFixed(2)}×`} | ${r.target} | ${r.met === undefined ? '–' : r.met ? 'yes' : '**no**'} |`,
    ),
    ...(result.notes?.length ? ['', ...result.notes.map((n) => `- ${n}`)] : []),
  ]
  return lines.join('\n')
}

export function writeSection(file: string, scenario: Scenario, result: ScenarioResult): void {
  const at = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
  const block = `<!-- bench:${scenario.id} -->\n${markdown(scenario, result, at)}\n<!-- /bench:${scenario.id} -->`
  const current = existsSync(file)
    ? readFileSync(file, 'utf8')
    : '# Benchmarks\n\nWritten by `npm run bench`; each section is replaced when its scenario runs again.\n'
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

const SUMMARY_ID = 'summary'

/**
 * Rebuilds the summary at the top of docs/benchmarks.md from every scenario section in the file
 * (sections may come from different runs; each row keeps its own measurement date): one line per
 * row that has a target, with the figure, the baseline, the ratio and whether it is met.
 */
export function writeSummary(file: string): void {
  if (!existsSync(file)) return
  const current = readFileSync(file, 'utf8')
  const rows: string[] = []
  const missed: string[] = []
  const section = /<!-- bench:([\w-]+) -->\n### (.*)\n\nMeasured (.*?) on [^\n]*\n([\s\S]*?)<!-- \/bench:\1 -->/g
  for (const match of current.matchAll(section)) {
    const [, id, title, at, body] = match as unknown as [string, string, string, string, string]
    if (id === SUMMARY_ID) continue
    for (const line of body.split('\n')) {
      const cells = line.split(' | ')
      if (!line.startsWith('| ') || cells.length < 6 || line.startsWith('| measure ')) continue
      const met = cells[5]!.replace(/ \|$/, '').trim()
      if (met !== 'yes' && met !== '**no**') continue
      rows.push(
        `| [${id}](#${anchor(title)}) | ${cells[0]!.slice(2)} | ${cells[1]} | ${cells[2]} | ${cells[3]} | ${cells[4]} | ${met} | ${at} |`,
      )
      if (met === '**no**') missed.push(`${cells[0]!.slice(2)} (${id})`)
    }
  }
  // The soak (bench/soak.ts) writes its own sections: its targets are zero 5xx and flat RSS and fds.
  const soak =
    /<!-- soak:([\w-]+) -->\n### (.*)\n\nMeasured (\S+ \S+ UTC)[\s\S]*?\*\*5xx: (\d+)\.\*\*[\s\S]*?RSS: ([^\n]*?); slope after warm-up (-?[\d.]+) MiB\/min[\s\S]*?descriptors: ([^\n]*?); slope after warm-up (-?[\d.]+)\/min[\s\S]*?<!-- \/soak:\1 -->/g
  for (const match of current.matchAll(soak)) {
    const [, backend, title, at, errors, rss, rssSlope, fds, fdSlope] = match as unknown as string[]
    const link = `[soak ${backend}](#${anchor(title!)})`
    const fiveXx = Number(errors) === 0
    rows.push(`| ${link} | 5xx under mixed load | ${errors} | – | – | 0 | ${fiveXx ? 'yes' : '**no**'} | ${at} |`)
    rows.push(
      `| ${link} | RSS trend after warm-up | ${rssSlope} MiB/min (${rss}) | – | – | flat | ${Math.abs(Number(rssSlope)) < 1 ? 'yes' : '**no**'} | ${at} |`,
    )
    rows.push(
      `| ${link} | open file descriptors trend | ${fdSlope}/min (${fds}) | – | – | flat | ${Math.abs(Number(fdSlope)) < 1 ? 'yes' : '**no**'} | ${at} |`,
    )
    if (!fiveXx) missed.push(`5xx in the soak (${backend})`)
  }
  const block = [
    `<!-- bench:${SUMMARY_ID} -->`,
    '## Summary: every target and its latest figure',
    '',
    `Machine of the latest run: ${machine()}. Each scenario section below gives the conditions, the baseline and, where a target is missed, why and what would fix it.`,
    '',
    '| scenario | measure | figure | baseline (same run) | ratio | target | met | measured |',
    '|---|---|---|---|---|---|---|---|',
    ...rows,
    '',
    missed.length ? `Missed: ${missed.join('; ')}.` : 'Every target is met.',
    `<!-- /bench:${SUMMARY_ID} -->`,
  ].join('\n')
  const pattern = new RegExp(`<!-- bench:${SUMMARY_ID} -->[\\s\\S]*?<!-- /bench:${SUMMARY_ID} -->`)
  const next = pattern.test(current) ? current.replace(pattern, block) : current.replace(/(Written by[^\n]*\n)/, `$1\n${block}\n`)
  writeFileSync(file, next)
}

/** GitHub's heading anchor: lower case, punctuation dropped, spaces to dashes. */
function anchor(title: string): string {
  return title
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')
}
