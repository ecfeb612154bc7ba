/**
 * The import boundaries of design §2 (style notes §6.7): the KQL engine is pure, domain code never
 * touches HTTP or SQL drivers, HTTP never reaches into storage. Walks src/ and fails on a
 * forbidden import.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const FORBIDDEN: Readonly<Record<string, RegExp>> = {
  'src/kql/': /from '(fastify|pg|better-sqlite3|@fastify\/[^']+|ws|pino)'|from '\.\.?\/(\.\.\/)*(domain|http|storage|portal|cli|mcp)\//,
  'src/domain/': /from '(fastify|pg|better-sqlite3|@fastify\/[^']+|ws|pino)'|from '(\.\.\/)+(http|storage|portal|cli|mcp)\//,
  'src/http/': /from '(pg|better-sqlite3)'|from '(\.\.\/)+storage\//,
  'src/mcp/': /from '(fastify|pg|better-sqlite3)'|from '(\.\.\/)+(storage|http)\//,
  'src/portal/': /from '(pg|better-sqlite3)'|from '(\.\.\/)+storage\//,
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? files(full) : name.endsWith('.ts') ? [full] : []
  })
}

describe('architecture: import boundaries', () => {
  const sources = files(join(ROOT, 'src')).map((f) => relative(ROOT, f))

  it('finds the sources', () => assert.ok(sources.length > 20))

  for (const [prefix, rule] of Object.entries(FORBIDDEN)) {
    it(`${prefix} keeps to its dependencies`, () => {
      const offenders = sources
        .filter((f) => f.startsWith(prefix) && !f.endsWith('.test.ts'))
        .flatMap((f) =>
          readFileSync(join(ROOT, f), 'utf8')
            .split('\n')
            .filter((line) => /^\s*(import|export) /.test(line) && rule.test(line))
            .map((line) => `${f}: ${line.trim()}`),
        )
      assert.deepEqual(offenders, [])
    })
  }

  it('the rule catches a forbidden import (self-check)', () => {
    assert.ok(FORBIDDEN['src/domain/']!.test("import pg from 'pg'"))
    assert.ok(FORBIDDEN['src/domain/']!.test("import { x } from '../../storage/sql-db.js'"))
    assert.ok(FORBIDDEN['src/kql/']!.test("import type { X } from '../domain/errors.js'"))
    assert.ok(!FORBIDDEN['src/domain/']!.test("import { compileQuery } from '../../kql/index.js'"))
  })
})
