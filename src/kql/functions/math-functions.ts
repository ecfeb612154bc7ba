/**
 * @module
 * KQL mathematical functions (see ./README.md): arithmetic and rounding, exponentials and
 * logarithms, trigonometry, special functions (gamma, error function, beta distribution,
 * Welch's t-test), bitwise operations, random numbers and unit conversions.
 *
 * Reals follow IEEE semantics like .NET's Math (NaN and ±Infinity are values); where the
 * documentation says a domain error gives null (log of a negative number), it does.
 */
import { canonLong, isLongValue, type Long, longAbs, longToBigInt } from '../long.js'
import type { KqlType } from '../types.js'
import { defineScalar, expectKind, functionError } from './function-definitions.js'
import type { ScalarFunction } from './function-types.js'
import { coercer } from './numeric-helpers.js'

// ---------------------------------------------------------------------------------------------
// Special functions
// ---------------------------------------------------------------------------------------------

const LANCZOS = [
  0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905,
  -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7,
]

/** log |Γ(x)| (Lanczos, g = 7), with the reflection formula below 0.5. */
export function logGamma(x: number): number {
  if (Number.isNaN(x)) return NaN
  if (x <= 0 && Number.isInteger(x)) return Infinity
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x)
  const z = x - 1
  let a = LANCZOS[0]!
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i)
  return 0.5 * Math.log(2 * Math.PI) + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

/** Γ(x); exact for small positive integers, Infinity at the poles 0, -1, -2, ... like .NET. */
export function gamma(x: number): number {
  if (Number.isNaN(x)) return NaN
  if (Number.isInteger(x)) {
    if (x <= 0) return NaN
    if (x <= 171) {
      let f = 1
      for (let i = 2; i < x; i++) f *= i
      return f
    }
    return Infinity
  }
  if (x < 0.5) return Math.PI / (Math.sin(Math.PI * x) * gamma(1 - x))
  if (x > 171.7) return Infinity
  const z = x - 1
  let a = LANCZOS[0]!
  const t = z + 7.5
  for (let i = 1; i < 9; i++) a += LANCZOS[i]! / (z + i)
  return Math.sqrt(2 * Math.PI) * Math.pow(t, z + 0.5) * Math.exp(-t) * a
}

/** Regularized lower incomplete gamma P(a, x). */
function gammaP(a: number, x: number): number {
  if (x <= 0) return 0
  if (x < a + 1) {
    let sum = 1 / a
    let term = sum
    for (let n = 1; n < 1000; n++) {
      term *= x / (a + n)
      sum += term
      if (Math.abs(term) < Math.abs(sum) * 1e-17) break
    }
    return sum * Math.exp(-x + a * Math.log(x) - logGamma(a))
  }
  return 1 - gammaQ(a, x)
}

/** Regularized upper incomplete gamma Q(a, x) (continued fraction for x >= a + 1). */
function gammaQ(a: number, x: number): number {
  if (x < a + 1) return 1 - gammaP(a, x)
  const tiny = 1e-300
  let b = x + 1 - a
  let c = 1 / tiny
  let d = 1 / b
  let h = d
  for (let i = 1; i < 1000; i++) {
    const an = -i * (i - a)
    b += 2
    d = an * d + b
    if (Math.abs(d) < tiny) d = tiny
    c = b + an / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < 1e-16) break
  }
  return Math.exp(-x + a * Math.log(x) - logGamma(a)) * h
}

export function erf(x: number): number {
  if (Number.isNaN(x)) return NaN
  if (x === 0) return 0
  const p = gammaP(0.5, x * x)
  return x < 0 ? -p : p
}

export function erfc(x: number): number {
  if (Number.isNaN(x)) return NaN
  if (x < 0) return 2 - erfc(-x)
  return gammaQ(0.5, x * x)
}

/** Continued fraction for the incomplete beta function (modified Lentz). */
function betaContinuedFraction(a: number, b: number, x: number): number {
  const tiny = 1e-300
  const qab = a + b
  const qap = a + 1
  const qam = a - 1
  let c = 1
  let d = 1 - (qab * x) / qap
  if (Math.abs(d) < tiny) d = tiny
  d = 1 / d
  let h = d
  for (let m = 1; m <= 3000; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2))
    d = 1 + aa * d
    if (Math.abs(d) < tiny) d = tiny
    c = 1 + aa / c
    if (Math.abs(c) < tiny) c = tiny
    d = 1 / d
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < 1e-16) break
  }
  return h
}

/** Regularized incomplete beta I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0
  if (x >= 1) return 1
  const lnFront = logGamma(a + b) - logGamma(a) - logGamma(b) + a * Math.log(x) + b * Math.log(1 - x)
  if (x < (a + 1) / (a + b + 2)) return (Math.exp(lnFront) * betaContinuedFraction(a, b, x)) / a
  return 1 - (Math.exp(lnFront) * betaContinuedFraction(b, a, 1 - x)) / b
}

function betaCdf(x: number, a: number, b: number): number {
  if (x < 0 || x > 1 || !(a > 0) || a > 10000 || !(b > 0) || b > 10000) return NaN
  return incompleteBeta(x, a, b)
}

function betaPdf(x: number, a: number, b: number): number {
  if (!(x > 0) || !(x < 1) || !(a > 0) || !(b > 0)) return NaN
  return Math.exp((a - 1) * Math.log(x) + (b - 1) * Math.log(1 - x) - (logGamma(a) + logGamma(b) - logGamma(a + b)))
}

function betaInv(p: number, a: number, b: number): number | null {
  if (!(a > 0) || !(b > 0)) return NaN
  if (!(p > 0) || p > 1) return null
  let lo = 0
  let hi = 1
  for (let i = 0; i < 200 && hi - lo > 1e-17; i++) {
    const mid = (lo + hi) / 2
    if (incompleteBeta(mid, a, b) < p) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

/** Two-tailed p-value of Welch's unequal-variances t-test. */
function welchTest(m1: number, v1: number, n1: number, m2: number, v2: number, n2: number): number {
  const s1 = v1 / n1
  const s2 = v2 / n2
  const t = (m1 - m2) / Math.sqrt(s1 + s2)
  const df = (s1 + s2) ** 2 / ((s1 * s1) / (n1 - 1) + (s2 * s2) / (n2 - 1))
  return incompleteBeta(df / (df + t * t), df / 2, 0.5)
}

// ---------------------------------------------------------------------------------------------
// Rounding
// ---------------------------------------------------------------------------------------------

/** Rounds half away from zero at a decimal precision, working on the decimal text (round(2.15, 1) = 2.2). */
export function roundTo(x: number, digits: number): number {
  if (!Number.isFinite(x)) return x
  const d = Math.trunc(digits)
  const sign = x < 0 ? -1 : 1
  const scaled = Number(`${Math.abs(x)}e${d}`)
  if (!Number.isFinite(scaled)) return x
  const r = Math.round(scaled)
  const frac = scaled - Math.floor(scaled)
  const rounded = frac === 0.5 ? Math.floor(scaled) + 1 : r
  return sign * Number(`${rounded}e${-d}`)
}

/** round() of a long: unchanged for digits ≥ 0, else to a multiple of 10^-digits, halves away from zero (as roundTo). */
function roundLong(v: Long, digits: number): Long {
  if (digits >= 0) return v
  if (digits < -19) return 0
  const unit = 10n ** BigInt(-Math.trunc(digits))
  const x = longToBigInt(v)
  const magnitude = x < 0n ? -x : x
  const q = magnitude / unit + (2n * (magnitude % unit) >= unit ? 1n : 0n)
  return canonLong(x < 0n ? -q * unit : q * unit)
}

// ---------------------------------------------------------------------------------------------
// Bitwise operations (64-bit two's complement, like .NET long)
// ---------------------------------------------------------------------------------------------

const big = (n: number | bigint): bigint => (typeof n === 'bigint' ? n : BigInt(Math.trunc(n)))
const long = (b: bigint): Long => canonLong(b)

function popcount(n: Long): number {
  let v = BigInt.asUintN(64, big(n))
  let count = 0
  while (v > 0n) {
    count += Number(v & 1n)
    v >>= 1n
  }
  return count
}

// ---------------------------------------------------------------------------------------------
// Unit conversions (factors to the SI base unit of each quantity, unit names as Kusto spells them)
// ---------------------------------------------------------------------------------------------

interface Unit {
  toBase(v: number): number
  fromBase(v: number): number
}

const linear = (factor: number): Unit => ({ toBase: (v) => v * factor, fromBase: (v) => v / factor })
const affine = (factor: number, offset: number): Unit => ({ toBase: (v) => v * factor + offset, fromBase: (v) => (v - offset) / factor })

const DEG = Math.PI / 180
const ANGLE_UNITS: Readonly<Record<string, Unit>> = {
  arcminute: linear(1 / 60),
  arcsecond: linear(1 / 3600),
  centiradian: linear(1e-2 / DEG),
  deciradian: linear(1e-1 / DEG),
  degree: linear(1),
  gradian: linear(0.9),
  microdegree: linear(1e-6),
  microradian: linear(1e-6 / DEG),
  millidegree: linear(1e-3),
  milliradian: linear(1e-3 / DEG),
  nanodegree: linear(1e-9),
  nanoradian: linear(1e-9 / DEG),
  natomil: linear(9 / 160),
  radian: linear(1 / DEG),
  revolution: linear(360),
  tilt: { toBase: (v) => Math.asin(v) / DEG, fromBase: (v) => Math.sin(v * DEG) },
}

const BTU = 1055.05585262
const EV = 1.602176565e-19
const ENERGY_UNITS: Readonly<Record<string, Unit>> = {
  britishthermalunit: linear(BTU),
  calorie: linear(4.184),
  decathermec: linear(1.05505585262e9),
  decathermimperial: linear(1.05505585257348e9),
  decathermus: linear(1.054804e9),
  electronvolt: linear(EV),
  erg: linear(1e-7),
  footpound: linear(1.355817948),
  gigabritishthermalunit: linear(BTU * 1e9),
  gigaelectronvolt: linear(EV * 1e9),
  gigajoule: linear(1e9),
  gigawattday: linear(86400e9),
  gigawatthour: linear(3600e9),
  horsepowerhour: linear(2.6845195377e6),
  joule: linear(1),
  kilobritishthermalunit: linear(BTU * 1e3),
  kilocalorie: linear(4184),
  kiloelectronvolt: linear(EV * 1e3),
  kilojoule: linear(1e3),
  kilowattday: linear(86400e3),
  kilowatthour: linear(3600e3),
  megabritishthermalunit: linear(BTU * 1e6),
  megacalorie: linear(4.184e6),
  megaelectronvolt: linear(EV * 1e6),
  megajoule: linear(1e6),
  megawattday: linear(86400e6),
  megawatthour: linear(3600e6),
  millijoule: linear(1e-3),
  teraelectronvolt: linear(EV * 1e12),
  terawattday: linear(86400e12),
  terawatthour: linear(3600e12),
  thermec: linear(1.05505585262e8),
  thermimperial: linear(1.05505585257348e8),
  thermus: linear(1.054804e8),
  wattday: linear(86400),
  watthour: linear(3600),
}

const LBF = 4.4482216152605
const FORCE_UNITS: Readonly<Record<string, Unit>> = {
  decanewton: linear(10),
  dyn: linear(1e-5),
  kilogramforce: linear(9.80665),
  kilonewton: linear(1e3),
  kilopond: linear(9.80665),
  kilopoundforce: linear(LBF * 1e3),
  meganewton: linear(1e6),
  micronewton: linear(1e-6),
  millinewton: linear(1e-3),
  newton: linear(1),
  ounceforce: linear(LBF / 16),
  poundal: linear(0.138254954376),
  poundforce: linear(LBF),
  shorttonforce: linear(LBF * 2000),
  tonneforce: linear(9806.65),
}

const LY = 9.46073047258e15
const PC = 3.08567758128e16
const LENGTH_UNITS: Readonly<Record<string, Unit>> = {
  angstrom: linear(1e-10),
  astronomicalunit: linear(1.495978707e11),
  centimeter: linear(1e-2),
  chain: linear(20.1168),
  datamile: linear(1828.8),
  decameter: linear(10),
  decimeter: linear(0.1),
  dtppica: linear(1 / 236.220472441),
  dtppoint: linear(0.0254 / 72),
  fathom: linear(1.8288),
  foot: linear(0.3048),
  hand: linear(0.1016),
  hectometer: linear(100),
  inch: linear(0.0254),
  kilolightyear: linear(LY * 1e3),
  kilometer: linear(1e3),
  kiloparsec: linear(PC * 1e3),
  lightyear: linear(LY),
  megalightyear: linear(LY * 1e6),
  megaparsec: linear(PC * 1e6),
  meter: linear(1),
  microinch: linear(2.54e-8),
  micrometer: linear(1e-6),
  mil: linear(2.54e-5),
  mile: linear(1609.34),
  millimeter: linear(1e-3),
  nanometer: linear(1e-9),
  nauticalmile: linear(1852),
  parsec: linear(PC),
  printerpica: linear(1 / 237.106301584),
  printerpoint: linear(0.0254 / 72.27),
  shackle: linear(27.432),
  solarradius: linear(6.9551e8),
  twip: linear(1 / 56692.913385826),
  ussurveyfoot: linear(1200 / 3937),
  yard: linear(0.9144),
}

const LB = 0.45359237
const MASS_UNITS: Readonly<Record<string, Unit>> = {
  centigram: linear(1e-5),
  decagram: linear(1e-2),
  decigram: linear(1e-4),
  earthmass: linear(5.9722e24),
  grain: linear(6.479891e-5),
  gram: linear(1e-3),
  hectogram: linear(0.1),
  kilogram: linear(1),
  kilopound: linear(LB * 1e3),
  kilotonne: linear(1e6),
  longhundredweight: linear(50.80234544),
  longton: linear(1016.0469088),
  megapound: linear(LB * 1e6),
  megatonne: linear(1e9),
  microgram: linear(1e-9),
  milligram: linear(1e-6),
  nanogram: linear(1e-12),
  ounce: linear(0.028349523125),
  pound: linear(LB),
  shorthundredweight: linear(45.359237),
  shortton: linear(907.18474),
  slug: linear(1 / 6.852176556196105e-2),
  solarmass: linear(1.98947e30),
  stone: linear(6.35029318),
  tonne: linear(1e3),
}

const SPEED_UNITS: Readonly<Record<string, Unit>> = (() => {
  const lengths: Record<string, number> = {
    centimeter: 1e-2,
    decimeter: 0.1,
    foot: 0.3048,
    inch: 0.0254,
    kilometer: 1e3,
    meter: 1,
    micrometer: 1e-6,
    millimeter: 1e-3,
    nanometer: 1e-9,
    ussurveyfoot: 1200 / 3937,
    yard: 0.9144,
  }
  const out: Record<string, Unit> = { knot: linear(1852 / 3600), mileperhour: linear(0.44704) }
  for (const [name, m] of Object.entries(lengths)) {
    out[`${name}perhour`] = linear(m / 3600)
    out[`${name}perminute`] = linear(m / 60)
    out[`${name}persecond`] = linear(m)
  }
  return out
})()

const TEMPERATURE_UNITS: Readonly<Record<string, Unit>> = {
  degreecelsius: affine(1, 273.15),
  degreedelisle: affine(-2 / 3, 373.15),
  degreefahrenheit: affine(5 / 9, (459.67 * 5) / 9),
  degreenewton: affine(100 / 33, 273.15),
  degreerankine: linear(5 / 9),
  degreereaumur: affine(5 / 4, 273.15),
  degreeroemer: affine(40 / 21, 273.15 - (7.5 * 40) / 21),
  kelvin: linear(1),
  millidegreecelsius: affine(1e-3, 273.15),
  solartemperature: linear(5778),
}

const USGAL = 0.00378541
const IMPGAL = 0.00454609
const FT3 = 0.0283168
const VOLUME_UNITS: Readonly<Record<string, Unit>> = {
  acrefoot: linear(1 / 0.000810714),
  autablespoon: linear(2e-5),
  boardfoot: linear(2.3597372158e-3),
  centiliter: linear(1e-5),
  cubiccentimeter: linear(1e-6),
  cubicdecimeter: linear(1e-3),
  cubicfoot: linear(FT3),
  cubichectometer: linear(1e6),
  cubicinch: linear(1.6387e-5),
  cubickilometer: linear(1e9),
  cubicmeter: linear(1),
  cubicmicrometer: linear(1e-18),
  cubicmile: linear(4.16818182544058e9),
  cubicmillimeter: linear(1e-9),
  cubicyard: linear(0.764554858),
  decaliter: linear(1e-2),
  decausgallon: linear(USGAL * 10),
  deciliter: linear(1e-4),
  deciusgallon: linear(USGAL / 10),
  hectocubicfoot: linear(FT3 * 100),
  hectocubicmeter: linear(100),
  hectoliter: linear(0.1),
  hectousgallon: linear(USGAL * 100),
  imperialbeerbarrel: linear(0.16365924),
  imperialgallon: linear(IMPGAL),
  imperialounce: linear(2.84130625e-5),
  imperialpint: linear(5.6826125e-4),
  kilocubicfoot: linear(FT3 * 1e3),
  kilocubicmeter: linear(1e3),
  kiloimperialgallon: linear(IMPGAL * 1e3),
  kiloliter: linear(1),
  kilousgallon: linear(USGAL * 1e3),
  liter: linear(1e-3),
  megacubicfoot: linear(FT3 * 1e6),
  megaimperialgallon: linear(IMPGAL * 1e6),
  megaliter: linear(1e3),
  megausgallon: linear(USGAL * 1e6),
  metriccup: linear(2.5e-4),
  metricteaspoon: linear(5e-6),
  microliter: linear(1e-9),
  milliliter: linear(1e-6),
  oilbarrel: linear(0.158987294928),
  uktablespoon: linear(1.5e-5),
  usbeerbarrel: linear(0.1173477658),
  uscustomarycup: linear(2.365882365e-4),
  usgallon: linear(USGAL),
  uslegalcup: linear(2.4e-4),
  usounce: linear(2.95735295625e-5),
  uspint: linear(4.73176473e-4),
  usquart: linear(9.46352946e-4),
  ustablespoon: linear(1.478676478125e-5),
  usteaspoon: linear(4.92892159375e-6),
}

function converterFunction(name: string, units: Readonly<Record<string, Unit>>): ScalarFunction {
  const unit = (s: string): Unit | undefined => units[s.trim().toLowerCase()]
  return defineScalar({
    name,
    params: ['real', 'string', 'string'],
    result: 'real',
    impl: ([v, from, to]) => {
      const f = unit(from as string)
      const t = unit(to as string)
      if (!f || !t) return null
      return t.fromBase(f.toBase(v as number))
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Definitions
// ---------------------------------------------------------------------------------------------

/** A real → real function (the result is null when `fn` reports a domain error with null). */
const real1 = (name: string, fn: (x: number) => number | null, aliases?: readonly string[]): ScalarFunction =>
  defineScalar({ name, ...(aliases ? { aliases } : {}), params: ['real'], result: 'real', impl: ([x]) => fn(x as number) })

const real2 = (name: string, fn: (x: number, y: number) => number | null): ScalarFunction =>
  defineScalar({ name, params: ['real', 'real'], result: 'real', impl: ([x, y]) => fn(x as number, y as number) })

const real3 = (name: string, fn: (x: number, y: number, z: number) => number | null): ScalarFunction =>
  defineScalar({ name, params: ['real', 'real', 'real'], result: 'real', impl: ([x, y, z]) => fn(x as number, y as number, z as number) })

const predicate = (name: string, fn: (x: number) => boolean): ScalarFunction =>
  defineScalar({
    name,
    params: ['real'],
    result: 'bool',
    bind(args) {
      const c = coercer('real', args[0]!.type)
      return ([v]) => {
        const x = c(v ?? null)
        return typeof x === 'number' ? fn(x) : false
      }
    },
  })

const logOf =
  (fn: (x: number) => number) =>
  (x: number): number | null =>
    x < 0 ? null : fn(x)

const bitwise2 = (name: string, fn: (a: bigint, b: bigint) => bigint): ScalarFunction =>
  defineScalar({ name, params: ['long', 'long'], result: 'long', impl: ([a, b]) => long(fn(big(a as Long), big(b as Long))) })

/** abs, ceiling: the result keeps the (numeric or timespan) type of the argument. */
function sameType(name: string, num: (x: number) => number, ticks: ((t: bigint) => bigint) | null): ScalarFunction {
  const timespans = (t: KqlType): boolean => ticks !== null && t === 'timespan'
  return defineScalar({
    name,
    params: ['scalar'],
    // Kusto: abs(int) is long; otherwise the argument's type (ceiling keeps int too)
    result: ([a]) =>
      timespans(a!.type) ? 'timespan' : a!.type === 'dynamic' ? 'real' : name === 'abs' && a!.type === 'int' ? 'long' : a!.type,
    bind(args) {
      const t = args[0]!.type
      if (ticks && timespans(t)) return ([v]) => (typeof v === 'bigint' ? ticks(v) : null)
      // the kind depends on the overload: a number unless this function takes timespans too
      expectKind(name, args, 0, 'number')
      if (t === 'long') {
        // exact 64-bit (abs(long.MinValue) wraps, as .NET's unchecked arithmetic)
        return ([v]) => (isLongValue(v) ? (name === 'abs' ? longAbs(v) : v) : null)
      }
      const c = coercer('number', t)
      return ([v]) => {
        const x = c(v ?? null)
        return typeof x === 'number' ? num(x) : null
      }
    },
  })
}

const roundFn = defineScalar({
  name: 'round',
  params: ['number', 'integer'],
  min: 1,
  result: (args) => (args[0]!.type === 'dynamic' ? 'real' : args[0]!.type),
  bind(args) {
    const t = args[0]!.type
    const value = coercer('number', t)
    const digits = args[1] ? coercer('integer', args[1].type) : () => 0
    if (t === 'long') {
      // exact 64-bit: a long beyond 2^53 would lose digits through a double
      return ([v, d]) => {
        const p = digits(d ?? null)
        if (!isLongValue(v) || typeof p !== 'number') return null
        return roundLong(v, p)
      }
    }
    return ([v, d]) => {
      const x = value(v ?? null)
      const p = digits(d ?? null)
      if (typeof x !== 'number' || typeof p !== 'number') return null
      return roundTo(x, p)
    }
  },
})

const randFn = defineScalar({
  name: 'rand',
  deterministic: false,
  params: ['integer'],
  min: 0,
  result: 'real',
  bind(args) {
    const n = args[0] ? coercer('integer', args[0].type) : null
    return (values, ctx) => {
      if (!n) return ctx.random()
      const limit = n(values[0] ?? null)
      if (typeof limit !== 'number' || !(limit >= 1)) return null
      return Math.floor(ctx.random() * Math.floor(limit))
    }
  },
})

const aroundFn = defineScalar({
  name: 'around',
  params: ['scalar', 'scalar', 'scalar'],
  result: 'bool',
  bind(args) {
    const t = args[0]!.type
    const ticks = t === 'datetime' || t === 'timespan'
    if (ticks) {
      if (args[1]!.type !== t) throw functionError('around', `center (${args[1]!.text}) must be a ${t}, got ${args[1]!.type}`)
      expectKind('around', args, 2, 'timespan')
      return ([v, c, d]) => {
        if (typeof v !== 'bigint' || typeof c !== 'bigint' || typeof d !== 'bigint') return null
        return v >= c - d && v <= c + d
      }
    }
    // the numeric overload (the kinds depend on the first argument's type)
    for (let i = 0; i < 3; i++) expectKind('around', args, i, 'number')
    const cs = args.map((a) => coercer('number', a.type))
    return (values) => {
      const [v, c, d] = values.map((x, i) => cs[i]!(x ?? null))
      if (typeof v !== 'number' || typeof c !== 'number' || typeof d !== 'number') return null
      return v >= c - d && v <= c + d
    }
  },
})

const signFn = real1('sign', (x) => (Number.isNaN(x) ? NaN : x > 0 ? 1 : x < 0 ? -1 : 0))

export const mathFunctions: readonly ScalarFunction[] = [
  sameType('abs', Math.abs, (t) => (t < 0n ? -t : t)),
  sameType('ceiling', Math.ceil, null),
  signFn,
  roundFn,
  aroundFn,
  real1('sqrt', (x) => (x < 0 ? null : Math.sqrt(x))),
  real2('pow', (x, y) => Math.pow(x, y)),
  real1('exp', Math.exp),
  real1('exp2', (x) => Math.pow(2, x)),
  real1('exp10', (x) => Math.pow(10, x)),
  real1('log', logOf(Math.log)),
  real1('log2', logOf(Math.log2)),
  real1('log10', logOf(Math.log10)),
  defineScalar({ name: 'pi', params: [], result: 'real', impl: () => Math.PI }),
  real1('sin', Math.sin),
  real1('cos', Math.cos),
  real1('tan', Math.tan),
  real1('cot', (x) => 1 / Math.tan(x)),
  real1('asin', (x) => (x < -1 || x > 1 ? null : Math.asin(x))),
  real1('acos', (x) => (x < -1 || x > 1 ? null : Math.acos(x))),
  real1('atan', Math.atan),
  real2('atan2', Math.atan2),
  real1('degrees', (x) => (180 / Math.PI) * x),
  real1('radians', (x) => (Math.PI / 180) * x),
  predicate('isnan', Number.isNaN),
  predicate('isinf', (x) => x === Infinity || x === -Infinity),
  predicate('isfinite', Number.isFinite),
  real1('gamma', gamma),
  real1('loggamma', logGamma),
  real1('erf', erf),
  real1('erfc', erfc),
  real3('beta_cdf', betaCdf),
  real3('beta_pdf', betaPdf),
  real3('beta_inv', betaInv),
  defineScalar({
    name: 'welch_test',
    params: ['real', 'real', 'real', 'real', 'real', 'real'],
    result: 'real',
    impl: (v) => welchTest(...(v as [number, number, number, number, number, number])),
  }),
  randFn,
  bitwise2('binary_and', (a, b) => a & b),
  bitwise2('binary_or', (a, b) => a | b),
  bitwise2('binary_xor', (a, b) => a ^ b),
  bitwise2('binary_shift_left', (a, n) => a << (n & 63n)),
  bitwise2('binary_shift_right', (a, n) => BigInt.asIntN(64, a) >> (n & 63n)),
  defineScalar({ name: 'binary_not', params: ['long'], result: 'long', impl: ([a]) => long(~big(a as Long)) }),
  defineScalar({ name: 'bitset_count_ones', params: ['long'], result: 'long', impl: ([a]) => popcount(a as Long) }),
  converterFunction('convert_angle', ANGLE_UNITS),
  converterFunction('convert_energy', ENERGY_UNITS),
  converterFunction('convert_force', FORCE_UNITS),
  converterFunction('convert_length', LENGTH_UNITS),
  converterFunction('convert_mass', MASS_UNITS),
  converterFunction('convert_speed', SPEED_UNITS),
  converterFunction('convert_temperature', TEMPERATURE_UNITS),
  converterFunction('convert_volume', VOLUME_UNITS),
]
