/**
 * @module
 * KQL encoding functions (see ./README.md): base64 (strings, byte arrays, guids in .NET byte
 * order), URL encoding/decoding (.NET HttpUtility style: lower-case hex, `+` for spaces in
 * url_encode), URL/query/path parsing, and zlib/gzip compression to base64. Compression writes
 * stored (level 0) deflate blocks and a gzip header with OS=255, which reproduces the
 * documented outputs byte for byte; decompression accepts any valid stream.
 */
import { deflateRawSync, deflateSync, inflateRawSync, inflateSync } from 'node:zlib'
import type { DynamicValue } from '../types.js'
import { defineScalar, defineTextFunction, dynamicReader, functionError } from './function-definitions.js'
import type { ScalarFunction } from './function-types.js'
import { crc32 } from './hash-functions.js'
import { guidToBytes } from './value-conversions.js'

const UTF8 = new TextDecoder('utf-8', { fatal: true })

/** Strict base64 (standard alphabet, padded); null when the text is not base64. */
export function decodeBase64(text: string): Buffer | null {
  const s = text.trim()
  if (s.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(s)) return null
  return Buffer.from(s, 'base64')
}

/** Bytes as UTF-8 text, or null when they are not valid UTF-8. */
function utf8(bytes: Uint8Array): string | null {
  try {
    return UTF8.decode(bytes)
  } catch {
    return null
  }
}

/**
 * The guid base64_decode_toguid() reports for 16 bytes. Kusto's documented result reverses the
 * first two groups but not the third (`JpbpECu8dUy7Pv5gbeJXAA==` → `10e99626-bc2b-754c-...`),
 * unlike .NET's byte order used by base64_encode_fromguid(); this follows the documentation.
 */
function bytesToGuid(bytes: Buffer): string {
  const b = Buffer.from(bytes)
  b.subarray(0, 4).reverse()
  b.subarray(4, 6).reverse()
  const h = b.toString('hex')
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

const base64EncodeToString = defineTextFunction({
  name: 'base64_encode_tostring',
  aliases: ['base64_encodestring'],
  result: 'string',
  text: (text) => Buffer.from(text, 'utf8').toString('base64'),
})

const base64DecodeToString = defineTextFunction({
  name: 'base64_decode_tostring',
  aliases: ['base64_decodestring'],
  result: 'string',
  text: (text) => {
    const bytes = decodeBase64(text)
    return bytes === null ? '' : (utf8(bytes) ?? '')
  },
})

const base64DecodeToArray = defineTextFunction({
  name: 'base64_decode_toarray',
  result: 'dynamic',
  text: (text) => {
    const bytes = decodeBase64(text)
    return bytes === null ? null : [...bytes]
  },
})

const base64EncodeFromArray = defineScalar({
  name: 'base64_encode_fromarray',
  params: ['dynamic'],
  result: 'string',
  bind: (args) => {
    const read = dynamicReader(args, 0)
    return (values) => {
      const a = read(values)
      if (!Array.isArray(a)) return ''
      if (!a.every((v) => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 255)) return ''
      return Buffer.from(a as number[]).toString('base64')
    }
  },
})

const base64EncodeFromGuid = defineScalar({
  name: 'base64_encode_fromguid',
  params: ['guid'],
  result: 'string',
  bind: (args) => {
    // Kusto rejects a string here: the argument must already be a guid
    if (args[0]!.type === 'string')
      throw functionError('base64_encode_fromguid', `argument #1 (${args[0]!.text}) must be a guid, got string`)
    return (values) => {
      const g = values[0]
      if (typeof g !== 'string' || !/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(g)) return ''
      return guidToBytes(g.toLowerCase()).toString('base64')
    }
  },
})

const base64DecodeToGuid = defineTextFunction({
  name: 'base64_decode_toguid',
  result: 'guid',
  text: (text) => {
    const bytes = decodeBase64(text)
    return bytes === null || bytes.length !== 16 ? null : bytesToGuid(bytes)
  },
})

// ---------------------------------------------------------------------------------------------
// URLs

/** .NET HttpUtility.UrlEncode: unreserved `A-Za-z0-9-_.!*()` kept, the rest UTF-8 %xx in lower case. */
function urlEncode(text: string, space: string): string {
  let out = ''
  for (const byte of Buffer.from(text, 'utf8')) {
    const c = String.fromCharCode(byte)
    if (/[A-Za-z0-9\-_.!*()]/.test(c)) out += c
    else if (c === ' ') out += space
    else out += '%' + byte.toString(16).padStart(2, '0')
  }
  return out
}

/** Percent-decoding (UTF-8, `+` as space); malformed escapes stay as they are. */
export function urlDecode(text: string): string {
  const chunks: Buffer[] = []
  let plain = ''
  const flush = (): void => {
    if (plain !== '') chunks.push(Buffer.from(plain, 'utf8'))
    plain = ''
  }
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (c === '%' && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 1, i + 3))) {
      flush()
      chunks.push(Buffer.from([parseInt(text.slice(i + 1, i + 3), 16)]))
      i += 2
    } else {
      plain += c === '+' ? ' ' : c
    }
  }
  flush()
  return Buffer.concat(chunks).toString('utf8')
}

const urlEncodeFn = defineTextFunction({
  name: 'url_encode',
  result: 'string',
  text: (text) => urlEncode(text, '+'),
})

const urlEncodeComponent = defineTextFunction({
  name: 'url_encode_component',
  result: 'string',
  text: (text) => urlEncode(text, '%20'),
})

const urlDecodeFn = defineTextFunction({
  name: 'url_decode',
  result: 'string',
  text: (text) => urlDecode(text),
})

/** `k1=v1&k2=v2` → { k1: 'v1', k2: 'v2' } (keys and values percent-decoded). */
function parseQueryString(query: string): Record<string, DynamicValue> {
  const out: Record<string, DynamicValue> = {}
  for (const part of query.split('&')) {
    if (part === '') continue
    const eq = part.indexOf('=')
    const key = urlDecode(eq < 0 ? part : part.slice(0, eq))
    out[key] = eq < 0 ? '' : urlDecode(part.slice(eq + 1))
  }
  return out
}

const URL_RE =
  /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(?:([^:@/?#]*)(?::([^@/?#]*))?@)?(\[[^\]]*\]|[^:/?#]*)(?::(\d*))?([^?#]*)(?:\?([^#]*))?(?:#(.*))?$/s

/** parse_url(): the URL's parts; Path is given without its leading slash, as documented. */
export function parseUrl(url: string): DynamicValue {
  const m = URL_RE.exec(url.trim())
  if (!m) return {}
  return {
    Scheme: m[1]!,
    Host: m[4]!,
    Port: m[5] ?? '',
    Path: (m[6] ?? '').replace(/^\//, ''),
    Username: m[2] ?? '',
    Password: m[3] ?? '',
    'Query Parameters': parseQueryString(m[7] ?? ''),
    Fragment: m[8] ?? '',
  }
}

const parseUrlFn = defineTextFunction({
  name: 'parse_url',
  aliases: ['parseurl'],
  result: 'dynamic',
  text: (text) => parseUrl(text),
})

const parseUrlQuery = defineTextFunction({
  name: 'parse_urlquery',
  aliases: ['parseurlquery'],
  result: 'dynamic',
  text: (text) => ({ 'Query Parameters': parseQueryString(text.replace(/^\?/, '')) }),
})

/** parse_path(): scheme, root, directory, file name, extension and alternate data stream of a file path. */
export function parsePath(input: string): DynamicValue {
  let path = input
  let scheme = ''
  const schemeMatch = /^([A-Za-z][A-Za-z0-9+.-]+):\/\//.exec(path)
  if (schemeMatch) {
    scheme = schemeMatch[1]!
    path = path.slice(schemeMatch[0].length)
  }
  let rootPath = ''
  const long = /^\\\\\?\\/.exec(path)
  const body = long ? path.slice(long[0].length) : path
  const drive = /^[A-Za-z]:/.exec(body)
  if (drive) rootPath = drive[0]
  const lastSep = Math.max(path.lastIndexOf('\\'), path.lastIndexOf('/'))
  let fileName = lastSep < 0 ? path : path.slice(lastSep + 1)
  let directoryPath = lastSep < 0 ? '' : path.slice(0, lastSep)
  // a bare drive-relative name ("C:file.txt") keeps the drive as its root
  if (lastSep < 0 && drive) {
    fileName = path.slice(drive.index + drive[0].length)
    directoryPath = ''
  }
  let stream = ''
  const colon = fileName.indexOf(':')
  if (colon >= 0) {
    stream = fileName.slice(colon + 1)
    fileName = fileName.slice(0, colon)
  }
  const dot = fileName.lastIndexOf('.')
  const extension = dot < 0 ? '' : fileName.slice(dot + 1)
  const dirSep = Math.max(directoryPath.lastIndexOf('\\'), directoryPath.lastIndexOf('/'))
  const directoryName = dirSep < 0 ? (directoryPath === rootPath ? '' : directoryPath) : directoryPath.slice(dirSep + 1)
  return {
    Scheme: scheme,
    RootPath: rootPath,
    DirectoryPath: directoryPath,
    DirectoryName: directoryName,
    Filename: fileName,
    Extension: extension,
    AlternateDataStreamName: stream,
  }
}

const parsePathFn = defineTextFunction({
  name: 'parse_path',
  result: 'dynamic',
  text: (text) => parsePath(text),
})

// ---------------------------------------------------------------------------------------------
// compression

const zlibCompress = defineTextFunction({
  name: 'zlib_compress_to_base64_string',
  result: 'string',
  text: (text) => deflateSync(Buffer.from(text, 'utf8'), { level: 0 }).toString('base64'),
})

const zlibDecompress = defineTextFunction({
  name: 'zlib_decompress_from_base64_string',
  result: 'string',
  text: (text) => {
    const bytes = decodeBase64(text)
    if (bytes === null || bytes.length < 2) return ''
    try {
      return utf8(inflateSync(bytes, { windowBits: 15 })) ?? ''
    } catch {
      return ''
    }
  },
})

/** gzip member: fixed 10-byte header (no flags, OS unknown), stored deflate data, CRC-32, size. */
export function gzipStored(data: Buffer): Buffer {
  const header = Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0, 0, 0, 0, 0x00, 0xff])
  const trailer = Buffer.alloc(8)
  trailer.writeUInt32LE(crc32(data), 0)
  trailer.writeUInt32LE(data.length >>> 0, 4)
  return Buffer.concat([header, deflateRawSync(data, { level: 0 }), trailer])
}

/** Inflates a gzip member whose header has no optional fields (FLG = 0), as Kusto requires. */
export function gunzipPlain(bytes: Buffer): Buffer | null {
  if (bytes.length < 18 || bytes[0] !== 0x1f || bytes[1] !== 0x8b || bytes[2] !== 0x08 || bytes[3] !== 0) return null
  try {
    const data = inflateRawSync(bytes.subarray(10, bytes.length - 8))
    if (crc32(data) !== bytes.readUInt32LE(bytes.length - 8)) return null
    return data
  } catch {
    return null
  }
}

const gzipCompress = defineTextFunction({
  name: 'gzip_compress_to_base64_string',
  result: 'string',
  text: (text) => gzipStored(Buffer.from(text, 'utf8')).toString('base64'),
})

const gzipDecompress = defineTextFunction({
  name: 'gzip_decompress_from_base64_string',
  result: 'string',
  text: (text) => {
    const bytes = decodeBase64(text)
    const data = bytes === null ? null : gunzipPlain(bytes)
    return data === null ? '' : (utf8(data) ?? '')
  },
})

export const encodingFunctions: readonly ScalarFunction[] = [
  base64EncodeToString,
  base64DecodeToString,
  base64DecodeToArray,
  base64EncodeFromArray,
  base64EncodeFromGuid,
  base64DecodeToGuid,
  urlEncodeFn,
  urlEncodeComponent,
  urlDecodeFn,
  parseUrlFn,
  parseUrlQuery,
  parsePathFn,
  zlibCompress,
  zlibDecompress,
  gzipCompress,
  gzipDecompress,
]
