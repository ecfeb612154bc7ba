/**
 * @module
 * The scan operator's matching logic, as documented ("Scan logic"): records are checked against
 * the steps from last to first; step k matches by continuing the previous step's sequence
 * (check 1) or by extending its own active sequence, or starting one for the first step (check 2).
 */
import type { ScanPattern } from '../plan/plan.js'
import type { KqlValue } from '../types.js'
import type { CompiledExpr, Row } from './rows.js'

interface CompiledStep {
  readonly spec: ScanPattern['steps'][number]
  readonly predicate: CompiledExpr
  readonly assignments: readonly { readonly index: number; readonly f: CompiledExpr }[]
}

/** One step's state: the sequence's match id and, per step, the last record matched to it. */
interface StepState {
  readonly matchId: number
  readonly rows: (Row | undefined)[]
}

export function runScan(node: ScanPattern, rows: readonly Row[], steps: readonly CompiledStep[]): Row[] {
  const inputWidth = node.input.columns.length
  const declared = node.declared
  const width = inputWidth + declared.length
  const stepCount = steps.length
  const states: (StepState | null)[] = new Array(stepCount).fill(null)
  const pending: ({ row: Row; matchId: number } | undefined)[] = new Array(stepCount).fill(undefined)
  const out: Row[] = []
  let nextMatchId = 0

  const emit = (row: Row, matchId: number): void => {
    out.push(node.withMatchId ? [...row, matchId] : row)
  }

  /** The combined row a step's expressions read: the record, then every step's state row. */
  const combined = (record: Row, state: StepState | null): KqlValue[] => {
    const c: KqlValue[] = new Array(width * (stepCount + 1)).fill(null)
    for (let i = 0; i < width; i++) c[i] = record[i] ?? null
    if (state) {
      state.rows.forEach((r, k) => {
        if (!r) return
        const base = width * (k + 1)
        for (let i = 0; i < width; i++) c[base + i] = r[i] ?? null
      })
    }
    for (let k = 0; k < stepCount; k++) {
      if (state?.rows[k]) continue
      const base = width * (k + 1)
      for (let d = 0; d < declared.length; d++) c[base + inputWidth + d] = declared[d]!.defaultValue
    }
    return c
  }

  const extend = (record: Row, step: CompiledStep, view: KqlValue[], index: number): Row => {
    const extended: KqlValue[] = [...record]
    const values = step.assignments.map((a) => a.f(view, index, []))
    step.assignments.forEach((a, k) => {
      extended[inputWidth + a.index] = values[k] ?? null
    })
    return extended
  }

  const output = (k: number, row: Row, matchId: number): void => {
    const mode = steps[k]!.spec.output
    if (mode === 'all') emit(row, matchId)
    else if (mode === 'last') pending[k] = { row, matchId }
  }

  const flush = (k: number): void => {
    const p = pending[k]
    if (p) {
      emit(p.row, p.matchId)
      pending[k] = undefined
    }
  }

  for (let i = 0; i < rows.length; i++) {
    const input = rows[i]!
    const record: KqlValue[] = new Array(width)
    for (let c = 0; c < inputWidth; c++) record[c] = input[c] ?? null
    for (let d = 0; d < declared.length; d++) record[inputWidth + d] = declared[d]!.defaultValue
    for (let k = stepCount - 1; k >= 0; k--) {
      const step = steps[k]!
      const previous = k > 0 ? states[k - 1]! : null
      if (previous) {
        const view = combined(record, previous)
        if (step.predicate(view, i, []) === true) {
          const row = extend(record, step, view, i)
          flush(k - 1)
          const rowsCopy = [...previous.rows]
          rowsCopy[k] = row
          states[k] = { matchId: previous.matchId, rows: rowsCopy }
          states[k - 1] = null
          output(k, row, previous.matchId)
          continue
        }
      }
      const own = states[k] ?? null
      if (own || k === 0) {
        const view = combined(record, own)
        if (step.predicate(view, i, []) === true) {
          const row = extend(record, step, view, i)
          let state = own
          if (!state) {
            state = { matchId: nextMatchId++, rows: new Array(stepCount).fill(undefined) }
          } else {
            state = { matchId: state.matchId, rows: [...state.rows] }
          }
          state.rows[k] = row
          states[k] = state
          output(k, row, state.matchId)
        }
      }
    }
  }
  for (let k = 0; k < stepCount; k++) flush(k)
  return out
}
