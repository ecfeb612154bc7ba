/**
 * @module
 * KQL string functions (see ./README.md). Arguments Kusto documents as "forcibly converted to
 * string" accept any type and go through `valueToString`; regular expressions are RE2 patterns
 * (./regex.ts: RE2, linear time) compiled once per call site when they are constant.
 */
import { parseDynamicJson } from '../dynamic-json.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import {
  constantOf,
  defineScalar,
  defineTextFunction,
  dynamicReader,
  functionError,
  integerReader,
  numberReader,
  textReader,
  typeLiteralArg,
} from './function-definitions.js'
import type { ArgInfo, ScalarFunction } from './function-types.js'
import { punycodeDomainFromString, punycodeDomainToString, punycodeFromString, punycodeToString } from './punycode-functions.js'
import { compileRegex, type KqlRegex, type RegexMatch } from './regex.js'
import { parseCommandLine, parseCsv, parseVersionFn, split } from './text-parsing-functions.js'
import { codePoints, convertValue, dynamicToJson, dynamicToText, hasTerm, valueToString } from './value-conversions.js'

/** Compiles a regex argument once when it is constant, else per distinct value (cached). */
function regexArg(name: string, args: readonly ArgInfo[], i: number): (values: readonly KqlValue[]) => KqlRegex {
  const arg = args[i]!
  const constant = constantOf(arg)
  if (constant !== undefined) {
    const re = compileRegex(valueToString(arg.type, constant), '', name)
    return () => re
  }
  const read = textReader(args, i)
  return (values) => compileRegex(read(values), '', name)
}

// ---------------------------------------------------------------------------------------------
// concatenation

const strcat = defineScalar({
  name: 'strcat',
  params: ['scalar'],
  min: 1,
  max: 64,
  result: 'string',
  bind: (args) => {
    const readers = args.map((_, i) => textReader(args, i))
    return (values) => readers.map((r) => r(values)).join('')
  },
})

const strcatDelim = defineScalar({
  name: 'strcat_delim',
  params: ['scalar'],
  min: 3,
  max: 65,
  result: 'string',
  bind: (args) => {
    const readers = args.map((_, i) => textReader(args, i))
    return (values) =>
      readers
        .slice(1)
        .map((r) => r(values))
        .join(readers[0]!(values))
  },
})

function strcatArrayDef(name: string): ScalarFunction {
  return defineScalar({
    name,
    params: ['dynamic', 'scalar'],
    result: 'string',
    bind: (args) => {
      const array = dynamicReader(args, 0)
      const delim = textReader(args, 1)
      return (values) => {
        const a = array(values)
        if (!Array.isArray(a)) return ''
        return a.map((v) => dynamicToText(v)).join(delim(values))
      }
    },
  })
}

const strrep = defineScalar({
  name: 'strrep',
  params: ['scalar', 'integer', 'scalar'],
  min: 2,
  result: 'string',
  bind: (args) => {
    const value = textReader(args, 0)
    const times = integerReader(args, 1)
    const delim = textReader(args, 2)
    return (values) => {
      const n = times(values)
      if (n === null || n < 1) return ''
      return new Array<string>(Math.min(n, 1024)).fill(value(values)).join(delim(values))
    }
  },
})

// ---------------------------------------------------------------------------------------------
// length, case, substrings

const strlen = defineTextFunction({
  name: 'strlen',
  result: 'long',
  text: (text) => codePoints(text).length,
})

const stringSize = defineTextFunction({
  name: 'string_size',
  result: 'long',
  text: (text) => Buffer.byteLength(text, 'utf8'),
})

const toupper = defineTextFunction({
  name: 'toupper',
  param: 'scalar',
  result: 'string',
  text: (text) => text.toUpperCase(),
})

const tolower = defineTextFunction({
  name: 'tolower',
  param: 'scalar',
  result: 'string',
  text: (text) => text.toLowerCase(),
})

const substring = defineScalar({
  name: 'substring',
  params: ['scalar', 'integer', 'integer'],
  min: 2,
  result: 'string',
  bind: (args) => {
    const source = textReader(args, 0)
    const start = integerReader(args, 1)
    const length = integerReader(args, 2, Infinity)
    return (values) => {
      const s = source(values)
      let from = start(values)
      const len = length(values)
      if (from === null || len === null || len < 0) return ''
      if (from < 0) from = Math.max(0, s.length + from)
      if (from >= s.length) return ''
      return s.slice(from, len === Infinity ? undefined : from + len)
    }
  },
})

const reverse = defineTextFunction({
  name: 'reverse',
  param: 'scalar',
  result: 'string',
  text: (text) => codePoints(text).reverse().join(''),
})

const strcmp = defineScalar({
  name: 'strcmp',
  params: ['scalar', 'scalar'],
  result: 'long',
  bind: (args) => {
    const a = textReader(args, 0)
    const b = textReader(args, 1)
    return (values) => {
      const x = a(values),
        y = b(values)
      return x < y ? -1 : x > y ? 1 : 0
    }
  },
})

// ---------------------------------------------------------------------------------------------
// trimming

function trimDef(name: string, start: boolean, end: boolean): ScalarFunction {
  return defineScalar({
    name,
    params: ['string', 'scalar'],
    result: 'string',
    bind: (args) => {
      const arg = args[0]!
      const build = (pattern: string): KqlRegex[] => {
        // validate the pattern itself first so the error names the user's regex
        compileRegex(pattern, '', name)
        const out: KqlRegex[] = []
        if (start) out.push(compileRegex(`^(?:${pattern})+`, '', name))
        if (end) out.push(compileRegex(`(?:${pattern})+$`, '', name))
        return out
      }
      const constant = constantOf(arg)
      const fixed = constant === undefined ? undefined : build(valueToString(arg.type, constant))
      const pattern = textReader(args, 0)
      const source = textReader(args, 1)
      return (values) => {
        let s = source(values)
        const res = fixed ?? build(pattern(values))
        for (const re of res) {
          const m = re.exec(s)
          if (m) s = s.slice(0, m.index) + s.slice(m.index + m[0].length)
        }
        return s
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// search and replace

const replaceString = defineScalar({
  name: 'replace_string',
  params: ['scalar', 'scalar', 'scalar'],
  result: 'string',
  bind: (args) => {
    const text = textReader(args, 0)
    const lookup = textReader(args, 1)
    const rewrite = textReader(args, 2)
    return (values) => {
      const s = text(values),
        l = lookup(values)
      return l === '' ? s : s.split(l).join(rewrite(values))
    }
  },
})

const replaceStrings = defineScalar({
  name: 'replace_strings',
  params: ['scalar', 'dynamic', 'dynamic'],
  result: 'string',
  bind: (args) => {
    const text = textReader(args, 0)
    const lookups = dynamicReader(args, 1)
    const rewrites = dynamicReader(args, 2)
    return (values) => replaceMany(text(values), lookups(values), rewrites(values))
  },
})

/**
 * Kusto's replace_strings(): earlier lookups take precedence over later ones wherever matches
 * overlap; a match whose rewrite is not a string keeps its original text.
 */
function replaceMany(text: string, lookups: DynamicValue, rewrites: DynamicValue): string {
  if (!Array.isArray(lookups)) return text
  const rw = Array.isArray(rewrites) ? rewrites : []
  const taken: { start: number; end: number; rewrite: string | null }[] = []
  lookups.forEach((lookup, k) => {
    if (typeof lookup !== 'string' || lookup === '') return
    const rewrite = rw[k]
    let from = 0
    for (;;) {
      const at = text.indexOf(lookup, from)
      if (at < 0) break
      const end = at + lookup.length
      if (!taken.some((t) => at < t.end && end > t.start)) {
        taken.push({ start: at, end, rewrite: typeof rewrite === 'string' ? rewrite : null })
        from = end
      } else {
        from = at + 1
      }
    }
  })
  taken.sort((a, b) => a.start - b.start)
  let out = ''
  let pos = 0
  for (const t of taken) {
    out += text.slice(pos, t.start) + (t.rewrite ?? text.slice(t.start, t.end))
    pos = t.end
  }
  return out + text.slice(pos)
}

/** Expands an RE2 rewrite (`\0`..`\9` for groups, `\\` for a backslash) for one match. */
function expandRewrite(rewrite: string, match: RegexMatch): string {
  let out = ''
  for (let i = 0; i < rewrite.length; i++) {
    const c = rewrite[i]!
    if (c === '\\' && i + 1 < rewrite.length) {
      const d = rewrite[i + 1]!
      if (d >= '0' && d <= '9') {
        out += match[Number(d)] ?? ''
        i++
        continue
      }
      if (d === '\\') {
        out += '\\'
        i++
        continue
      }
    }
    out += c
  }
  return out
}

function regexReplaceAll(text: string, re: KqlRegex, rewrite: string): string {
  let out = ''
  let pos = 0
  for (const m of re.matchAll(text)) {
    out += text.slice(pos, m.index) + expandRewrite(rewrite, m)
    pos = m.index + m[0].length
  }
  return out + text.slice(pos)
}

const replaceRegex = defineScalar({
  name: 'replace_regex',
  params: ['scalar', 'string', 'scalar'],
  result: 'string',
  bind: (args) => {
    const text = textReader(args, 0)
    const re = regexArg('replace_regex', args, 1)
    const rewrite = textReader(args, 2)
    return (values) => regexReplaceAll(text(values), re(values), rewrite(values))
  },
})

/** The deprecated replace(regex, rewrite, text). */
const replaceLegacy = defineScalar({
  name: 'replace',
  params: ['string', 'scalar', 'scalar'],
  result: 'string',
  bind: (args) => {
    const re = regexArg('replace', args, 0)
    const rewrite = textReader(args, 1)
    const text = textReader(args, 2)
    return (values) => regexReplaceAll(text(values), re(values), rewrite(values))
  },
})

const translate = defineScalar({
  name: 'translate',
  params: ['scalar', 'scalar', 'scalar'],
  result: 'string',
  bind: (args) => {
    const search = textReader(args, 0)
    const replacement = textReader(args, 1)
    const source = textReader(args, 2)
    return (values) => {
      const from = codePoints(search(values))
      const to = codePoints(replacement(values))
      let out = ''
      for (const c of source(values)) {
        const k = from.indexOf(c)
        if (k < 0) out += c
        else if (to.length > 0) out += to[Math.min(k, to.length - 1)]
      }
      return out
    }
  },
})

/** Search window of indexof()/indexof_regex(): start offset, examined length (-1 = unlimited) and occurrence. */
interface SearchWindow {
  readonly start: number
  readonly length: number
  readonly occurrence: number
}

function readWindow(args: readonly ArgInfo[]): (values: readonly KqlValue[]) => SearchWindow | null {
  const start = integerReader(args, 2, 0)
  const length = integerReader(args, 3, -1)
  const occurrence = integerReader(args, 4, 1)
  return (values) => {
    const s = start(values),
      l = length(values),
      o = occurrence(values)
    if (s === null || l === null || o === null || l < -1 || o < 0) return null
    return { start: s, length: l, occurrence: o === 0 ? 1 : o }
  }
}

const indexof = defineScalar({
  name: 'indexof',
  params: ['scalar', 'scalar', 'integer', 'integer', 'integer'],
  min: 2,
  result: 'long',
  bind: (args) => {
    const source = textReader(args, 0)
    const lookup = textReader(args, 1)
    const window = readWindow(args)
    return (values) => {
      const s = source(values),
        m = lookup(values),
        w = window(values)
      if (w === null) return null
      let from = w.start < 0 ? s.length + w.start : w.start
      if (from < 0) return null
      if (from > s.length) return -1
      // each search examines `length` characters from where it starts (Kusto's documented results)
      for (let k = 0; k < w.occurrence; k++) {
        const limit = w.length === -1 ? s.length : Math.min(s.length, from + w.length)
        const at = s.slice(0, limit).indexOf(m, from)
        if (at < 0 || at + m.length > limit) return -1
        if (k === w.occurrence - 1) return at
        from = at + 1
      }
      return -1
    }
  },
})

const indexofRegex = defineScalar({
  name: 'indexof_regex',
  params: ['scalar', 'string', 'integer', 'integer', 'integer'],
  min: 2,
  result: 'long',
  bind: (args) => {
    const source = textReader(args, 0)
    const re = regexArg('indexof_regex', args, 1)
    const window = readWindow(args)
    return (values) => {
      const s = source(values),
        w = window(values)
      if (w === null || w.start < 0) return null
      if (w.start > s.length) return -1
      const region = w.length === -1 ? s.slice(w.start) : s.slice(w.start, w.start + w.length)
      let count = 0
      for (const m of re(values).matchAll(region)) {
        if (++count === w.occurrence) return w.start + m.index
      }
      return -1
    }
  },
})

const countof = defineScalar({
  name: 'countof',
  params: ['scalar', 'scalar', 'string'],
  min: 2,
  result: 'long',
  bind: (args) => {
    const kindArg = args[2]
    const kindConst = kindArg === undefined ? 'normal' : constantOf(kindArg)
    if (kindConst === undefined) throw functionError('countof', 'kind (argument #3) must be a constant')
    const kind = valueToString('string', kindConst)
    if (kind !== 'normal' && kind !== 'regex') throw functionError('countof', `kind must be "normal" or "regex", got "${kind}"`)
    const source = textReader(args, 0)
    if (kind === 'regex') {
      const re = regexArg('countof', args, 1)
      return (values) => re(values).matchAll(source(values)).length
    }
    const search = textReader(args, 1)
    return (values) => {
      const s = source(values),
        l = search(values)
      if (l === '') return 0
      let n = 0
      for (let at = s.indexOf(l); at >= 0; at = s.indexOf(l, at + 1)) n++
      return n
    }
  },
})

const hasAnyIndex = defineScalar({
  name: 'has_any_index',
  params: ['string', 'dynamic'],
  result: 'long',
  bind: (args) => {
    const source = textReader(args, 0)
    const lookups = dynamicReader(args, 1)
    return (values) => {
      const s = source(values),
        l = lookups(values)
      if (!Array.isArray(l)) return -1
      for (let k = 0; k < l.length; k++) {
        const term = dynamicToText(l[k] ?? null)
        if (term !== '' && hasTerm(s, term)) return k
      }
      return -1
    }
  },
})

// ---------------------------------------------------------------------------------------------
// regex extraction

function resultTypeFromLiteral(name: string, args: readonly ArgInfo[], index: number): KqlType {
  return args.length > index ? typeLiteralArg(name, args[index]) : 'string'
}

function extractDef(): ScalarFunction {
  return defineScalar({
    name: 'extract',
    params: ['string', 'integer', 'scalar', 'string'],
    min: 3,
    result: (args) => resultTypeFromLiteral('extract', args, 3),
    bind: (args) => {
      const re = regexArg('extract', args, 0)
      const group = integerReader(args, 1)
      const source = textReader(args, 2)
      const target = resultTypeFromLiteral('extract', args, 3)
      return (values) => {
        const g = group(values)
        const m = g === null || g < 0 ? null : re(values).exec(source(values))
        const text = m?.[g!]
        if (text === undefined || text === null) return target === 'string' ? '' : null
        return target === 'string' ? text : convertValue(target, 'string', text)
      }
    },
  })
}

/** Capture-group selectors of extract_all(): numbers (1-based) or group names. */
function groupSelectors(groups: DynamicValue): (string | number)[] | null {
  if (!Array.isArray(groups)) return null
  const out: (string | number)[] = []
  for (const g of groups) {
    if (typeof g === 'number' && Number.isInteger(g)) out.push(g)
    else if (typeof g === 'string' && /^\d+$/.test(g)) out.push(Number(g))
    else if (typeof g === 'string') out.push(g)
    else return null
  }
  return out
}

function extractAllDef(name: string): ScalarFunction {
  return defineScalar({
    name,
    params: ['string', 'scalar', 'scalar'],
    min: 2,
    max: 3,
    result: 'dynamic',
    bind: (args) => {
      const re = regexArg(name, args, 0)
      const hasGroups = args.length === 3
      if (hasGroups && args[1]!.type !== 'dynamic')
        throw functionError(name, `captureGroups (argument #2) must be a dynamic array, got ${args[1]!.type}`)
      const groupsRead = hasGroups ? dynamicReader(args, 1) : undefined
      const source = textReader(args, hasGroups ? 2 : 1)
      return (values) => {
        const g = re(values)
        const count = g.groupCount
        let selectors: (string | number)[]
        if (groupsRead) {
          const sel = groupSelectors(groupsRead(values))
          if (sel === null) return null
          selectors = sel
        } else {
          selectors = count === 0 ? [0] : Array.from({ length: count }, (_, k) => k + 1)
        }
        const rows: DynamicValue[] = []
        for (const m of g.matchAll(source(values))) {
          const picked = selectors.map((sel) => (typeof sel === 'number' ? m[sel] : m.groups?.[sel]) ?? '')
          rows.push(selectors.length === 1 ? picked[0]! : picked)
        }
        return rows.length === 0 ? null : rows
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// JSON path extraction

/** Steps of a Kusto JSONPath: `$`, `.name`, `['name']`, `["name"]`, `[index]`. */
function parseJsonPath(path: string): (string | number)[] | null {
  const s = path.trim()
  if (!s.startsWith('$')) return null
  const steps: (string | number)[] = []
  let i = 1
  while (i < s.length) {
    if (s[i] === '.') {
      const m = /^\.([^.[\]]+)/.exec(s.slice(i))
      if (!m) return null
      steps.push(m[1]!)
      i += m[0].length
    } else if (s[i] === '[') {
      const m = /^\[\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|(-?\d+))\s*\]/.exec(s.slice(i))
      if (!m) return null
      steps.push(m[3] !== undefined ? Number(m[3]) : (m[1] ?? m[2])!)
      i += m[0].length
    } else {
      return null
    }
  }
  return steps
}

function walkJson(value: DynamicValue, steps: readonly (string | number)[]): DynamicValue | undefined {
  let cur: DynamicValue | undefined = value
  for (const step of steps) {
    if (cur === null || cur === undefined || typeof cur !== 'object') return undefined
    if (Array.isArray(cur)) {
      if (typeof step !== 'number') return undefined
      cur = cur[step < 0 ? cur.length + step : step]
    } else {
      cur = (cur as Record<string, DynamicValue>)[String(step)]
    }
  }
  return cur
}

function extractJsonDef(name: string): ScalarFunction {
  return defineScalar({
    name,
    params: ['string', 'scalar', 'string'],
    min: 2,
    result: (args) => resultTypeFromLiteral(name, args, 2),
    bind: (args) => {
      const pathArg = args[0]!
      const pathConst = constantOf(pathArg)
      const fixed = pathConst === undefined ? undefined : parseJsonPath(valueToString(pathArg.type, pathConst))
      if (pathConst !== undefined && fixed === null)
        throw functionError(name, `invalid JSONPath ${JSON.stringify(valueToString(pathArg.type, pathConst))}`)
      const pathRead = textReader(args, 0)
      const source = textReader(args, 1)
      const target = resultTypeFromLiteral(name, args, 2)
      return (values) => {
        const steps = fixed ?? parseJsonPath(pathRead(values))
        let doc: DynamicValue
        try {
          doc = parseDynamicJson(source(values))
        } catch {
          return target === 'string' ? '' : null
        }
        const found = steps === null ? undefined : walkJson(doc, steps)
        if (found === undefined || found === null) return target === 'string' ? '' : null
        if (target === 'dynamic') return found
        if (target === 'string') return typeof found === 'string' ? found : dynamicToJson(found)
        return convertValue(target, 'dynamic', found)
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// characters and code points

const isascii = defineTextFunction({
  name: 'isascii',
  param: 'scalar',
  result: 'bool',
  text: (text) => /^[\x00-\x7f]*$/.test(text),
})

const isutf8 = defineScalar({
  name: 'isutf8',
  params: ['scalar'],
  result: 'bool',
  bind: (args) => {
    const read = textReader(args, 0)
    // a JavaScript string is valid UTF-8 unless it holds an unpaired surrogate
    return (values) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(read(values))
  },
})

const codepointsFromString = defineTextFunction({
  name: 'unicode_codepoints_from_string',
  aliases: ['to_utf8'],
  param: 'scalar',
  result: 'dynamic',
  text: (text) => codePoints(text).map((c) => c.codePointAt(0)!),
})

const codepointsToString = defineScalar({
  name: 'unicode_codepoints_to_string',
  aliases: ['make_string'],
  params: ['scalar'],
  min: 1,
  max: 64,
  result: 'string',
  bind: (args) => {
    for (let i = 0; i < args.length; i++) {
      const t = args[i]!.type
      if (t !== 'int' && t !== 'long' && t !== 'dynamic')
        throw functionError('unicode_codepoints_to_string', `argument #${i + 1} (${args[i]!.text}) must be int, long or dynamic, got ${t}`)
    }
    return (values) => {
      const points: number[] = []
      const add = (v: unknown): boolean => {
        if (v === null || v === undefined) return false
        if (Array.isArray(v)) return v.every(add)
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return false
        points.push(v)
        return true
      }
      for (const v of values) if (!add(v)) return ''
      return String.fromCodePoint(...points)
    }
  },
})

const regexQuote = defineScalar({
  name: 'regex_quote',
  params: ['scalar'],
  result: 'string',
  bind: (args) => {
    const read = textReader(args, 0)
    return (values) =>
      read(values).replace(/[\\^$.|?*+()[\]{}\-#\s]/g, (c) => (c === '\n' ? '\\n' : c === '\t' ? '\\t' : c === '\r' ? '\\r' : '\\' + c))
  },
})

// ---------------------------------------------------------------------------------------------
// formatting

const BYTE_UNITS = ['Bytes', 'KB', 'MB', 'GB', 'TB', 'PB', 'EB'] as const

/** Rounds half away from zero to `digits` decimals and prints without trailing zeros. */
function roundTo(value: number, digits: number): string {
  const factor = 10 ** digits
  const r = (Math.sign(value) * Math.round(Math.abs(value) * factor + 1e-9)) / factor
  return String(Number(r.toFixed(digits)))
}

const formatBytes = defineScalar({
  name: 'format_bytes',
  params: ['number', 'integer', 'string'],
  min: 1,
  result: 'string',
  bind: (args) => {
    const size = numberReader(args, 0)
    const precision = integerReader(args, 1, 0)
    const unitsConst = args[2] === undefined ? '' : constantOf(args[2])
    if (unitsConst === undefined) throw functionError('format_bytes', 'units (argument #3) must be a constant')
    const unitText = valueToString('string', unitsConst)
    const fixedUnit = unitText === '' ? -1 : BYTE_UNITS.findIndex((u) => u.toLowerCase() === unitText.toLowerCase())
    if (unitText !== '' && fixedUnit < 0)
      throw functionError('format_bytes', `units must be one of ${BYTE_UNITS.join(', ')}, got "${unitText}"`)
    return (values) => {
      const v = size(values)
      const p = precision(values)
      if (v === null || !Number.isFinite(v) || p === null) return ''
      let unit = fixedUnit
      if (unit < 0) {
        unit = 0
        while (unit < BYTE_UNITS.length - 1 && Math.abs(v) >= 1024 ** (unit + 1)) unit++
      }
      return `${roundTo(v / 1024 ** unit, Math.max(0, p))} ${BYTE_UNITS[unit]}`
    }
  },
})

export const stringFunctions: readonly ScalarFunction[] = [
  strcat,
  strcatDelim,
  strcatArrayDef('strcat_array'),
  strcatArrayDef('array_strcat'),
  strrep,
  strlen,
  stringSize,
  toupper,
  tolower,
  substring,
  reverse,
  strcmp,
  trimDef('trim', true, true),
  trimDef('trim_start', true, false),
  trimDef('trim_end', false, true),
  replaceString,
  replaceStrings,
  replaceRegex,
  replaceLegacy,
  translate,
  indexof,
  indexofRegex,
  countof,
  hasAnyIndex,
  extractDef(),
  extractAllDef('extract_all'),
  extractAllDef('extractall'),
  extractJsonDef('extract_json'),
  extractJsonDef('extractjson'),
  split,
  parseCsv,
  parseCommandLine,
  parseVersionFn,
  isascii,
  isutf8,
  codepointsFromString,
  codepointsToString,
  regexQuote,
  punycodeFromString,
  punycodeToString,
  punycodeDomainToString,
  punycodeDomainFromString,
  formatBytes,
]
