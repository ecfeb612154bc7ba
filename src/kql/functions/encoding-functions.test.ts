import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { d, s, scalarCaller } from '../../../test/support/kql-function-calls.js'
import { KqlError } from '../kql-error.js'
import type { KqlValue } from '../types.js'

const { bound, call } = scalarCaller()

describe('base64', () => {
  it('encodes and decodes strings', () => {
    assert.equal(call('base64_encode_tostring', s('Kusto')), 'S3VzdG8=')
    assert.equal(call('base64_encodestring', s('Kusto')), 'S3VzdG8=')
    assert.equal(call('base64_decode_tostring', s('S3VzdG8=')), 'Kusto')
    assert.equal(call('base64_decodestring', s('S3VzdG8=')), 'Kusto')
    assert.equal(call('base64_decode_tostring', s('U3RyaW5n0KHR0tGA0L7Rh9C60LA=')), '')
    assert.equal(call('base64_decode_tostring', s('not base64!')), '')
  })
  it('converts byte arrays', () => {
    assert.deepEqual(call('base64_decode_toarray', s('S3VzdG8=')), [75, 117, 115, 116, 111])
    assert.equal(call('base64_encode_fromarray', d([75, 117, 115, 116, 111])), 'S3VzdG8=')
    assert.equal(call('base64_decode_toarray', s('U3RyaW5n0KHR0tGA0L7Rh9C60LA')), null)
    assert.equal(call('base64_encode_fromarray', d(null)), '')
    assert.equal(call('base64_encode_fromarray', d([256])), '')
  })
  it('converts guids in .NET byte order', () => {
    assert.equal(call('base64_encode_fromguid', ['guid', 'ae3133f2-6e22-49ae-b06a-16e6a9b212eb']), '8jMxriJurkmwahbmqbIS6w==')
    assert.deepEqual(bound('base64_decode_toguid', s('JpbpECu8dUy7Pv5gbeJXAA==')), {
      type: 'guid',
      value: '10e99626-bc2b-754c-bb3e-fe606de25700',
    })
    assert.equal(call('base64_decode_toguid', s('abcd1231')), null)
    assert.throws(() => call('base64_encode_fromguid', s('abcd1231')), KqlError)
  })
})

describe('url encoding', () => {
  it('follows the documented examples', () => {
    assert.equal(call('url_encode', s('https://www.bing.com/hello world')), 'https%3a%2f%2fwww.bing.com%2fhello+world')
    assert.equal(call('url_encode_component', s('https://www.bing.com/hello world/')), 'https%3a%2f%2fwww.bing.com%2fhello%20world%2f')
    assert.equal(call('url_encode_component', s('hello world')), 'hello%20world')
    assert.equal(call('url_decode', s('https%3a%2f%2fwww.bing.com%2f')), 'https://www.bing.com/')
    assert.equal(call('url_decode', s('hello%20world')), 'hello world')
    assert.equal(call('url_decode', s('https%3A%2F%2Fexample.com%3Fa%3Db')), 'https://example.com?a=b')
  })
  it('round-trips UTF-8 and leaves malformed escapes', () => {
    assert.equal(call('url_encode_component', s('é😀')), '%c3%a9%f0%9f%98%80')
    assert.equal(call('url_decode', s('%c3%a9%f0%9f%98%80')), 'é😀')
    assert.equal(call('url_decode', s('100%')), '100%')
    assert.equal(call('url_decode', s('😀+x')), '😀 x')
  })
})

describe('parse_url, parse_urlquery, parse_path', () => {
  it('parse_url', () => {
    assert.deepEqual(call('parse_url', s('scheme://username:password@host:1234/this/is/a/path?k1=v1&k2=v2#fragment')), {
      Scheme: 'scheme',
      Host: 'host',
      Port: '1234',
      Path: 'this/is/a/path',
      Username: 'username',
      Password: 'password',
      'Query Parameters': { k1: 'v1', k2: 'v2' },
      Fragment: 'fragment',
    })
    assert.deepEqual(call('parse_url', s('https://bing.com')), {
      Scheme: 'https',
      Host: 'bing.com',
      Port: '',
      Path: '',
      Username: '',
      Password: '',
      'Query Parameters': {},
      Fragment: '',
    })
  })
  it('parse_urlquery', () => {
    assert.deepEqual(call('parse_urlquery', s('k1=v1&k2=v2&k3=v3')), { 'Query Parameters': { k1: 'v1', k2: 'v2', k3: 'v3' } })
    assert.deepEqual(call('parse_urlquery', s('view=vs-2019&preserve-view=true')), {
      'Query Parameters': { view: 'vs-2019', 'preserve-view': 'true' },
    })
  })
  it('parse_path follows the documented examples', () => {
    const e = (
      Scheme: string,
      RootPath: string,
      DirectoryPath: string,
      DirectoryName: string,
      Filename: string,
      Extension: string,
      AlternateDataStreamName: string,
    ): KqlValue => ({ Scheme, RootPath, DirectoryPath, DirectoryName, Filename, Extension, AlternateDataStreamName })
    assert.deepEqual(call('parse_path', s('C:\\temp\\file.txt')), e('', 'C:', 'C:\\temp', 'temp', 'file.txt', 'txt', ''))
    assert.deepEqual(call('parse_path', s('temp\\file.txt')), e('', '', 'temp', 'temp', 'file.txt', 'txt', ''))
    assert.deepEqual(
      call('parse_path', s('file://C:/temp/file.txt:some.exe')),
      e('file', 'C:', 'C:/temp', 'temp', 'file.txt', 'txt', 'some.exe'),
    )
    assert.deepEqual(
      call('parse_path', s('\\\\shared\\users\\temp\\file.txt.gz')),
      e('', '', '\\\\shared\\users\\temp', 'temp', 'file.txt.gz', 'gz', ''),
    )
    assert.deepEqual(call('parse_path', s('/usr/lib/temp/file.txt')), e('', '', '/usr/lib/temp', 'temp', 'file.txt', 'txt', ''))
  })
})

describe('zlib and gzip', () => {
  it('reproduces the documented outputs', () => {
    assert.equal(call('zlib_compress_to_base64_string', s('1234567890qwertyuiop')), 'eAEBFADr/zEyMzQ1Njc4OTBxd2VydHl1aW9wOAkGdw==')
    assert.equal(call('zlib_decompress_from_base64_string', s('eJwLSS0uUSguKcrMS1cwNDIGACxqBQ4=')), 'Test string 123')
    assert.equal(call('zlib_decompress_from_base64_string', s('x0x0x0')), '')
    assert.equal(
      call('gzip_compress_to_base64_string', s('1234567890qwertyuiop')),
      'H4sIAAAAAAAA/wEUAOv/MTIzNDU2Nzg5MHF3ZXJ0eXVpb3A6m7f2FAAAAA==',
    )
    assert.equal(
      call('gzip_decompress_from_base64_string', s('H4sIAAAAAAAA/wEUAOv/MTIzNDU2Nzg5MHF3ZXJ0eXVpb3A6m7f2FAAAAA==')),
      '1234567890qwertyuiop',
    )
    assert.equal(call('gzip_decompress_from_base64_string', s('x0x0x0')), '')
  })
  it('round-trips arbitrary text', () => {
    const text = 'héllo 😀 '.repeat(50)
    assert.equal(call('zlib_decompress_from_base64_string', s(call('zlib_compress_to_base64_string', s(text)) as string)), text)
    assert.equal(call('gzip_decompress_from_base64_string', s(call('gzip_compress_to_base64_string', s(text)) as string)), text)
  })
})
