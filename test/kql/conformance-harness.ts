/**
 * @module
 * Runs conformance cases in-process through compileQuery(...).execute(undefined, ...) and compares
 * the results with the shared runner's rules (compare-results.ts).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parse } from 'lossless-json'
import { compileQuery, EMPTY_SCHEMA, toWireRows } from '../../src/kql/index.js'
import { type ConformanceCase, compareTable } from './compare-results.js'

const here = dirname(fileURLToPath(import.meta.url))
const repoRoot = resolve(here, '..', '..')

/** The shared case file: $PROVENANT_KQL_CASES, else <repo>/../shared/kql/cases.json, else /work/shared/kql/cases.json. */
export function locateSharedCases(): string | undefined {
  const candidates = [process.env.PROVENANT_KQL_CASES, join(repoRoot, '..', 'shared', 'kql', 'cases.json'), '/work/shared/kql/cases.json']
  return candidates.find((p): p is string => typeof p === 'string' && p !== '' && existsSync(p))
}

/** Case files may hold integers beyond 2^53 (exact longs): they are read as bigints. */
export function loadCases(path: string): ConformanceCase[] {
  return parse(readFileSync(path, 'utf8'), undefined, (s: string) => {
    const n = Number(s)
    return /^-?\d+$/.test(s) && !Number.isSafeInteger(n) ? BigInt(s) : n
  }) as ConformanceCase[]
}

/** Our own cases: every test/kql/cases/*.json file (same format as the shared file). */
export function loadOwnCases(): ConformanceCase[] {
  const dir = join(here, 'cases')
  return readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .flatMap((f) => loadCases(join(dir, f)))
}

export function loadKnownFailures(): Record<string, string> {
  return JSON.parse(readFileSync(join(here, 'known-failures.json'), 'utf8')) as Record<string, string>
}

export interface CaseOutcome {
  readonly id: string
  readonly ok: boolean
  readonly diff?: string
}

/** `strictTypes`: also require the result column types to equal the expected ones (our own cases). */
export async function runCase(c: ConformanceCase, strictTypes = false): Promise<CaseOutcome> {
  try {
    const compiled = compileQuery(c.query, EMPTY_SCHEMA, { dialect: 'sqlite' })
    const result = await compiled.execute(undefined, { now: BigInt(Date.now()) * 10_000n, rowCap: 100_000, seed: 1 })
    const wire = toWireRows(result)
    const table = {
      columns: wire.columns.map((col) => col.name),
      rows: wire.results.map((r) => wire.columns.map((col) => r[col.name])),
    }
    let diff = compareTable(c, table)
    if (diff === undefined && strictTypes && c.expected.types) {
      const got = wire.columns.map((col) => col.type)
      const want = c.expected.types.map((t) => (t === 'double' ? 'real' : t))
      if (got.some((t, i) => t !== want[i])) diff = `column types differ: expected ${JSON.stringify(want)} got ${JSON.stringify(got)}`
    }
    return diff === undefined ? { id: c.id, ok: true } : { id: c.id, ok: false, diff }
  } catch (error) {
    return { id: c.id, ok: false, diff: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }
  }
}

export interface Summary {
  readonly passed: number
  readonly failed: number
  /** Failures not listed in known-failures.json: these fail the test. */
  readonly unexpected: readonly CaseOutcome[]
  /** Known failures that now pass (the list should be trimmed). */
  readonly fixed: readonly string[]
  readonly lines: readonly string[]
}

export async function runCases(cases: readonly ConformanceCase[], known: Record<string, string>, strictTypes = false): Promise<Summary> {
  const lines: string[] = []
  const unexpected: CaseOutcome[] = []
  const fixed: string[] = []
  let passed = 0
  for (const c of cases) {
    const outcome = await runCase(c, strictTypes)
    if (outcome.ok) {
      passed++
      if (known[c.id] !== undefined) fixed.push(c.id)
      lines.push(`pass  ${c.id}`)
    } else if (known[c.id] !== undefined) {
      lines.push(`known ${c.id}: ${known[c.id]} [${oneLine(outcome.diff ?? '')}]`)
    } else {
      unexpected.push(outcome)
      lines.push(`FAIL  ${c.id}: ${oneLine(outcome.diff ?? '')}`)
    }
  }
  return { passed, failed: cases.length - passed, unexpected, fixed, lines }
}

function oneLine(s: string, max = 300): string {
  const t = s.replace(/\s+/g, ' ')
  return t.length > max ? t.slice(0, max - 3) + '...' : t
}
