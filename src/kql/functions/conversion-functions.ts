/**
 * @module
 * KQL conversion functions (see ./README.md): tostring, toint, tolong, todouble/toreal, tobool,
 * todecimal, toguid, tohex, parse_json/todynamic, parse_xml, gettype and new_guid. The conversion
 * rules themselves live in `convertValue` (value-conversions.ts) because the binder and other
 * families need them too. (todatetime and totimespan belong to datetime-functions.ts.)
 */
import type { Long } from '../long.js'
import type { DynamicValue, KqlType, KqlValue } from '../types.js'
import { defineScalar, integerReader, textReader } from './function-definitions.js'
import type { ScalarFunction } from './function-types.js'
import { convertValue, dynamicTypeName, parseJsonText } from './value-conversions.js'

function converter(name: string, to: KqlType, aliases?: readonly string[]): ScalarFunction {
  return defineScalar({
    name,
    ...(aliases ? { aliases } : {}),
    params: ['scalar'],
    result: to,
    bind: (args) => {
      const from = args[0]!.type
      return (values) => convertValue(to, from, values[0] ?? null)
    },
  })
}

const tohex = defineScalar({
  name: 'tohex',
  params: ['integer', 'integer'],
  min: 1,
  result: 'string',
  bind: (args) => {
    const bits = args[0]!.type === 'int' ? 32 : 64
    // every bit of a long (a bigint beyond 2^53); dynamic numbers are doubles
    const value = args[0]!.type === 'dynamic' ? integerReader(args, 0) : (values: readonly KqlValue[]) => (values[0] ?? null) as Long | null
    const minLength = integerReader(args, 1, 0)
    return (values) => {
      const v = value(values)
      if (v === null) return null
      const unsigned = BigInt.asUintN(bits, typeof v === 'bigint' ? v : BigInt(Math.trunc(v)))
      const width = Math.min(Math.max(minLength(values) ?? 0, 0), 16)
      return unsigned.toString(16).padStart(width, '0')
    }
  },
})

/** parse_json(): dynamic passes through; JSON text parses; other text stays a dynamic string; "" is null. */
export function parseJsonValue(type: KqlType, value: KqlValue): DynamicValue {
  if (value === null || value === undefined) return null
  if (type === 'dynamic') return value as DynamicValue
  if (type !== 'string') return convertValue('dynamic', type, value) as DynamicValue
  const text = value as string
  if (text.trim() === '') return null
  const parsed = parseJsonText(text)
  return parsed === undefined ? text : parsed
}

const parseJson = defineScalar({
  name: 'parse_json',
  aliases: ['todynamic', 'toobject', 'parsejson'],
  params: ['scalar'],
  result: 'dynamic',
  bind: (args) => {
    const type = args[0]!.type
    return (values) => parseJsonValue(type, values[0] ?? null)
  },
})

// ---------------------------------------------------------------------------------------------
// parse_xml: XML → JSON with the usual conventions (`@attr`, `#text`, repeated names → arrays)

interface XmlElement {
  readonly name: string
  readonly attributes: [string, string][]
  readonly children: (XmlElement | string)[]
}

const ENTITIES: Readonly<Record<string, string>> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
    if (e[0] === '#') {
      const code = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)
      return Number.isFinite(code) && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return ENTITIES[e] ?? whole
  })
}

/** A small, strict XML parser: elements, attributes, text and CDATA; declarations, comments and DOCTYPE are skipped. */
export function parseXmlDocument(text: string): XmlElement | null {
  let i = 0
  const n = text.length
  const fail = (): never => {
    throw new Error('invalid xml')
  }
  const skipMisc = (): void => {
    for (;;) {
      while (i < n && /\s/.test(text[i]!)) i++
      if (text.startsWith('<?', i)) {
        const end = text.indexOf('?>', i)
        if (end < 0) fail()
        i = end + 2
      } else if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i)
        if (end < 0) fail()
        i = end + 3
      } else if (text.startsWith('<!DOCTYPE', i) || text.startsWith('<!doctype', i)) {
        let depth = 0
        for (; i < n; i++) {
          if (text[i] === '[') depth++
          else if (text[i] === ']') depth--
          else if (text[i] === '>' && depth <= 0) break
        }
        i++
      } else {
        return
      }
    }
  }
  const NAME = /^[A-Za-z_:][\w:.-]*/
  const parseElement = (): XmlElement => {
    if (text[i] !== '<') fail()
    i++
    const nameMatch = NAME.exec(text.slice(i, i + 256))
    if (!nameMatch) fail()
    const name = nameMatch![0]
    i += name.length
    const attributes: [string, string][] = []
    for (;;) {
      while (i < n && /\s/.test(text[i]!)) i++
      if (text.startsWith('/>', i)) {
        i += 2
        return { name, attributes, children: [] }
      }
      if (text[i] === '>') {
        i++
        break
      }
      const attr = NAME.exec(text.slice(i, i + 256))
      if (!attr) fail()
      i += attr![0].length
      while (i < n && /\s/.test(text[i]!)) i++
      if (text[i] !== '=') fail()
      i++
      while (i < n && /\s/.test(text[i]!)) i++
      const quote = text[i]
      if (quote !== '"' && quote !== "'") fail()
      const end = text.indexOf(quote!, i + 1)
      if (end < 0) fail()
      attributes.push([attr![0], decodeEntities(text.slice(i + 1, end))])
      i = end + 1
    }
    const children: (XmlElement | string)[] = []
    for (;;) {
      if (i >= n) fail()
      if (text.startsWith('</', i)) {
        i += 2
        if (!text.startsWith(name, i)) fail()
        i += name.length
        while (i < n && /\s/.test(text[i]!)) i++
        if (text[i] !== '>') fail()
        i++
        return { name, attributes, children }
      }
      if (text.startsWith('<![CDATA[', i)) {
        const end = text.indexOf(']]>', i)
        if (end < 0) fail()
        children.push(text.slice(i + 9, end))
        i = end + 3
      } else if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i)
        if (end < 0) fail()
        i = end + 3
      } else if (text.startsWith('<?', i)) {
        const end = text.indexOf('?>', i)
        if (end < 0) fail()
        i = end + 2
      } else if (text[i] === '<') {
        children.push(parseElement())
      } else {
        const end = text.indexOf('<', i)
        if (end < 0) fail()
        children.push(decodeEntities(text.slice(i, end)))
        i = end
      }
    }
  }
  try {
    skipMisc()
    const root = parseElement()
    skipMisc()
    return i >= n ? root : null
  } catch {
    return null
  }
}

function xmlToJson(e: XmlElement): DynamicValue {
  const texts = e.children.filter((c): c is string => typeof c === 'string' && c.trim() !== '').map((t) => t.trim())
  const elements = e.children.filter((c): c is XmlElement => typeof c !== 'string')
  if (e.attributes.length === 0 && elements.length === 0) {
    if (texts.length === 0) return null
    return texts.length === 1 ? texts[0]! : texts
  }
  const out: Record<string, DynamicValue> = {}
  for (const [k, v] of e.attributes) out[`@${k}`] = v
  if (texts.length > 0) out['#text'] = texts.length === 1 ? texts[0]! : texts
  const groups = new Map<string, DynamicValue[]>()
  for (const child of elements) {
    const list = groups.get(child.name) ?? []
    list.push(xmlToJson(child))
    groups.set(child.name, list)
  }
  for (const [name, list] of groups) out[name] = list.length === 1 ? list[0]! : list
  return out
}

const parseXml = defineScalar({
  name: 'parse_xml',
  params: ['string'],
  result: 'dynamic',
  bind: (args) => {
    const read = textReader(args, 0)
    return (values) => {
      const text = read(values)
      if (text.length > 1_048_576) return null
      const root = parseXmlDocument(text)
      return root === null ? null : { [root.name]: xmlToJson(root) }
    }
  },
})

const gettype = defineScalar({
  name: 'gettype',
  params: ['scalar'],
  result: 'string',
  bind: (args) => {
    const type = args[0]!.type
    if (type !== 'dynamic') return () => type
    return (values) => dynamicTypeName((values[0] ?? null) as DynamicValue)
  },
})

const newGuid = defineScalar({
  name: 'new_guid',
  params: [],
  result: 'guid',
  deterministic: false,
  bind: () => (_values, ctx) => {
    const bytes = Array.from({ length: 16 }, () => Math.floor(ctx.random() * 256) & 0xff)
    bytes[6] = (bytes[6]! & 0x0f) | 0x40 // version 4
    bytes[8] = (bytes[8]! & 0x3f) | 0x80 // RFC 4122 variant
    const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('')
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
  },
})

export const conversionFunctions: readonly ScalarFunction[] = [
  converter('tostring', 'string'),
  converter('toint', 'int'),
  converter('tolong', 'long'),
  converter('todouble', 'real', ['toreal']),
  converter('tobool', 'bool', ['toboolean']),
  converter('todecimal', 'decimal'),
  converter('toguid', 'guid'),
  tohex,
  parseJson,
  parseXml,
  gettype,
  newGuid,
]
