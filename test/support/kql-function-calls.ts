/**
 * Calls one KQL scalar function the way the binder does (bind once, evaluate once) with typed
 * arguments, for the function families' tests beside src/kql/functions (they shared this
 * preamble as five copies).
 */
import assert from 'node:assert/strict'
import type { EvalContext } from '../../src/kql/functions/function-types.js'
import { lookupScalar } from '../../src/kql/functions/registry.js'
import type { KqlType, KqlValue } from '../../src/kql/types.js'

/** One argument: its static type and its value. */
export type Arg = readonly [KqlType, KqlValue]

/**
 * Binds `name` with `args` and evaluates it once. With `constants`, every argument is also a
 * constant of the call site (as literals are), so bind-time checks of constant arguments run.
 */
export function scalarCaller(options: { random?: number; constants?: boolean } = {}) {
  const ctx: EvalContext = { now: 0n, random: () => options.random ?? 0.5 }
  const bound = (name: string, ...args: Arg[]): { type: KqlType; value: KqlValue } => {
    const fn = lookupScalar(name)
    assert.ok(fn, `${name} is registered`)
    const infos = args.map(([type, value]) => ({ type, text: String(value), ...(options.constants ? { constant: { value } } : {}) }))
    const b = fn.bind(infos)
    return {
      type: b.type,
      value: b.evaluate(
        args.map((a) => a[1]),
        ctx,
      ),
    }
  }
  const call = (name: string, ...args: Arg[]): KqlValue => bound(name, ...args).value
  return { bound, call, ctx }
}

export const s = (v: string): Arg => ['string', v]
export const l = (v: number | bigint | null): Arg => ['long', v]
export const d = (v: KqlValue): Arg => ['dynamic', v]
export const b = (v: boolean | null): Arg => ['bool', v]
export const i = (v: number | null): Arg => ['int', v]
