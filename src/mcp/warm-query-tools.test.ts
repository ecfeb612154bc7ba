import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { QueryResponse } from '../domain/queries/query-service.js'
import { presentRun } from './warm-query-tools.js'

describe('presentRun', () => {
  it('carries longs beyond 2^53 as digit strings, in long columns and inside dynamic values (JSON.stringify cannot write a bigint)', () => {
    const response = {
      columns: [
        { name: 'n', type: 'long' },
        { name: 'd', type: 'dynamic' },
      ],
      results: [{ n: 9007199254740993n, d: { a: [-9223372036854775808n, 1], b: 'x' } }],
      truncated: false,
      rowCount: 1,
      approvedBy: 'analyst',
      approvedAt: '2026-01-01T00:00:00Z',
    } as unknown as QueryResponse
    const { structured, text } = presentRun(response, 10)
    assert.deepEqual(structured.rows, [{ n: '9007199254740993', d: { a: ['-9223372036854775808', 1], b: 'x' } }])
    assert.doesNotThrow(() => JSON.stringify(structured))
    assert.match(text, /\{"a":\[-9223372036854775808,1\],"b":"x"\}/)
  })
})
