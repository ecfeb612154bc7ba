/**
 * @module
 * Splitting and parsing text (split out of string-functions.ts, issue 19 item 6): split(),
 * parse_csv() (the first CSV record), parse_command_line() (Windows' CommandLineToArgvW rules)
 * and parse_version().
 */
import { constantOf, defineScalar, defineTextFunction, functionError, integerReader, textReader } from './function-definitions.js'

// ---------------------------------------------------------------------------------------------
// splitting and parsing

export const split = defineScalar({
  name: 'split',
  params: ['scalar', 'string', 'integer'],
  min: 2,
  result: 'dynamic',
  bind: (args) => {
    const source = textReader(args, 0)
    const delim = textReader(args, 1)
    const index = args.length > 2 ? integerReader(args, 2) : undefined
    return (values) => {
      const s = source(values),
        d = delim(values)
      const parts = d === '' ? [s] : s.split(d)
      if (!index) return parts
      const k = index(values)
      if (k === null) return null
      const part = parts[k]
      return k >= 0 && part !== undefined ? [part] : []
    }
  },
})

/** The first record of CSV text: fields split on commas, double quotes escape commas, quotes and newlines. */
export function parseCsvRecord(text: string): string[] {
  const fields: string[] = []
  let field = ''
  let quoted = false
  let i = 0
  for (; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"'
          i++
        } else {
          quoted = false
        }
      } else {
        field += c
      }
    } else if (c === '"' && field === '') {
      quoted = true
    } else if (c === ',') {
      fields.push(field)
      field = ''
    } else if (c === '\n' || c === '\r') {
      break
    } else {
      field += c
    }
  }
  fields.push(field)
  return fields
}

export const parseCsv = defineTextFunction({
  name: 'parse_csv',
  result: 'dynamic',
  text: (text) => parseCsvRecord(text),
})

/** Splits a command line the way Windows' CommandLineToArgvW does. */
export function parseWindowsCommandLine(text: string): string[] {
  const out: string[] = []
  let i = 0
  const n = text.length
  while (i < n) {
    while (i < n && (text[i] === ' ' || text[i] === '\t')) i++
    if (i >= n) break
    let arg = ''
    let quoted = false
    while (i < n) {
      const c = text[i]!
      if (!quoted && (c === ' ' || c === '\t')) break
      if (c === '\\') {
        let slashes = 0
        while (text[i] === '\\') {
          slashes++
          i++
        }
        if (text[i] === '"') {
          arg += '\\'.repeat(Math.floor(slashes / 2))
          if (slashes % 2 === 1) {
            arg += '"'
            i++
          }
        } else {
          arg += '\\'.repeat(slashes)
        }
        continue
      }
      if (c === '"') {
        if (quoted && text[i + 1] === '"') {
          arg += '"'
          i += 2
          continue
        }
        quoted = !quoted
        i++
        continue
      }
      arg += c
      i++
    }
    out.push(arg)
  }
  return out
}

export const parseCommandLine = defineScalar({
  name: 'parse_command_line',
  params: ['scalar', 'string'],
  result: 'dynamic',
  bind: (args) => {
    const parser = constantOf(args[1])
    if (parser !== undefined && String(parser).toLowerCase() !== 'windows') {
      throw functionError('parse_command_line', `parser_type must be "windows", got "${String(parser)}"`)
    }
    const read = textReader(args, 0)
    return (values) => parseWindowsCommandLine(read(values))
  },
})

/** parse_version(): up to four dot-separated parts of up to eight digits, as one comparable number. */
export function parseVersion(text: string): number | null {
  const parts = text.trim().split('.')
  if (parts.length < 1 || parts.length > 4) return null
  let value = 0
  for (let k = 0; k < 4; k++) {
    const part = parts[k]
    if (part !== undefined && !/^\d{1,8}$/.test(part)) return null
    value = value * 1e8 + (part === undefined ? 0 : Number(part))
  }
  return value
}

export const parseVersionFn = defineTextFunction({
  name: 'parse_version',
  result: 'decimal',
  text: (text) => parseVersion(text),
})
