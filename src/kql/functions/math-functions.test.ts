import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { KqlType, KqlValue } from '../types.js'
import { parseDateTime, parseTimespan } from '../values.js'
import { lookupScalar } from './registry.js'

const ctx = { now: 0n, random: () => 0.25 }

function call(name: string, types: readonly KqlType[], values: readonly KqlValue[]): KqlValue {
  const fn = lookupScalar(name)
  assert.ok(fn, `${name} is registered`)
  const infos = types.map((type, i) => ({ type, text: `a${i}`, constant: { value: values[i] ?? null } }))
  return fn.bind(infos).evaluate(values, ctx)
}

function typeOf(name: string, types: readonly KqlType[]): KqlType {
  return lookupScalar(name)!.bind(types.map((type, i) => ({ type, text: `a${i}` }))).type
}

/** Relative comparison at the conformance suite's tolerance. */
function close(actual: KqlValue, expected: number, what = ''): void {
  assert.equal(typeof actual, 'number', `${what}: ${String(actual)} is a number`)
  const a = actual as number
  const ok = a === expected || Math.abs(a - expected) <= 1e-9 * Math.max(Math.abs(expected), 1e-300)
  assert.ok(ok, `${what}: expected ${expected}, got ${a}`)
}

function bindFails(name: string, types: readonly KqlType[]): void {
  assert.throws(
    () => lookupScalar(name)!.bind(types.map((type, i) => ({ type, text: `a${i}` }))),
    (e: unknown) => e instanceof KqlError && e.kind === 'semantic' && e.message.includes(name),
  )
}

describe('arithmetic and rounding', () => {
  it('abs and ceiling keep the argument type', () => {
    assert.equal(call('abs', ['long'], [-5]), 5)
    assert.equal(typeOf('abs', ['long']), 'long')
    assert.equal(typeOf('abs', ['int']), 'long')
    assert.equal(typeOf('bitset_count_ones', ['long']), 'long')
    assert.equal(typeOf('abs', ['real']), 'real')
    assert.equal(call('abs', ['timespan'], [-parseTimespan('1h')!]), parseTimespan('1h'))
    assert.equal(call('ceiling', ['real'], [-1.1]), -1)
    assert.equal(call('ceiling', ['real'], [1.1]), 2)
    assert.equal(call('abs', ['real'], [null]), null)
    bindFails('abs', ['string'])
  })
  it('sign returns a real (documentation example)', () => {
    assert.equal(call('sign', ['long'], [-42]), -1)
    assert.equal(call('sign', ['long'], [0]), 0)
    assert.equal(call('sign', ['real'], [11.2]), 1)
    assert.equal(typeOf('sign', ['long']), 'real')
  })
  it('round (documentation examples)', () => {
    assert.equal(call('round', ['real', 'long'], [2.98765, 3]), 2.988)
    assert.equal(call('round', ['real', 'long'], [2.15, 1]), 2.2)
    assert.equal(call('round', ['real'], [2.15]), 2)
    assert.equal(call('round', ['real', 'long'], [-50.55, -2]), -100)
    assert.equal(call('round', ['real', 'long'], [21.5, -1]), 20)
    assert.equal(call('round', ['real'], [-2.5]), -3)
    assert.equal(typeOf('round', ['long']), 'long')
  })
  it('pow (kusto-loco cases), sqrt, exp, log', () => {
    assert.deepEqual(
      [
        [10, 0],
        [10, 1],
        [10, 2],
        [10, 3],
        [10, -1],
      ].map(([x, y]) => call('pow', ['real', 'real'], [x!, y!])),
      [1, 10, 100, 1000, 0.1],
    )
    assert.equal(call('pow', ['real', 'real'], [null, 3]), null)
    assert.equal(call('pow', ['real', 'real'], [3, null]), null)
    assert.equal(call('sqrt', ['real'], [256]), 16)
    assert.equal(call('sqrt', ['real'], [-1]), null)
    close(call('log', ['long'], [5]), 1.6094379124341003)
    assert.equal(call('log', ['real'], [-1]), null)
    assert.equal(call('log', ['real'], [0]), -Infinity)
    assert.equal(call('log10', ['real'], [100]), 2)
    assert.equal(call('log2', ['real'], [8]), 3)
    assert.equal(call('exp2', ['real'], [3]), 8)
    assert.equal(call('exp10', ['real'], [3]), 1000)
    close(call('exp', ['real'], [1]), Math.E)
  })
})

describe('trigonometry', () => {
  it('atan2 (documentation example)', () => {
    close(call('atan2', ['long', 'long'], [1, 1]), 0.785398163397448)
    close(call('atan2', ['long', 'long'], [0, -1]), 3.14159265358979)
    close(call('atan2', ['long', 'long'], [-1, 0]), -1.5707963267949)
  })
  it('degrees, radians, cot, asin/acos domain', () => {
    close(call('degrees', ['real'], [Math.PI / 4]), 45)
    close(call('degrees', ['real'], [Math.PI * 1.5]), 270)
    assert.equal(call('degrees', ['long'], [0]), 0)
    close(call('radians', ['long'], [180]), Math.PI)
    close(call('cot', ['real'], [1]), 0.642092615934331)
    assert.equal(call('acos', ['real'], [2]), null)
    close(call('asin', ['real'], [1]), Math.PI / 2)
    close(call('pi', [], []), 3.141592653589793)
  })
})

describe('NaN and infinity', () => {
  it('isnan, isinf, isfinite', () => {
    assert.equal(call('isnan', ['real'], [NaN]), true)
    assert.equal(call('isnan', ['real'], [-1]), false)
    assert.equal(call('isinf', ['real'], [-Infinity]), true)
    assert.equal(call('isfinite', ['real'], [Infinity]), false)
    assert.equal(call('isfinite', ['long'], [1]), true)
  })
})

describe('special functions', () => {
  it('gamma and loggamma', () => {
    assert.equal(call('gamma', ['long'], [5]), 24)
    close(call('gamma', ['real'], [0.5]), Math.sqrt(Math.PI))
    close(call('gamma', ['real'], [-0.5]), -2 * Math.sqrt(Math.PI))
    close(call('loggamma', ['long'], [5]), Math.log(24))
    close(call('loggamma', ['real'], [100]), 359.1342053695754)
  })
  it('erf and erfc', () => {
    close(call('erf', ['real'], [1]), 0.8427007929497149)
    close(call('erf', ['real'], [-0.5]), -0.5204998778130465)
    close(call('erfc', ['real'], [1]), 0.15729920705028513)
    close(call('erfc', ['real'], [5]), 1.5374597944280349e-12)
  })
  it('beta_cdf, beta_pdf, beta_inv (documentation examples)', () => {
    close(call('beta_cdf', ['real', 'real', 'real'], [0.9, 10, 20]), 0.999999999999959)
    assert.ok(Number.isNaN(call('beta_cdf', ['real', 'real', 'real'], [1.5, 10, 20]) as number))
    assert.ok(Number.isNaN(call('beta_cdf', ['real', 'real', 'real'], [-10, 10, 20]) as number))
    assert.ok(Number.isNaN(call('beta_cdf', ['real', 'real', 'real'], [0.1, -1, 20]) as number))
    close(call('beta_pdf', ['real', 'real', 'real'], [0.5, 10, 20]), 0.746176019310951)
    assert.ok(Number.isNaN(call('beta_pdf', ['real', 'real', 'real'], [1.5, 10, 20]) as number))
    close(call('beta_inv', ['real', 'real', 'real'], [0.1, 10, 20]), 0.226415022388749)
    assert.equal(call('beta_inv', ['real', 'real', 'real'], [1.5, 10, 20]), null)
    assert.ok(Number.isNaN(call('beta_inv', ['real', 'real', 'real'], [0.1, -1, 20]) as number))
  })
  it('welch_test (documentation example: p ≈ 0.021)', () => {
    const s1 = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6, 19.0, 21.7, 21.4]
    const s2 = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1, 22.9, 20.5, 24.4]
    const stats = (s: number[]): [number, number, number] => {
      const m = s.reduce((a, b) => a + b) / s.length
      return [m, s.reduce((a, b) => a + (b - m) ** 2, 0) / (s.length - 1), s.length]
    }
    const p = call('welch_test', Array(6).fill('real') as KqlType[], [...stats(s1), ...stats(s2)]) as number
    assert.ok(Math.abs(p - 0.021) < 0.0005, `p = ${p}`)
  })
})

describe('bitwise', () => {
  it('binary_* on 64-bit longs', () => {
    assert.equal(call('binary_and', ['long', 'long'], [8, 12]), 8)
    assert.equal(call('binary_or', ['long', 'long'], [8, 3]), 11)
    assert.equal(call('binary_xor', ['long', 'long'], [1, 3]), 2)
    assert.equal(call('binary_not', ['long'], [100]), -101)
    assert.equal(call('binary_shift_left', ['long', 'long'], [1, 2]), 4)
    assert.equal(call('binary_shift_right', ['long', 'long'], [16, 2]), 4)
    assert.equal(call('binary_shift_right', ['long', 'long'], [-16, 2]), -4)
    assert.equal(call('bitset_count_ones', ['long'], [42]), 3)
    assert.equal(call('bitset_count_ones', ['long'], [-1]), 64)
    assert.equal(call('binary_and', ['long', 'long'], [null, 1]), null)
    bindFails('binary_and', ['real', 'long'])
  })
})

describe('random', () => {
  it('rand() and rand(N) read the query random source', () => {
    assert.equal(call('rand', [], []), 0.25)
    assert.equal(call('rand', ['long'], [1000]), 250)
    assert.equal(lookupScalar('rand')!.deterministic, false)
  })
})

describe('around', () => {
  it('numbers and datetimes (documentation example)', () => {
    assert.equal(call('around', ['long', 'long', 'long'], [10, 9, 1]), true)
    assert.equal(call('around', ['long', 'long', 'long'], [11, 9, 1]), false)
    const c = parseDateTime('2021-01-01 01:30')!
    const m = parseTimespan('1m')!
    assert.equal(call('around', ['datetime', 'datetime', 'timespan'], [c - m, c, m]), true)
    assert.equal(call('around', ['datetime', 'datetime', 'timespan'], [c - 2n * m, c, m]), false)
    assert.equal(call('around', ['long', 'long', 'long'], [null, 1, 1]), null)
  })
})

describe('unit conversions (documentation examples)', () => {
  const conv = (name: string, v: number, from: string, to: string): KqlValue => call(name, ['real', 'string', 'string'], [v, from, to])
  it('every family', () => {
    close(conv('convert_angle', 1.2, 'Degree', 'Arcminute'), 72)
    close(conv('convert_energy', 1.2, 'Joule', 'BritishThermalUnit'), 0.00113738054437598)
    close(conv('convert_force', 1.2, 'Newton', 'Decanewton'), 0.12)
    close(conv('convert_length', 1.2, 'Meter', 'Foot'), 3.93700787401575)
    close(conv('convert_mass', 1.2, 'Kilogram', 'Pound'), 2.64554714621853)
    close(conv('convert_speed', 1.2, 'MeterPerSecond', 'CentimeterPerHour'), 432000)
    close(conv('convert_temperature', 1.2, 'Kelvin', 'DegreeCelsius'), -271.95)
    close(conv('convert_volume', 1.2, 'CubicMeter', 'AcreFoot'), 0.0009728568)
  })
  it('temperatures are affine, unknown units give null', () => {
    close(conv('convert_temperature', 100, 'DegreeCelsius', 'DegreeFahrenheit'), 212)
    close(conv('convert_temperature', 32, 'DegreeFahrenheit', 'Kelvin'), 273.15)
    assert.equal(conv('convert_length', 1, 'Meter', 'Cubit'), null)
  })
})
