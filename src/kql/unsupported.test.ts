import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { describe, it } from 'node:test'
import { compileQuery } from './compile-query.js'
import { EMPTY_SCHEMA } from './index.js'
import { KqlError } from './kql-error.js'
import { UNSUPPORTED_FUNCTIONS, UNSUPPORTED_OPERATORS } from './unsupported.js'

/** The error compiling `query` raises (fails when it compiles). */
function errorOf(query: string): KqlError {
  try {
    compileQuery(query, EMPTY_SCHEMA, { dialect: 'sqlite' })
  } catch (error) {
    assert.ok(error instanceof KqlError, String(error))
    return error
  }
  assert.fail(`expected an error for: ${query}`)
}

function assertRefused(query: string, name: string): void {
  const e = errorOf(query)
  assert.equal(e.kind, 'unsupported', `${query}: ${e.message}`)
  assert.match(e.message, /not supported/)
  assert.ok(e.message.includes(name), `${query}: the message names ${name}: ${e.message}`)
  assert.doesNotMatch(e.message, /did you mean|unknown function/)
}

describe('documented KQL the engine refuses (issue 17 item 12)', () => {
  it('every catalogued function is refused by name with its reason, never "unknown function"', () => {
    for (const [name, reason] of UNSUPPORTED_FUNCTIONS) {
      assertRefused(`print x = ${name}(1)`, `${name}(`)
      assert.ok(errorOf(`print x = ${name}(1)`).message.includes(reason))
    }
  })

  it('hash_combine and hash_many are refused rather than answered with another number', () => {
    assertRefused('print value1 = "Hello", value2 = "World" | extend combined = hash_many(value1, value2)', 'hash_many()')
    assertRefused('print h = hash_combine(hash("Hello"), hash("World"))', 'hash_combine()')
  })

  it('geospatial functions on shapes are refused by name; implemented ones still compile', () => {
    assertRefused('print geo_polygon_area(dynamic({"type":"Polygon","coordinates":[]}))', 'geo_polygon_area()')
    assertRefused('print geo_point_to_h3cell(1.0, 2.0)', 'geo_point_to_h3cell()')
    compileQuery('print geo_distance_2points(-122.3, 47.6, -118.2, 34.1)', EMPTY_SCHEMA, { dialect: 'sqlite' })
  })

  it('catalogued operators are refused by name', () => {
    for (const name of UNSUPPORTED_OPERATORS.keys()) {
      if (name === 'externaldata') continue // a source, checked below
      assertRefused(`print x = 1 | ${name} x`, `'${name}'`)
    }
    assertRefused('externaldata (x:string) [@"https://example.com/a.csv"]', "'externaldata'")
  })

  it('plugins other than bag_unpack, pivot and narrow are refused by name', () => {
    assertRefused('print x = 1 | evaluate autocluster()', "'autocluster'")
    // each with its own reason: a deterministic plugin is not called sandboxed or machine learning
    assert.match(errorOf('print x = 1 | evaluate python(typeof(*), "")').message, /sandbox/)
    assert.match(errorOf('print x = 1 | evaluate sql_request("a", "b")').message, /outside the workspace/)
    assert.match(errorOf('print x = 1 | evaluate autocluster()').message, /does not publish/)
    assert.match(errorOf('print x = 1 | evaluate rolling_percentile(x, 50, x, 1, 1)').message, /does not implement/)
  })

  it('every documented function compiles or is refused by name (never "unknown function")', () => {
    const { names } = JSON.parse(readFileSync(new URL('./documented-functions.json', import.meta.url), 'utf8')) as { names: string[] }
    assert.ok(names.length > 400)
    for (const name of names) {
      for (const q of [`print x = ${name}(1)`, `print x = 1 | summarize ${name}(x)`]) {
        try {
          compileQuery(q, EMPTY_SCHEMA, { dialect: 'sqlite' })
        } catch (error) {
          assert.ok(error instanceof KqlError)
          assert.doesNotMatch(error.message, /unknown function|did you mean/, `${q}: ${error.message}`)
        }
      }
    }
  })

  it('a misspelt implemented function still gets a suggestion', () => {
    const e = errorOf('print strlenn("a")')
    assert.equal(e.kind, 'semantic')
    assert.match(e.message, /unknown function 'strlenn'.*did you mean 'strlen'/)
  })
})
