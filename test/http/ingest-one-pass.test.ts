/**
 * Push ingest's one-pass reader (readTypedRows) against the reference path it stands in for (the
 * strict body parser, the NUL rule, parseNdjson and typeRows): on generated bodies, valid and
 * broken in every way the reference refuses, whenever the reader answers it answers the same rows,
 * and it never answers where the reference refuses. Then, through the real server on each backend,
 * malformed bodies still get the reference's 400s, in the reference's order against the other checks.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import fc from 'fast-check'
import { readTypedRows, typeRows } from '../../src/domain/ingest/index.js'
import type { ColumnConfig } from '../../src/domain/workspace-config/index.js'
import { parseNdjson } from '../../src/http/routes/ingest.js'
import { parseBodyOfKind } from '../../src/http/wire/json-body.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushConnectionConfig } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const RUNS = Number(process.env.FUZZ_RUNS ?? 400)

const COLUMNS: ColumnConfig[] = [
  { name: 'timestamp', type: 'datetime' },
  { name: 's', type: 'string' },
  { name: 'r', type: 'real' },
  { name: 'l', type: 'long' },
  { name: 'i', type: 'int' },
  { name: 'b', type: 'bool' },
  { name: 'd', type: 'dynamic' },
  { name: 'g', type: 'guid' },
  { name: 't', type: 'timespan' },
  { name: 'm', type: 'decimal' },
  { name: 'at', type: 'datetime' },
] as ColumnConfig[]
/** A column named like an Object.prototype member: typeRow reads the inherited member when it is missing. */
const PROTOTYPE_COLUMNS: ColumnConfig[] = [...COLUMNS, { name: 'constructor', type: 'dynamic' } as ColumnConfig]

type Outcome = { rows: unknown[] } | { error: string }

/** The reference path: what push ingest did before the one-pass reader, value or message. */
function reference(bytes: Uint8Array, layout: 'array' | 'lines', columns: readonly ColumnConfig[]): Outcome {
  try {
    const parsed = parseBodyOfKind(bytes, layout === 'array' ? 'json' : 'text', { exactIntegers: true })
    const inputs = typeof parsed === 'string' ? parseNdjson(parsed) : parsed
    if (!Array.isArray(inputs)) return { error: 'not an array' }
    const typed = typeRows(columns, inputs)
    if (typed.problems.length > 0) return { error: typed.problems.map((p) => `row ${p.row}: ${p.message}`).join('; ') }
    return { rows: typed.rows }
  } catch (error) {
    return { error: (error as Error).message }
  }
}

/** Checks one body; returns whether the one-pass reader answered. */
function agree(bytes: Uint8Array, layout: 'array' | 'lines', columns: readonly ColumnConfig[] = COLUMNS): boolean {
  const fast = readTypedRows(bytes, layout, columns)
  if (fast === undefined) return false
  const expected = reference(bytes, layout, columns)
  const text = Buffer.from(bytes).toString('utf8').slice(0, 400)
  assert.ok('rows' in expected, `the reader answered a body the reference refuses (${'error' in expected ? expected.error : ''}): ${text}`)
  assert.deepStrictEqual(fast, expected.rows, text)
  return true
}

// Generators: JSON text fragments, right and wrong -------------------------------------------------

const digits = (n: number) => fc.stringMatching(new RegExp(`^[0-9]{${n}}$`))
const datetimeText = fc.oneof(
  fc
    .tuple(
      digits(4),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 24 }),
      fc.integer({ min: 0, max: 60 }),
      fc.integer({ min: 0, max: 60 }),
      fc.oneof(fc.constant(''), fc.stringMatching(/^\.[0-9]{0,10}$/)),
      fc.constantFrom('Z', 'z', '', '+01:00', '-05:30', '+14:00', '+99:99', '+0100', '+01', ' Z', 'UTC', 'Z ', '+1:00'),
      fc.constantFrom('T', ' ', 't'),
    )
    .map(([y, mo, d, h, mi, s, f, z, sep]) => {
      const p = (n: number) => String(n).padStart(2, '0')
      return `${y}-${p(mo)}-${p(d)}${sep}${p(h)}:${p(mi)}:${p(s)}${f}${z}`
    }),
  fc.constantFrom(
    '2026-01-29T12:34:56Z',
    '2026-01-29T12:34:56.1234567Z',
    '2026-01-29T12:34:56.123456789Z',
    '2024-02-29T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00Z',
    '9999-12-31T23:59:59.9999999Z',
    '9999-12-31T23:59:59.9999999-01:00',
    ' 2026-01-29T12:34:56Z',
    '2026-1-2T3:04:05Z',
    '2026-01-29',
    '2026/01/29 10:00',
    'Sat, 8 Nov 2014 15:05:02 GMT',
    'yesterday',
    '',
  ),
)
const jsonString = (s: fc.Arbitrary<string>) => s.map((v) => JSON.stringify(v))
const stringText = fc.oneof(
  jsonString(fc.string({ maxLength: 12 })),
  jsonString(fc.string({ unit: 'grapheme', maxLength: 8 })),
  jsonString(datetimeText),
  fc.constantFrom(
    '""',
    '"a\\"b"',
    '"tab\\there"',
    '"\\u0000"',
    '"x\\u0000y"',
    '"\\ud800"',
    '"\\udc00x"',
    '"\\ud83d\\ude00"',
    '"\\u00e9t\\u00e9"',
    '"\\q"',
    '"\\u12"',
    '"raw\ttab"',
    '"unterminated',
    '"true"',
    '" TRUE "',
    '"123"',
    '" -42 "',
    '"9223372036854775808"',
    '"1e3"',
    '"NaN"',
    '"-infinity"',
    '"01:30:00"',
    '"90m"',
    '"74BE27DE-1E4E-49D9-B579-FE0B331D3642"',
    '" 74be27de-1e4e-49d9-b579-fe0b331d3642 "',
    '"caf\u00e9 \ud83d\ude00"',
  ),
)
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.stringMatching(/^-?(0|[1-9][0-9]{0,17})(\.[0-9]{1,18})?([eE][+-]?[0-9]{1,3})?$/),
  fc.constantFrom(
    '0',
    '-0',
    '0.0',
    '-0.0',
    '0e0',
    '1.5',
    '21.37',
    '-12.50',
    '1e5',
    '1E-7',
    '9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '-9223372036854775808',
    '9223372036854775808',
    '123456789012345',
    '1234567890123456',
    '0.1000000000000000055',
    '0.000000000000001',
    '1e400',
    '1e-400',
    '2.2250738585072014e-308',
    '5e-324',
    '00',
    '01',
    '1.',
    '.5',
    '-',
    '+1',
    '2147483648',
    '-2147483649',
  ),
)
const nestedText = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
  fc.constantFrom(
    '{}',
    '[]',
    '{"a":[1,{"b":null}]}',
    '{"a":1,"a":2}',
    '{"__proto__":1}',
    '{"k\\u0000":1}',
    '["\\u0000"]',
    '[9007199254740993]',
    '[1e400]',
    '{"x":"\\ud800"}',
    '[1,]',
    `${'['.repeat(61)}${']'.repeat(61)}`,
    `${'['.repeat(62)}${']'.repeat(62)}`,
    `${'['.repeat(63)}${']'.repeat(63)}`,
    '[\n1]',
  ),
)
const valueText = fc.oneof(
  { weight: 3, arbitrary: stringText },
  { weight: 3, arbitrary: numberText },
  { weight: 1, arbitrary: fc.constantFrom('true', 'false', 'null', 'tru', 'nul', 'True') },
  { weight: 1, arbitrary: nestedText },
)
/** A value that usually fits the column, so that most generated rows reach the reader's typing. */
function fittingValue(column: ColumnConfig): fc.Arbitrary<string> {
  switch (column.type) {
    case 'datetime':
      return fc.oneof({ weight: 4, arbitrary: jsonString(datetimeText) }, { weight: 1, arbitrary: valueText })
    case 'string':
      return fc.oneof({ weight: 4, arbitrary: stringText }, { weight: 1, arbitrary: valueText })
    case 'real':
    case 'decimal':
    case 'long':
    case 'int':
      return fc.oneof({ weight: 4, arbitrary: numberText }, { weight: 1, arbitrary: valueText })
    case 'bool':
      return fc.oneof(fc.constantFrom('true', 'false', '"true"', '"False"'), valueText)
    case 'dynamic':
      return fc.oneof(nestedText, valueText)
    default:
      return fc.oneof(stringText, valueText)
  }
}

/** A value in the form clients usually send, which fits the column. */
function cleanValue(column: ColumnConfig): fc.Arbitrary<string> {
  const p = (n: number) => String(n).padStart(2, '0')
  switch (column.type) {
    case 'datetime':
      return fc
        .tuple(
          fc.integer({ min: 1, max: 9999 }),
          fc.integer({ min: 1, max: 12 }),
          fc.integer({ min: 1, max: 28 }),
          fc.integer({ min: 0, max: 23 }),
          fc.integer({ min: 0, max: 59 }),
          fc.integer({ min: 0, max: 59 }),
          fc.stringMatching(/^(\.[0-9]{1,7})?$/),
          fc.constantFrom('Z', '+01:00', '-05:30', '+00:00'),
        )
        .map(([y, mo, d, h, mi, s, f, z]) => `"${String(y).padStart(4, '0')}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:${p(s)}${f}${z}"`)
    case 'string':
      return fc.oneof(
        jsonString(fc.string({ maxLength: 10 })),
        jsonString(fc.string({ unit: 'binary-ascii', maxLength: 6 })),
        jsonString(fc.string({ unit: 'grapheme', maxLength: 4 })),
      )
    case 'real':
    case 'decimal':
      return fc.oneof(
        { weight: 4, arbitrary: fc.integer({ min: -1_000_000, max: 1_000_000 }).map((n) => JSON.stringify(n / 100)) },
        { weight: 1, arbitrary: fc.stringMatching(/^-?[1-9][0-9]{0,6}(\.[0-9]{1,8})?(e-?[1-9][0-9]?)?$/) },
      )
    case 'long':
      return fc.oneof(fc.integer().map(String), fc.maxSafeInteger().map(String))
    case 'int':
      return fc.integer().map(String)
    case 'bool':
      return fc.constantFrom('true', 'false')
    case 'dynamic':
      return fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v))
    case 'guid':
      return fc.uuid().map((v) => JSON.stringify(v))
    case 'timespan':
      return fc.constantFrom('"01:30:00"', '"90m"', '"1.02:03:04.5"')
    default:
      return valueText
  }
}

const cleanSpace = fc.constantFrom('', '', ' ', '\t', '\r')
const space = fc.constantFrom('', '', '', ' ', '\t', '\r\n', '\n', '  ', '\u00a0')
const keyText = (name: string) =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(JSON.stringify(name)) },
    { weight: 1, arbitrary: fc.constant(JSON.stringify(name.toUpperCase())) },
    { weight: 1, arbitrary: fc.constant(`"\\u00${name.charCodeAt(0).toString(16)}${name.slice(1)}"`) },
    { weight: 1, arbitrary: fc.constantFrom('"__proto__"', '"colour"', '"timestamp\\u0000"', '"Timestamp"', '""') },
  )

function rowText(columns: readonly ColumnConfig[], clean: boolean): fc.Arbitrary<string> {
  const members = columns.map((column) =>
    fc.tuple(
      fc.integer({ min: 0, max: 9 }),
      clean ? fc.constant(JSON.stringify(column.name)) : keyText(column.name),
      clean ? cleanValue(column) : fittingValue(column),
      clean ? cleanSpace : space,
      clean ? cleanSpace : space,
    ),
  )
  return fc.tuple(fc.tuple(...members), fc.boolean(), fc.integer({ min: 0, max: 20 }), space).map(([parts, shuffle, duplicate, ws]) => {
    // Each member present with probability 0.8 (the timestamp more often), sometimes out of order,
    // sometimes a member twice.
    let chosen = parts.filter(([p], k) => p < (columns[k]!.name === 'timestamp' ? 10 : 8))
    if (shuffle) chosen = [...chosen].reverse()
    if (duplicate === 0 && chosen.length > 0 && !clean) chosen = [...chosen, chosen[0]!]
    const inner = chosen.map(([, key, value, a, b]) => `${a}${key}${b}:${a}${value}${b}`).join(',')
    return `{${ws}${inner}${ws}}`
  })
}

const notAnObjectRow = fc.constantFrom('42', '[]', 'null', '"row"', '{', '{}')

function bodyText(columns: readonly ColumnConfig[], layout: 'array' | 'lines'): fc.Arbitrary<string> {
  const wild = fc.oneof({ weight: 12, arbitrary: rowText(columns, false) }, { weight: 1, arbitrary: notAnObjectRow })
  const clean = fc.tuple(fc.array(rowText(columns, true), { maxLength: 6 }), cleanSpace, cleanSpace)
  return fc
    .oneof(clean, fc.tuple(fc.array(wild, { maxLength: 6 }), space, space))
    .map(([rows, a, b]) =>
      layout === 'array' ? `${a}[${a}${rows.join(`${b},${a}`)}${b}]${b}` : rows.map((r) => `${a}${r}${b}`).join(`\n${a}`),
    )
}

/** Breaks a body at a random place the way clients and attackers do. */
const damage = fc.oneof(
  { weight: 6, arbitrary: fc.constant((text: string) => text) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.nat(), fc.constantFrom('{', '}', '[', ']', ',', ':', '"', '\\', ' ', '0', 'a', '\n', '\u0000', '\u00a0', '\ufeff'))
      .map(
        ([at, c]) =>
          (text: string) =>
            text.slice(0, at % (text.length + 1)) + c + text.slice(at % (text.length + 1)),
      ),
  },
  { weight: 1, arbitrary: fc.nat().map((at) => (text: string) => text.slice(0, at % (text.length + 1))) },
  {
    weight: 1,
    arbitrary: fc.nat().map((at) => (text: string) => text.slice(0, at % (text.length + 1)) + text.slice((at % (text.length + 1)) + 1)),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      (text: string) => `\ufeff${text}`,
      (text: string) => `${text} x`,
      (text: string) => `${text}\n{}`,
    ),
  },
)

/** Raw bytes that are not UTF-8 (or encode a surrogate), spliced in at a random place. */
const badBytes = fc.tuple(fc.nat(), fc.constantFrom([0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]))

describe('push ingest: the one-pass reader agrees with the reference path', () => {
  for (const layout of ['array', 'lines'] as const) {
    for (const [label, columns] of [
      ['every column type', COLUMNS],
      ['a column named constructor', PROTOTYPE_COLUMNS],
    ] as const) {
      it(`${layout}, ${label}: the same rows whenever it answers, and no answer where the reference refuses`, () => {
        let answered = 0
        let leftToReference = 0
        fc.assert(
          fc.property(bodyText(columns, layout), damage, fc.option(badBytes, { freq: 8 }), (text, hurt, bytes) => {
            let body = Buffer.from(hurt(text))
            if (bytes) {
              const at = bytes[0] % (body.length + 1)
              body = Buffer.concat([body.subarray(0, at), Buffer.from(bytes[1]), body.subarray(at)])
            }
            if (agree(body, layout, columns)) answered++
            else if ('rows' in reference(body, layout, columns)) leftToReference++
          }),
          { numRuns: RUNS },
        )
        // The point of the reader: it answers most good bodies (it leaves those with long doubles,
        // 17 significant digits, to the reference; and every row without a constructor member).
        if (columns === COLUMNS)
          assert.ok(answered >= leftToReference, `the reader answered ${answered} good bodies and left ${leftToReference} to the reference`)
      })
    }
  }

  it('answers the common bodies itself: the benchmark rows, every type in its usual form, NDJSON with CRLF', () => {
    const bench = JSON.stringify([
      { timestamp: '2026-01-01T00:00:00.000Z', s: 's-042', r: 21.37, l: 200, b: true, at: '2026-01-01T01:02:03+01:00', m: -0.5 },
      {
        timestamp: '2026-01-29T12:34:56.1234567Z',
        s: 'caf\u00e9 "quoted" \\ \ud83d\ude00',
        r: 1e21,
        l: -9007199254740991,
        i: -2147483648,
        d: { tags: ['a', 1, null], deep: { x: true } },
        g: '74BE27DE-1E4E-49D9-B579-FE0B331D3642',
        t: '01:30:00',
        m: 12.5,
      },
    ])
    for (const [text, layout] of [
      [bench, 'array'],
      ['{"timestamp":"2026-01-02T00:00:00Z","l":1}\r\n\r\n{"timestamp":"2026-01-02T01:00:00Z","s":"x"}\n', 'lines'],
      ['[]', 'array'],
      ['', 'lines'],
    ] as const) {
      assert.ok(agree(Buffer.from(text), layout), `the reader gave up on ${text}`)
    }
  })

  it('a row without a column named like an Object member: null, as the reference path gives it', () => {
    const body = '[{"timestamp":"2026-01-01T00:00:00Z"}]'
    const fast = readTypedRows(Buffer.from(body), 'array', PROTOTYPE_COLUMNS)
    assert.ok(fast, 'the reader answers this row itself')
    assert.deepEqual(fast, typeRows(PROTOTYPE_COLUMNS, JSON.parse(body)).rows)
    assert.equal(fast[0]!.at(-1), null)
  })

  it('gives up on what it must leave to the reference path', () => {
    for (const text of [
      '[{"timestamp":"2026-01-01T00:00:00Z","s":"a","s":"b"}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","S":"a"}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","s":"\\u0000"}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","d":{"\\u0000":1}}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","d":"x\\u0000"}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","d":["\\u0000"]}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","s":"\\ud800"}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","l":9007199254740993}]',
      '[{"timestamp":"2026-01-01T00:00:00Z","r":0.10000000000000001}]',
      '[{"timestamp":"2026-01-01T00:00:00Z"}] x',
      '\ufeff[{"timestamp":"2026-01-01T00:00:00Z"}]',
      '[{"timestamp":"yesterday"}]',
      '[{"s":"no timestamp"}]',
      '{"timestamp":"2026-01-01T00:00:00Z"}',
      `[{"timestamp":"2026-01-01T00:00:00Z","d":${'['.repeat(63)}${']'.repeat(63)}}]`,
    ]) {
      assert.equal(readTypedRows(Buffer.from(text), 'array', COLUMNS), undefined, text)
    }
    assert.equal(readTypedRows(Buffer.from('{"timestamp":"2026-01-01T00:00:00Z","d":[\n1]}'), 'lines', COLUMNS), undefined)
    assert.equal(readTypedRows(Buffer.from([0x5b, 0xff, 0x5d]), 'array', COLUMNS), undefined)
  })
})

for (const backend of BACKENDS) {
  describe(`${backend}: push ingest keeps the reference's errors`, () => {
    let server: TestServer
    let editor: string
    const path = (lookup: string) => `/oi-api/ingest/data-connections/${lookup}`
    /** Sends bytes as they are (the test server's api() sends text). */
    const post = async (token: string, body: Uint8Array | string, lookup = 'rows', contentType = 'application/json') => {
      const response = await fetch(`${server.baseUrl}${path(lookup)}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': contentType },
        body,
      })
      const text = await response.text()
      return { status: response.status, headers: response.headers, text, body: JSON.parse(text) as unknown }
    }
    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, pushConnectionConfig('rows', 'Rows', COLUMNS))
      editor = await server.token('editor')
    })
    after(() => server.stop())

    it('400 with the reference message for bodies the reader gives up on', async () => {
      const cases: [Uint8Array | string, string][] = [
        ['[{"timestamp":"2026-01-01T00:00:00Z","s":"a","s":"b"}]', 'application/json'],
        ['[{"timestamp":"2026-01-01T00:00:00Z","s":"\\u0000"}]', 'application/json'],
        ['[{"timestamp":"2026-01-01T00:00:00Z","s":"\\ud800"}]', 'application/json'],
        ['[{"timestamp":"2026-01-01T00:00:00Z","l":9223372036854775808}]', 'application/json'],
        ['[{"timestamp":"2026-01-01T00:00:00Z"}] x', 'application/json'],
        [Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]), 'application/json'],
        ['[{"timestamp":"2026-02-30T00:00:00Z","S":1}]', 'application/json'],
        ['[{"timestamp":"2026-01-01T00:00:00Z","i":2147483648},{"s":1}]', 'application/json'],
        ['{"timestamp":"2026-01-01T00:00:00Z"}\n{"timestamp":"x","s":"\\u0000"}', 'application/x-ndjson'],
        [Buffer.from([0x7b, 0xff, 0x7d]), 'application/x-ndjson'],
      ].map(([body, type]) => [body as Uint8Array | string, type as string])
      for (const [body, contentType] of cases) {
        const bytes = typeof body === 'string' ? Buffer.from(body) : body
        const expected = reference(bytes, contentType === 'application/json' ? 'array' : 'lines', COLUMNS)
        assert.ok('error' in expected, String(body))
        const response = await post(editor, body, 'rows', contentType)
        assert.equal(response.status, 400, response.text)
        const message = errorMessage(response)
        // Parse errors are the message itself; row problems come inside the batch's summary.
        assert.ok(message === expected.error || message.endsWith(`none were stored: ${expected.error}`), `${message}\n≠ ${expected.error}`)
      }
    })

    it('a body that does not parse is refused before rights and connection checks, as before', async () => {
      const analyst = await server.token('analyst')
      const malformed = '[{"timestamp":"2026-01-01T00:00:00Z",}]'
      const expected = reference(Buffer.from(malformed), 'array', COLUMNS)
      assert.ok('error' in expected)
      for (const [token, lookup] of [
        [analyst, 'rows'],
        [editor, 'nope'],
        [editor, 'x'.repeat(65)],
      ] as const) {
        const response = await post(token, malformed, lookup)
        assert.equal(response.status, 400, response.text)
        assert.equal(errorMessage(response), expected.error)
      }
      // NDJSON lines were always parsed after the rights check, and before the connection's.
      const badLine = '{"timestamp":"2026-01-01T00:00:00Z"}\n{oops}'
      assert.equal((await post(analyst, badLine, 'rows', 'application/x-ndjson')).status, 403)
      const unknown = await post(editor, badLine, 'nope', 'application/x-ndjson')
      assert.equal(unknown.status, 400)
      assert.match(errorMessage(unknown), /^line 2 is not valid JSON/)
      // A well-formed body meets the other checks.
      assert.equal((await post(editor, '[{"timestamp":"2026-01-01T00:00:00Z"}]', 'nope')).status, 404)
      assert.equal((await post(analyst, '[{"timestamp":"2026-01-01T00:00:00Z"}]')).status, 403)
      const object = await post(editor, '{"timestamp":"2026-01-01T00:00:00Z"}', 'nope')
      assert.match(errorMessage(object), /must be a JSON array/)
    })

    it('stores what the reader reads exactly as the reference would have typed it', async () => {
      const body =
        '[{"timestamp":"2026-01-29T12:34:56.1234567+01:00","s":"caf\\u00e9","r":21.37,"l":-42,"d":{"a":[1,9007199254740993]},"g":"74BE27DE-1E4E-49D9-B579-FE0B331D3642","t":"90m"}]'
      const expected = reference(Buffer.from(body), 'array', COLUMNS)
      assert.ok('rows' in expected)
      const response = await post(editor, body)
      assert.equal(response.status, 200, response.text)
      const table = (await server.stores.config.connectionTables(server.workspace.id)).find((t) => t.lookup === 'rows')!
      const stored = await server.stores.data.rowsAfter(table, 0, 10)
      assert.deepStrictEqual(stored.at(-1)!.values, expected.rows[0])
    })
  })
}
