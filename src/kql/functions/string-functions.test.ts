import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { KqlError } from '../kql-error.js'
import type { KqlType, KqlValue } from '../types.js'
import { parseDateTime } from '../values.js'
import type { EvalContext } from './function-types.js'
import { lookupScalar } from './registry.js'

const ctx: EvalContext = { now: 0n, random: () => 0.5 }

type Arg = readonly [KqlType, KqlValue] | readonly [KqlType, KqlValue, 'row']

/** Binds `name` with constant arguments (or per-row ones marked 'row') and evaluates one row. */
function call(name: string, ...args: Arg[]): KqlValue {
  return bound(name, ...args).value
}

function bound(name: string, ...args: Arg[]): { type: KqlType; value: KqlValue } {
  const fn = lookupScalar(name)
  assert.ok(fn, `${name} is registered`)
  const b = fn.bind(
    args.map(([type, value, row]) => ({ type, text: JSON.stringify(String(value)), ...(row ? {} : { constant: { value } }) })),
  )
  return {
    type: b.type,
    value: b.evaluate(
      args.map((a) => a[1]),
      ctx,
    ),
  }
}

const s = (v: string): Arg => ['string', v]
const r = (v: string): Arg => ['string', v, 'row']
const l = (v: number | null): Arg => ['long', v]
const d = (v: KqlValue): Arg => ['dynamic', v]
const ty = (t: string): Arg => ['string', t]

function throwsKql(fn: () => unknown, pattern?: RegExp): void {
  assert.throws(fn, (e: unknown) => e instanceof KqlError && (!pattern || pattern.test(e.message)))
}

describe('strcat, strcat_delim, strcat_array, strrep', () => {
  it('concatenates and converts non-strings', () => {
    assert.equal(call('strcat', s('hello'), s(' '), s('world')), 'hello world')
    assert.equal(call('strcat', s('Line 1\n'), s('Line 2\n'), s('Line 3')), 'Line 1\nLine 2\nLine 3')
    assert.equal(call('strcat', s('a'), s('-'), l(123)), 'a-123')
    assert.equal(call('strcat', l(12), s('-'), s('b.default'), s('-'), l(7)), '12-b.default-7')
    assert.equal(call('strcat', s('a'), ['string', ''], ['long', null]), 'a')
    assert.equal(call('strcat', ['datetime', 0n]), '1970-01-01T00:00:00.0000000Z')
    throwsKql(() => call('strcat'), /strcat\(\)/)
  })
  it('strcat_delim', () => {
    assert.equal(call('strcat_delim', s('-'), l(1), s('2'), s('A'), ['timespan', 10_000_000n]), '1-2-A-00:00:01')
    throwsKql(() => call('strcat_delim', s('-'), s('a')))
  })
  it('strcat_array', () => {
    assert.equal(call('strcat_array', d([1, 2, 3]), s('->')), '1->2->3')
    assert.equal(call('strcat_array', d([1, 2, 3]), s('"')), '1"2"3')
    assert.equal(call('strcat_array', d(['Jane', 'John']), s(',')), 'Jane,John')
    assert.equal(call('strcat_array', d(null), s(',')), '')
    throwsKql(() => call('strcat_array', s('x'), s(',')))
  })
  it('strrep', () => {
    assert.equal(call('strrep', s('ABC'), l(2)), 'ABCABC')
    assert.equal(call('strrep', l(123), l(3), s('.')), '123.123.123')
    assert.equal(call('strrep', ['timespan', 30_000_000n], l(2), s(' ')), '00:00:03 00:00:03')
    assert.equal(call('strrep', s('x'), l(5000)), 'x'.repeat(1024))
  })
})

describe('strlen, string_size, case, substring, reverse, strcmp', () => {
  it('strlen counts code points', () => {
    assert.deepEqual(bound('strlen', s('hello')), { type: 'long', value: 5 })
    assert.equal(call('strlen', s('⒦⒰⒮⒯⒪')), 5)
    assert.equal(call('strlen', s('C\u0327edilla')), 8)
    assert.equal(call('strlen', s('😀')), 1)
    assert.equal(call('strlen', s('')), 0)
    throwsKql(() => call('strlen', l(1)), /strlen\(\)/)
  })
  it('string_size counts UTF-8 bytes', () => {
    assert.equal(call('string_size', s('hello')), 5)
    assert.equal(call('string_size', s('⒦⒰⒮⒯⒪')), 15)
  })
  it('toupper/tolower', () => {
    assert.equal(call('toupper', s('hello')), 'HELLO')
    assert.equal(call('tolower', s('Hello')), 'hello')
    assert.equal(call('toupper', l(5)), '5')
  })
  it('substring follows the documented examples', () => {
    assert.equal(call('substring', s('123456'), l(1)), '23456')
    assert.equal(call('substring', s('123456'), l(2), l(2)), '34')
    assert.equal(call('substring', s('ABCD'), l(0), l(2)), 'AB')
    assert.equal(call('substring', s('123456'), l(-2), l(2)), '56')
    assert.equal(call('substring', s('abc'), l(1), l(20)), 'bc')
    assert.equal(call('substring', s('abc'), l(2), l(0)), '')
    assert.equal(call('substring', s('abc'), l(10), l(1)), '')
    assert.equal(call('substring', s('abc'), l(null)), '')
    throwsKql(() => call('substring', s('abc'), s('1')))
  })
  it('reverse converts to text first', () => {
    assert.equal(call('reverse', s('ABCDEFGHIJKLMNOPQRSTUVWXYZ')), 'ZYXWVUTSRQPONMLKJIHGFEDCBA')
    assert.equal(call('reverse', ['int', 12345]), '54321')
    assert.equal(call('reverse', ['real', 123.45]), '54.321')
    assert.equal(call('reverse', ['datetime', parseDateTime('2017-10-15 12:00')]), 'Z0000000.00:00:21T51-01-7102')
    assert.equal(call('reverse', ['timespan', 3n * 36_000_000_000n]), '00:00:30')
  })
  it('strcmp', () => {
    assert.equal(call('strcmp', s('ABC'), s('ABC')), 0)
    assert.equal(call('strcmp', s('abc'), s('ABC')), 1)
    assert.equal(call('strcmp', s('ABC'), s('abc')), -1)
    assert.equal(call('strcmp', s('abcde'), s('abc')), 1)
  })
})

describe('trim, trim_start, trim_end', () => {
  it('trims regex matches', () => {
    assert.equal(call('trim', s('--'), s('--https://bing.com--')), 'https://bing.com')
    assert.equal(call('trim', s('[^\\w]+'), s('-  Te st1// $')), 'Te st1')
    assert.equal(call('trim', s('\\s+'), s('    Hello, world!    ')), 'Hello, world!')
    assert.equal(call('trim_start', s('https://'), s('https://bing.com')), 'bing.com')
    assert.equal(call('trim_start', s('[^\\w]+'), s('-  Te st1// $')), 'Te st1// $')
    assert.equal(call('trim_start', s('\\s+'), s('    Hello, world!    ')), 'Hello, world!    ')
    assert.equal(call('trim_end', s('.com'), s('bing.com')), 'bing')
    assert.equal(call('trim_end', s('[^\\w]+'), s('-  Te st1// $')), '-  Te st1')
    assert.equal(call('trim_end', s('\\s+'), s('    Hello, world!    ')), '    Hello, world!')
  })
  it('works with a per-row pattern and rejects a bad regex', () => {
    assert.equal(call('trim', r('x'), s('xxaxx')), 'a')
    throwsKql(() => call('trim', s('('), s('abc')), /trim\(\)/)
  })
})

describe('split', () => {
  it('follows the documented examples', () => {
    assert.deepEqual(call('split', s('aa_bb'), s('_')), ['aa', 'bb'])
    assert.deepEqual(call('split', s('aaa_bbb_ccc'), s('_'), l(1)), ['bbb'])
    assert.deepEqual(call('split', s(''), s('_')), [''])
    assert.deepEqual(call('split', s('a__b'), s('_')), ['a', '', 'b'])
    assert.deepEqual(call('split', s('aabbcc'), s('bb')), ['aa', 'cc'])
    assert.deepEqual(call('split', s('John,Paul,Jane,Kao'), s(',')), ['John', 'Paul', 'Jane', 'Kao'])
    assert.deepEqual(call('split', s('a_b'), s('_'), l(5)), [])
    assert.deepEqual(call('split', l(12), s('_')), ['12'])
  })
})

describe('replace_string, replace_strings, replace_regex, translate', () => {
  it('replace_string', () => {
    assert.equal(
      call('replace_string', s('A magic trick can turn a cat into a dog'), s('cat'), s('hamster')),
      'A magic trick can turn a hamster into a dog',
    )
    assert.equal(call('replace_string', s('abcb'), s('b'), s('1')), 'a1c1')
    assert.equal(call('replace_string', s('abc'), s(''), s('1')), 'abc')
  })
  it('replace_strings: earlier lookups win, non-string rewrites keep the text', () => {
    const msg = s('A magic trick can turn a cat into a dog')
    assert.equal(call('replace_strings', msg, d(['cat', 'dog']), d(['dog', 'pigeon'])), 'A magic trick can turn a dog into a pigeon')
    assert.equal(call('replace_strings', msg, d(['turn', ' into a dog']), d(['disappear', ''])), 'A magic trick can disappear a cat')
    const m2 = s('This is an example of using replace_strings()')
    assert.equal(call('replace_strings', m2, d(['This', 'is']), d(['This', 'was'])), 'This was an example of using replace_strings()')
    assert.equal(call('replace_strings', m2, d(['is', 'This']), d(['was', 'This'])), 'Thwas was an example of using replace_strings()')
    assert.equal(call('replace_strings', m2, d(['This', 'is']), d([12345, 'was'])), 'This was an example of using replace_strings()')
  })
  it('replace_regex with group references', () => {
    assert.equal(call('replace_regex', s('Number is 1'), s('is (\\d+)'), s('was: \\1')), 'Number was: 1')
    assert.equal(call('replace_regex', s('abcabc'), s('b'), s('[\\0]')), 'a[b]ca[b]c')
    assert.equal(call('replace_regex', s('a$b'), s('\\$'), s('$1')), 'a$1b')
    assert.equal(call('replace', s('is (\\d+)'), s('was: \\1'), s('Number is 5')), 'Number was: 5')
  })
  it('translate', () => {
    assert.equal(call('translate', s('abc'), s('x'), s('abc')), 'xxx')
    assert.equal(call('translate', s('abc'), s(''), s('ab')), '')
    assert.equal(call('translate', s('krasp'), s('otsku'), s('spark')), 'kusto')
  })
})

describe('indexof, indexof_regex, countof, has_any_index', () => {
  it('indexof follows the documented examples', () => {
    const abc = s('abcdefg')
    assert.equal(call('indexof', abc, s('cde')), 2)
    assert.equal(call('indexof', abc, s('cde'), l(1), l(4)), 2)
    assert.equal(call('indexof', abc, s('cde'), l(1), l(2)), -1)
    assert.equal(call('indexof', abc, s('cde'), l(3), l(4)), -1)
    assert.equal(call('indexof', abc, s('cde'), l(-5)), 2)
    assert.equal(call('indexof', l(1234567), l(5), l(1), l(4)), 4)
    assert.equal(call('indexof', abc, s('cde'), l(2), l(-1)), 2)
    assert.equal(call('indexof', s('abcdefgabcdefg'), s('cde'), l(1), l(10), l(2)), 9)
    assert.equal(call('indexof', s('abcdefgabcdefg'), s('cde'), l(1), l(-1), l(3)), -1)
    assert.equal(call('indexof', abc, s('cde'), l(0), l(-2)), null)
    assert.equal(bound('indexof', abc, s('x')).type, 'long')
  })
  it('indexof_regex follows the documented examples', () => {
    assert.equal(call('indexof_regex', s('abcabc'), s('a.c')), 0)
    assert.equal(call('indexof_regex', s('abcabcdefg'), s('a.c'), l(0), l(9), l(2)), 3)
    assert.equal(call('indexof_regex', s('abcabc'), s('a.c'), l(1), l(-1), l(2)), -1)
    assert.equal(call('indexof_regex', s('ababaa'), s('a.a'), l(0), l(-1), l(2)), -1)
    assert.equal(call('indexof_regex', s('abcabc'), s('a|ab'), l(-1)), null)
  })
  it('countof', () => {
    assert.equal(call('countof', s('aaa'), s('a')), 3)
    assert.equal(call('countof', s('aaaa'), s('aa')), 3)
    assert.equal(call('countof', s('ababa'), s('ab'), s('normal')), 2)
    assert.equal(call('countof', s('ababa'), s('aba')), 2)
    assert.equal(call('countof', s('ababa'), s('aba'), s('regex')), 1)
    assert.equal(call('countof', s('abcabc'), s('a.c'), s('regex')), 2)
    throwsKql(() => call('countof', s('a'), s('a'), s('fuzzy')))
  })
  it('has_any_index', () => {
    const text = s('this is an example')
    assert.equal(call('has_any_index', text, d(['this', 'example'])), 0)
    assert.equal(call('has_any_index', text, d(['not', 'example'])), 1)
    assert.equal(call('has_any_index', text, d(['not', 'found'])), -1)
    assert.equal(call('has_any_index', s('Example number 2'), d([1, 2, 3])), 1)
    assert.equal(call('has_any_index', text, d([])), -1)
    assert.equal(call('has_any_index', text, d(['exam'])), -1)
  })
})

describe('extract, extract_all, extract_json', () => {
  it('extract with and without a type', () => {
    assert.deepEqual(bound('extract', s('-(\\d{2})-'), l(1), s('15-12-2024'), ty('int')), { type: 'int', value: 12 })
    assert.equal(call('extract', s('-(\\d{2})-'), l(1), s('21-07-2023'), ty('int')), 7)
    assert.equal(call('extract', s('User: ([^,]+)'), l(1), s('User: JohnDoe, Email: johndoe@example.com, Age: 29')), 'JohnDoe')
    const pattern = s('([0-9.]+) (s|ms)$')
    const input = s('Operation took 127.5 ms')
    assert.equal(call('extract', pattern, l(1), input), '127.5')
    assert.equal(call('extract', pattern, l(2), input), 'ms')
    assert.equal(call('extract', pattern, l(0), input), '127.5 ms')
    assert.equal(call('extract', pattern, l(3), input), '')
    assert.equal(call('extract', pattern, l(1), s('')), '')
    assert.equal(call('extract', s('x(\\d+)'), l(1), s('abc'), ty('long')), null)
    assert.equal(call('extract', s('(\\d+)'), l(1), s('took 2.5'), ty('real')), 2)
    throwsKql(() => call('extract', s('('), l(1), s('a')))
    throwsKql(() => call('extract', s('a'), l(1), s('a'), ty('nonsense')))
  })
  it('extract_all', () => {
    const id = s('82b8be2d-dfa7-4bd1-8f63-24ad26d31449')
    assert.deepEqual(call('extract_all', s('(\\d+)'), s('a set of numbers: 123, 567 and 789')), ['123', '567', '789'])
    assert.deepEqual(call('extract_all', s('([\\da-f]{2})'), id), [
      '82',
      'b8',
      'be',
      '2d',
      'df',
      'a7',
      '4b',
      'd1',
      '8f',
      '63',
      '24',
      'ad',
      '26',
      'd3',
      '14',
      '49',
    ])
    const three = [
      ['8', '2b8be2', 'd'],
      ['d', 'fa', '7'],
      ['4', 'bd', '1'],
      ['8', 'f6', '3'],
      ['2', '4ad26d3144', '9'],
    ]
    assert.deepEqual(call('extract_all', s('(\\w)(\\w+)(\\w)'), id), three)
    assert.deepEqual(call('extract_all', s('(\\w)(\\w+)(\\w)'), d([1, 3]), id), [
      ['8', 'd'],
      ['d', '7'],
      ['4', '1'],
      ['8', '3'],
      ['2', '9'],
    ])
    assert.deepEqual(call('extract_all', s('(?P<first>\\w)(?P<middle>\\w+)(?P<last>\\w)'), d(['first', 2, 'last']), id), three)
    assert.equal(call('extract_all', s('(\\d+)'), s('none')), null)
  })
  it('extract_json', () => {
    const json = s('{"name": "John", "age": 30, "city": "New York", "tags": ["a", "b"], "o": {"x": 1}}')
    assert.equal(call('extract_json', s('$.name'), json, ty('string')), 'John')
    assert.equal(call('extract_json', s('$.name'), json), 'John')
    assert.deepEqual(bound('extract_json', s('$.age'), json, ty('long')), { type: 'long', value: 30 })
    assert.equal(call('extractjson', s("$['city']"), json), 'New York')
    assert.equal(call('extract_json', s('$.tags[1]'), json), 'b')
    assert.equal(call('extract_json', s('$.o'), json), '{"x":1}')
    assert.equal(call('extract_json', s('$.missing'), json), '')
    assert.equal(call('extract_json', s('$.missing'), json, ty('long')), null)
    assert.equal(call('extract_json', s('$.name'), s('not json')), '')
    throwsKql(() => call('extract_json', s('name'), json))
  })
})

describe('parse_csv, parse_command_line, parse_version', () => {
  it('parse_csv takes the first record and unescapes quotes', () => {
    assert.deepEqual(call('parse_csv', s('aa,"b,b,b",cc,"Escaping quotes: ""Title""","line1\nline2"')), [
      'aa',
      'b,b,b',
      'cc',
      'Escaping quotes: "Title"',
      'line1\nline2',
    ])
    assert.deepEqual(call('parse_csv', s('record1,a,b,c\nrecord2,x,y,z')), ['record1', 'a', 'b', 'c'])
    assert.deepEqual(call('parse_csv', s('')), [''])
  })
  it('parse_command_line', () => {
    assert.deepEqual(call('parse_command_line', s('echo "hello world!"'), s('windows')), ['echo', 'hello world!'])
    assert.deepEqual(call('parse_command_line', s('a\\\\\\"b c\\d "e f"g'), s('windows')), ['a\\"b', 'c\\d', 'e fg'])
    throwsKql(() => call('parse_command_line', s('x'), s('linux')))
  })
  it('parse_version', () => {
    assert.deepEqual(bound('parse_version', s('0.0.0.5')), { type: 'decimal', value: 5 })
    assert.equal(call('parse_version', s('0.0.7.0')), 700_000_000)
    assert.equal(call('parse_version', s('0.0.3')), 300_000_000)
    assert.equal(call('parse_version', s('0.2')), 20_000_000_000_000_000)
    assert.equal(call('parse_version', s('1')), 1e24)
    assert.ok((call('parse_version', s('0.1.2.0')) as number) < (call('parse_version', s('1.0.0.0')) as number))
    assert.equal(call('parse_version', s('1.2.3.4.5')), null)
    assert.equal(call('parse_version', s('a.b')), null)
  })
})

describe('code points, ascii, utf8, regex_quote', () => {
  it('unicode_codepoints_from_string / to_utf8', () => {
    assert.deepEqual(call('unicode_codepoints_from_string', s('⒦⒰⒮⒯⒪')), [9382, 9392, 9390, 9391, 9386])
    assert.deepEqual(
      call('unicode_codepoints_from_string', s('קוסטו - Kusto')),
      [1511, 1493, 1505, 1496, 1493, 32, 45, 32, 75, 117, 115, 116, 111],
    )
    assert.deepEqual(call('to_utf8', s('Ab')), [65, 98])
  })
  it('unicode_codepoints_to_string / make_string', () => {
    assert.equal(call('unicode_codepoints_to_string', l(75), l(117), l(115), l(116), l(111)), 'Kusto')
    assert.equal(call('unicode_codepoints_to_string', d([75, 117, 115, 116, 111])), 'Kusto')
    assert.equal(call('unicode_codepoints_to_string', d([75, 117, 115]), l(116), l(111)), 'Kusto')
    assert.equal(call('unicode_codepoints_to_string', l(75), l(10), l(117)), 'K\nu')
    assert.equal(call('make_string', l(75)), 'K')
    assert.equal(call('unicode_codepoints_to_string', l(-1)), '')
    throwsKql(() => call('unicode_codepoints_to_string', s('a')))
  })
  it('isascii / isutf8', () => {
    assert.equal(call('isascii', s('some string')), true)
    assert.equal(call('isascii', s('קוסטו')), false)
    assert.equal(call('isutf8', s('some string')), true)
    assert.equal(call('isutf8', s('\ud800')), false)
  })
  it('regex_quote', () => {
    assert.equal(call('regex_quote', s('(so$me.Te^xt)')), '\\(so\\$me\\.Te\\^xt\\)')
  })
})

describe('punycode', () => {
  it('encodes and decodes the documented examples', () => {
    assert.equal(call('punycode_from_string', s('académie-française')), 'acadmie-franaise-npb1a')
    assert.equal(call('punycode_from_string', s('艺术')), 'cqv902d')
    assert.equal(call('punycode_to_string', s('acadmie-franaise-npb1a')), 'académie-française')
    assert.equal(call('punycode_to_string', s('cqv902d')), '艺术')
    assert.equal(call('punycode_to_string', s('abc-')), 'abc')
    assert.equal(call('punycode_to_string', s('a-b!')), '')
  })
})

describe('format_bytes', () => {
  it('follows the documented examples', () => {
    assert.equal(call('format_bytes', l(564)), '564 Bytes')
    assert.equal(call('format_bytes', l(10332), l(1)), '10.1 KB')
    assert.equal(call('format_bytes', l(20010332)), '19 MB')
    assert.equal(call('format_bytes', l(20010332), l(2)), '19.08 MB')
    assert.equal(call('format_bytes', l(20010332), l(0), s('KB')), '19541 KB')
    throwsKql(() => call('format_bytes', l(1), l(0), s('XB')))
  })
})
