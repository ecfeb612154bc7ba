/**
 * @module
 * The conformance comparison rules of /work/shared/kql/runner.mjs, for in-process runs: numbers
 * within 1e-9 (integers exact below 2^53), datetimes as instants, timespans as ticks, "" == null
 * in string columns, dynamic values deep-compared, rows unordered unless the case says ordered,
 * and the result column names equal to the expected ones.
 */

export interface ConformanceCase {
  readonly id: string
  readonly feature?: string
  readonly query: string
  readonly expected: {
    readonly columns: readonly string[]
    readonly types?: readonly string[]
    readonly rows: readonly (readonly unknown[])[]
  }
  readonly ordered?: boolean
  readonly unorderedArrays?: readonly string[]
  readonly notes?: string
}

export interface Table {
  readonly columns: readonly string[]
  readonly rows: readonly (readonly unknown[])[]
}

const REL_TOL = 1e-9
const ABS_TOL = 1e-12
const TICKS_PER_SECOND = 10_000_000n

function specialFloat(v: unknown): string | null {
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'NaN'
    if (v === Infinity) return 'Infinity'
    if (v === -Infinity) return '-Infinity'
    return null
  }
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase()
    if (s === 'nan') return 'NaN'
    if (s === 'infinity' || s === '+infinity' || s === 'inf' || s === '∞' || s === '+∞') return 'Infinity'
    if (s === '-infinity' || s === '-inf' || s === '-∞') return '-Infinity'
  }
  return null
}

function asNumber(v: unknown): number | bigint | undefined {
  if (typeof v === 'number' || typeof v === 'bigint') return v
  if (typeof v === 'string') {
    const s = v.trim()
    if (/^[-+]?\d+$/.test(s)) {
      const n = Number(s)
      return Number.isSafeInteger(n) ? n : BigInt(s)
    }
    if (/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(s)) return Number(s)
  }
  return undefined
}

function numbersEqual(a: unknown, b: unknown, integral = false): boolean {
  const sa = specialFloat(a)
  const sb = specialFloat(b)
  if (sa || sb) return sa === sb
  const safe = (x: unknown): boolean =>
    (typeof x === 'number' && Number.isSafeInteger(x)) ||
    (typeof x === 'bigint' && x <= BigInt(Number.MAX_SAFE_INTEGER) && x >= -BigInt(Number.MAX_SAFE_INTEGER))
  if (typeof a === 'bigint' && typeof b === 'bigint' && a === b) return true
  if (integral && safe(a) && safe(b)) return Number(a) === Number(b)
  // a long beyond 2^53 is exact (issue 17): no tolerance (stricter than the shared runner)
  if (integral && (typeof a === 'bigint' || typeof b === 'bigint')) {
    const whole = (x: unknown): boolean => typeof x === 'bigint' || (typeof x === 'number' && Number.isInteger(x))
    return whole(a) && whole(b) && BigInt(a as bigint) === BigInt(b as bigint)
  }
  const x = Number(a)
  const y = Number(b)
  if (x === y) return true
  const diff = Math.abs(x - y)
  if (diff <= ABS_TOL) return true
  return diff <= REL_TOL * Math.max(Math.abs(x), Math.abs(y))
}

const DT_RE = /^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?\s*(Z|[+-]\d{2}:?\d{2})?$/i

function parseDateTime(v: unknown): bigint | null {
  if (typeof v !== 'string') return null
  const m = DT_RE.exec(v.trim())
  if (!m) return null
  const [, y, mo, d, h = '0', mi = '0', s = '0', frac = '', tz] = m
  const date = new Date(0)
  date.setUTCFullYear(Number(y), Number(mo) - 1, Number(d))
  date.setUTCHours(Number(h), Number(mi), Number(s), 0)
  const ms = date.getTime()
  if (Number.isNaN(ms)) return null
  let ticks = BigInt(ms) * 10_000n
  if (frac) ticks += BigInt((frac + '0000000').slice(0, 7))
  if (tz && tz.toUpperCase() !== 'Z') {
    const sign = tz[0] === '-' ? -1n : 1n
    const t = tz.slice(1).replace(':', '')
    ticks -= sign * (BigInt(Number(t.slice(0, 2))) * 3600n + BigInt(Number(t.slice(2))) * 60n) * TICKS_PER_SECOND
  }
  return ticks
}

const TS_RE = /^(-)?(?:(\d+)[.:])?(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?$/

function parseTimespan(v: unknown): bigint | null {
  if (typeof v !== 'string') return null
  const m = TS_RE.exec(v.trim())
  if (!m) return null
  const [, neg, d = '0', h, mi, sec, frac = ''] = m
  let t = ((BigInt(d) * 24n + BigInt(h!)) * 3600n + BigInt(mi!) * 60n + BigInt(sec!)) * TICKS_PER_SECOND
  if (frac) t += BigInt((frac + '0000000').slice(0, 7))
  return neg ? -t : t
}

function asBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined
  if (typeof v === 'string') {
    const s = v.trim().toLowerCase()
    if (s === 'true' || s === '1') return true
    if (s === 'false' || s === '0') return false
  }
  return undefined
}

const isEmptyish = (v: unknown): boolean => v === null || v === undefined || v === ''

function tryParse(s: string): unknown {
  const t = s.trim()
  if (!(t.startsWith('[') || t.startsWith('{'))) return undefined
  try {
    return JSON.parse(t)
  } catch {
    return undefined
  }
}

function multisetMatch(expected: readonly unknown[], actual: readonly unknown[], eq: (x: unknown, y: unknown) => boolean): boolean {
  if (expected.length !== actual.length) return false
  const used = new Array<boolean>(actual.length).fill(false)
  for (const e of expected) {
    const j = actual.findIndex((a, k) => !used[k] && eq(e, a))
    if (j < 0) return false
    used[j] = true
  }
  return true
}

function dynEqual(e: unknown, a: unknown, unorderedTop = false): boolean {
  if (e === null || e === undefined) return a === null || a === undefined
  if (a === null || a === undefined) return false
  if (Array.isArray(e)) {
    if (typeof a === 'string') {
      const p = tryParse(a)
      if (p !== undefined) a = p
    }
    if (!Array.isArray(a) || a.length !== e.length) return false
    if (unorderedTop) return multisetMatch(e, a, (x, y) => dynEqual(x, y))
    return e.every((x, i) => dynEqual(x, (a as unknown[])[i]))
  }
  if (typeof e === 'object') {
    if (typeof a === 'string') {
      const p = tryParse(a)
      if (p !== undefined) a = p
    }
    if (typeof a !== 'object' || Array.isArray(a) || a === null) return false
    const eo = e as Record<string, unknown>
    const ao = a as Record<string, unknown>
    const ek = Object.keys(eo)
    if (ek.length !== Object.keys(ao).length) return false
    return ek.every((k) => Object.hasOwn(ao, k) && dynEqual(eo[k], ao[k]))
  }
  if (typeof e === 'number' || typeof e === 'bigint' || specialFloat(e)) {
    const an = specialFloat(a) ? a : asNumber(a)
    if (an === undefined) return false
    return numbersEqual(e, an)
  }
  if (typeof e === 'boolean') return asBool(a) === e
  if (typeof e === 'string') {
    if (typeof a === 'string') {
      if (a === e) return true
      const de = parseDateTime(e)
      const da = parseDateTime(a)
      if (de !== null && da !== null) return de === da
      const te = parseTimespan(e)
      const ta = parseTimespan(a)
      if (te !== null && ta !== null) return te === ta
      return false
    }
    if (typeof a === 'number' || typeof a === 'bigint') {
      const en = asNumber(e)
      return en !== undefined && numbersEqual(en, a)
    }
    if (typeof a === 'boolean') return asBool(e) === a
    return false
  }
  return false
}

function inferType(v: unknown): string {
  if (v === null || v === undefined) return ''
  if (typeof v === 'boolean') return 'bool'
  if (typeof v === 'number' || typeof v === 'bigint') return 'real'
  if (typeof v === 'object') return 'dynamic'
  if (typeof v === 'string') return specialFloat(v) ? 'real' : 'string'
  return ''
}

export function valueEqual(e: unknown, a: unknown, type: string | undefined, unorderedArray: boolean): boolean {
  const t = (type || inferType(e)).toLowerCase()
  switch (t) {
    case 'string':
      if (isEmptyish(e)) return isEmptyish(a)
      return typeof a === 'string' && a === e
    case 'int':
    case 'long':
    case 'real':
    case 'double':
    case 'decimal': {
      if (e === null || e === undefined) return a === null || a === undefined || (typeof a === 'string' && a.trim() === '')
      const an = specialFloat(a) ? a : asNumber(a)
      if (an === undefined) return false
      return numbersEqual(e, an, t === 'int' || t === 'long')
    }
    case 'bool':
    case 'boolean':
      if (e === null || e === undefined) return a === null || a === undefined
      return asBool(a) === e
    case 'datetime':
    case 'date': {
      if (e === null || e === undefined) return a === null || a === undefined || a === ''
      const de = parseDateTime(e)
      const da = parseDateTime(a)
      if (de !== null && da !== null) return de === da
      return e === a
    }
    case 'timespan':
    case 'time': {
      if (e === null || e === undefined) return a === null || a === undefined || a === ''
      const te = parseTimespan(e)
      const ta = parseTimespan(a)
      if (te !== null && ta !== null) return te === ta
      return e === a
    }
    case 'guid':
    case 'uuid':
      if (e === null || e === undefined) return a === null || a === undefined || a === ''
      return typeof a === 'string' && a.toLowerCase() === String(e).toLowerCase()
    default:
      if (t === 'dynamic' && typeof a === 'string' && (e === null || typeof e !== 'string')) {
        const p = tryParse(a)
        if (p !== undefined) a = p
      }
      return dynEqual(e, a, unorderedArray)
  }
}

function show(v: unknown): string {
  return (
    JSON.stringify(v, (_k, x: unknown) =>
      typeof x === 'bigint' ? x.toString() : typeof x === 'number' && !Number.isFinite(x) ? String(x) : x,
    ) ?? String(v)
  )
}

/** undefined when the table matches the case, else a one-line description of the first difference. */
export function compareTable(c: ConformanceCase, table: Table): string | undefined {
  const exp = c.expected
  const types = exp.types ?? []
  const unordered = new Set(c.unorderedArrays ?? [])
  if (table.columns.length !== exp.columns.length || table.columns.some((n, i) => n !== exp.columns[i])) {
    return `columns differ: expected ${show(exp.columns)} got ${show(table.columns)}`
  }
  const rowEq = (er: readonly unknown[], ar: readonly unknown[]): boolean =>
    ar.length === er.length && er.every((e, k) => valueEqual(e, ar[k], types[k], unordered.has(exp.columns[k]!)))
  const act = table.rows
  if (act.length !== exp.rows.length) {
    return `row count differs: expected ${exp.rows.length} got ${act.length}; expected first rows ${show(exp.rows.slice(0, 2))} got ${show(act.slice(0, 2))}`
  }
  if (c.ordered) {
    for (let r = 0; r < exp.rows.length; r++) {
      if (!rowEq(exp.rows[r]!, act[r]!)) return `row ${r} differs (ordered): expected ${show(exp.rows[r])} got ${show(act[r])}`
    }
    return undefined
  }
  const used = new Array<boolean>(act.length).fill(false)
  for (const er of exp.rows) {
    const j = act.findIndex((ar, k) => !used[k] && rowEq(er, ar))
    if (j < 0) {
      return `expected row not found: ${show(er)}; unmatched actual rows: ${show(act.filter((_, k) => !used[k]).slice(0, 3))}`
    }
    used[j] = true
  }
  return undefined
}
