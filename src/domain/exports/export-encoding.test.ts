import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse } from 'csv-parse/sync'
import fc from 'fast-check'
import { formatDateTime } from '../../kql/values.js'
import { createRowEncoder, csvField, type ExportColumn, guardFormula, isoDateTime } from './export-encoding.js'

const COLUMNS: ExportColumn[] = [
  { name: 'timestamp', type: 'datetime' },
  { name: 'name', type: 'string' },
  { name: 'value', type: 'real' },
  { name: 'count', type: 'long' },
  { name: 'ok', type: 'bool' },
  { name: 'tags', type: 'dynamic' },
  { name: 'duration', type: 'timespan' },
  { name: 'id', type: 'guid' },
]
const T = BigInt(Date.parse('2026-01-01T00:00:00Z')) * 10_000n

function csvOf(columns: ExportColumn[], rows: unknown[][]): string {
  const encoder = createRowEncoder('csv', columns)
  return encoder.header + rows.map((r) => encoder.encode(r as never)).join('')
}

describe('CSV encoding (RFC 4180)', () => {
  it('writes a header row, CRLF line ends, ISO datetimes, Kusto timespans, JSON dynamic and empty nulls', () => {
    const text = csvOf(COLUMNS, [
      [T + 5_000_000n, 'plain', 1.5, 7, true, { a: [1, 'x'] }, -36_000_000_000n, '0b7e5a6c-0000-4000-8000-000000000001'],
      [T, '', null, null, null, null, null, null],
    ])
    assert.equal(
      text,
      [
        'timestamp,name,value,count,ok,tags,duration,id',
        '2026-01-01T00:00:00.5Z,plain,1.5,7,true,"{""a"":[1,""x""]}",-01:00:00,0b7e5a6c-0000-4000-8000-000000000001',
        '2026-01-01T00:00:00Z,,,,,,,',
        '',
      ].join('\r\n'),
    )
  })

  it('writes longs inside dynamic values with every digit (issue 17 item 1)', () => {
    const columns: ExportColumn[] = [{ name: 'tags', type: 'dynamic' }]
    const value = { a: [9007199254740993n, -9223372036854775808n], b: 1.5 }
    assert.equal(csvOf(columns, [[value]]), 'tags\r\n"{""a"":[9007199254740993,-9223372036854775808],""b"":1.5}"\r\n')
    const jsonl = createRowEncoder('jsonl', columns)
    assert.equal(jsonl.encode([value] as never), '{"tags":{"a":[9007199254740993,-9223372036854775808],"b":1.5}}\n')
  })

  it('quotes commas, quotes, CR and LF, and nothing else', () => {
    assert.equal(csvField('a,b'), '"a,b"')
    assert.equal(csvField('say "hi"'), '"say ""hi"""')
    assert.equal(csvField('two\nlines'), '"two\nlines"')
    assert.equal(csvField('cr\rhere'), '"cr\rhere"')
    assert.equal(csvField(' spaced '), ' spaced ')
    assert.equal(csvField('ünïcødé ✓'), 'ünïcødé ✓')
  })

  it('guards text cells against formula injection but leaves numbers as numbers', () => {
    for (const [input, output] of [
      ['=1+2', "'=1+2"],
      ['+cmd', "'+cmd"],
      ['-2+3', "'-2+3"],
      ['@SUM(A1)', "'@SUM(A1)"],
      ['\tx', "'\tx"],
      ['\rx', "'\rx"],
      ['-5', '-5'],
      ['+3.25', '+3.25'],
      ['-1e3', '-1e3'],
      ['-.5', '-.5'],
      ['safe=text', 'safe=text'],
      ['', ''],
    ])
      assert.equal(guardFormula(input!), output, JSON.stringify(input))
    const text = csvOf(
      [
        { name: 'v', type: 'real' },
        { name: 'l', type: 'long' },
        { name: 's', type: 'string' },
        { name: 'd', type: 'timespan' },
      ],
      [[-5, -7, '=HYPERLINK("x")', -10_000_000n]],
    )
    assert.equal(text.split('\r\n')[1], `-5,-7,"'=HYPERLINK(""x"")",-00:00:01`)
    assert.equal(csvOf([{ name: 'r', type: 'real' }], [[Number.NEGATIVE_INFINITY], [Number.NaN]]), 'r\r\n-Infinity\r\nNaN\r\n')
  })

  it('a real CSV parser reads back exactly what was written (property, any text)', () => {
    const columns: ExportColumn[] = [
      { name: 'a', type: 'string' },
      { name: 'b', type: 'string' },
      { name: 'n', type: 'long' },
    ]
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            fc.string({ unit: 'grapheme' }),
            fc.string({ unit: fc.constantFrom('a', ',', '"', '\r', '\n', '=', '-', '@', '+', ' ', '1') }),
            fc.integer(),
          ),
          { maxLength: 20 },
        ),
        (rows) => {
          const parsed = parse(csvOf(columns, rows), { columns: true, relax_column_count: false, bom: false }) as Record<string, string>[]
          assert.deepEqual(
            parsed,
            rows.map(([a, b, n]) => ({ a: guardFormula(a), b: guardFormula(b), n: String(n) })),
          )
        },
      ),
    )
  })
})

describe('isoDateTime', () => {
  it('writes exactly what formatDateTime writes, for every datetime (property)', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -62135596800n * 10_000_000n, max: 253402300799n * 10_000_000n + 9_999_999n }), (ticks) => {
        assert.equal(isoDateTime(ticks), formatDateTime(ticks))
      }),
      { numRuns: 2000 },
    )
    for (const ticks of [0n, 1n, 9_999_999n, 10_000_000n, 864_000_000_000n - 1n, T, T + 1n, T + 5_000_000n])
      assert.equal(isoDateTime(ticks), formatDateTime(ticks))
  })
})

describe('JSONL encoding', () => {
  it('writes one object per line with wire values, in column order, null for missing columns', () => {
    const encoder = createRowEncoder('jsonl', COLUMNS)
    assert.equal(encoder.header, '')
    const line = encoder.encode([T, '=x', Number.NaN, 3, false, { k: 'v' }, 10_000_000n, undefined])
    assert.equal(
      line,
      '{"timestamp":"2026-01-01T00:00:00Z","name":"=x","value":"NaN","count":3,"ok":false,"tags":{"k":"v"},"duration":"00:00:01","id":null}\n',
    )
  })

  it('keeps a column named __proto__ as an ordinary key', () => {
    const line = createRowEncoder('jsonl', [
      { name: '__proto__', type: 'long' },
      { name: 'x', type: 'string' },
    ]).encode([1, 'a'])
    assert.deepEqual(Object.keys(JSON.parse(line)), ['__proto__', 'x'])
    assert.equal(line, '{"__proto__":1,"x":"a"}\n')
  })

  it('round-trips any string through JSON.parse (property)', () => {
    const encoder = createRowEncoder('jsonl', [{ name: 's', type: 'string' }])
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const line = encoder.encode([s])
        assert.ok(line.endsWith('\n') && !line.slice(0, -1).includes('\n'))
        assert.deepEqual(JSON.parse(line), { s })
      }),
    )
  })
})
