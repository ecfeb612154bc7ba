import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { BoundAggregate } from '../functions/function-types.js'
import type * as P from '../plan/plan.js'
import type { KqlType, KqlValue } from '../types.js'
import { runPlan } from './evaluator.js'
import { scanSql } from './scan-sql.js'

const ctx = { now: 0n, random: () => 0.5 }
const run = (plan: P.PlanNode, source?: Parameters<typeof runPlan>[1]['source']) => runPlan(plan, { ctx, source })

function values(columns: [string, KqlType][], rows: KqlValue[][]): P.Values {
  return { kind: 'Values', columns: columns.map(([name, type]) => ({ name, type })), rows }
}

function col(plan: P.PlanNode, name: string): P.ColumnRef {
  const index = plan.columns.findIndex((c) => c.name === name)
  return { kind: 'ColumnRef', index, name, type: plan.columns[index]!.type }
}

const countAggregate: BoundAggregate = {
  outputs: [{ name: 'n', type: 'long' }],
  create() {
    let n = 0
    return { add: () => void n++, result: () => [n] }
  },
}

describe('evaluator: join', () => {
  const left = values(
    [
      ['k', 'string'],
      ['a', 'long'],
    ],
    [
      ['x', 1],
      ['X', 2],
      ['', 3],
      ['y', 4],
    ],
  )
  const right = values(
    [
      ['k', 'string'],
      ['b', 'long'],
    ],
    [
      ['x', 10],
      ['', 30],
      ['z', 40],
    ],
  )
  const join = (joinKind: P.JoinKind): P.Join => ({
    kind: 'Join',
    joinKind,
    left,
    right,
    leftKeys: [0],
    rightKeys: [0],
    rightOutput: [0, 1],
    isLookup: false,
    columns: [
      { name: 'k', type: 'string' },
      { name: 'a', type: 'long' },
      { name: 'k1', type: 'string' },
      { name: 'b', type: 'long' },
    ],
  })

  it('compares string keys case-sensitively and matches empty keys with each other', async () => {
    assert.deepEqual(await run(join('inner')), [
      ['x', 1, 'x', 10],
      ['', 3, '', 30],
    ])
  })

  it('pads the missing side with "" for strings and null otherwise', async () => {
    assert.deepEqual(await run(join('fullouter')), [
      ['x', 1, 'x', 10],
      ['X', 2, '', null],
      ['', 3, '', 30],
      ['y', 4, '', null],
      ['', null, 'z', 40],
    ])
  })

  it('keeps one side for semi and anti joins', async () => {
    assert.deepEqual(await run({ ...join('leftanti'), columns: left.columns }), [
      ['X', 2],
      ['y', 4],
    ])
    assert.deepEqual(await run({ ...join('rightsemi'), columns: right.columns }), [
      ['x', 10],
      ['', 30],
    ])
  })
})

describe('evaluator: other operators', () => {
  it('unions with per-input column mappings and source names', async () => {
    const a = values([['x', 'long']], [[1]])
    const b = values([['s', 'string']], [['q']])
    const plan: P.Union = {
      kind: 'Union',
      inputs: [a, b],
      mappings: [
        [-1, 0, -1],
        [-1, -1, 0],
      ],
      sourceNames: ['A', 'B'],
      columns: [
        { name: 'src', type: 'string' },
        { name: 'x', type: 'long' },
        { name: 's', type: 'string' },
      ],
    }
    assert.deepEqual(await run(plan), [
      ['A', 1, ''],
      ['B', null, 'q'],
    ])
  })

  it('sorts stably with per-key null placement', async () => {
    const input = values(
      [
        ['a', 'long'],
        ['b', 'string'],
      ],
      [
        [2, 'p'],
        [null, 'q'],
        [1, 'r'],
        [2, 's'],
      ],
    )
    const sorted = await run({
      kind: 'Sort',
      columns: input.columns,
      input,
      keys: [{ expr: col(input, 'a'), descending: true, nullsFirst: true }],
    })
    assert.deepEqual(
      sorted.map((r) => r[1]),
      ['q', 'p', 's', 'r'],
    )
  })

  it('expands arrays, bags, nulls and scalars; empty arrays produce no rows', async () => {
    const input = values(
      [
        ['k', 'long'],
        ['d', 'dynamic'],
      ],
      [
        [1, [10, 20]],
        [2, { p: 'a', q: 'b' }],
        [3, null],
        [4, []],
        [5, 'scalar'],
      ],
    )
    const plan: P.MvExpand = {
      kind: 'MvExpand',
      input,
      columns: [...input.columns, { name: 'i', type: 'long' }],
      bagExpansion: 'bag',
      items: [{ expr: col(input, 'd'), output: 1, type: 'dynamic' }],
      itemIndex: 2,
    }
    assert.deepEqual(await run(plan), [
      [1, 10, 0],
      [1, 20, 1],
      [2, { p: 'a' }, 0],
      [2, { q: 'b' }, 1],
      [3, null, 0],
      [5, 'scalar', 0],
    ])
  })

  it('casts expanded elements to typeof() without converting them', async () => {
    const input = values([['d', 'dynamic']], [[[1, '2', 3.5, null]]])
    const plan: P.MvExpand = {
      kind: 'MvExpand',
      input,
      columns: [{ name: 'd', type: 'long' }],
      bagExpansion: 'bag',
      items: [{ expr: col(input, 'd'), output: 0, type: 'long' }],
    }
    assert.deepEqual(await run(plan), [[1], [null], [null], [null]])
  })

  it('summarizes an empty input without keys into one row', async () => {
    const input = values([['a', 'long']], [])
    const plan: P.Summarize = {
      kind: 'Summarize',
      input,
      keys: [],
      columns: [{ name: 'n', type: 'long' }],
      aggregates: [{ name: 'count', args: [], star: false, impl: countAggregate, outputs: [{ name: 'n', type: 'long' }] }],
    }
    assert.deepEqual(await run(plan), [[0]])
    assert.deepEqual(
      await run({
        ...plan,
        keys: [col(input, 'a')],
        columns: [
          { name: 'a', type: 'long' },
          { name: 'n', type: 'long' },
        ],
      }),
      [],
    )
  })

  it('generates ranges of numbers and datetimes, including descending ones', async () => {
    const lit = (type: KqlType, value: KqlValue): P.Literal => ({ kind: 'Literal', type, value })
    assert.deepEqual(
      await run({ kind: 'Range', columns: [{ name: 'x', type: 'long' }], from: lit('long', 5), to: lit('long', 1), step: lit('long', -2) }),
      [[5], [3], [1]],
    )
    assert.deepEqual(
      await run({
        kind: 'Range',
        columns: [{ name: 'x', type: 'real' }],
        from: lit('real', 0),
        to: lit('real', 0.3),
        step: lit('real', 0.1),
      }).then((r) => r.length),
      4,
    )
    const day = 864000000000n
    assert.deepEqual(
      await run({
        kind: 'Range',
        columns: [{ name: 't', type: 'datetime' }],
        from: lit('datetime', 0n),
        to: lit('datetime', 2n * day),
        step: lit('timespan', day),
      }),
      [[0n], [day], [2n * day]],
    )
  })

  it('evaluates a materialized input once however often it is referenced', async () => {
    let reads = 0
    const scan: P.TableScan = { kind: 'TableScan', table: 'T', sqlName: 't', sqlColumns: ['x'], columns: [{ name: 'x', type: 'long' }] }
    const source = {
      query: () => {
        reads++
        return [[1], [2]]
      },
    }
    const m: P.Materialize = { kind: 'Materialize', id: 0, columns: scan.columns, input: scan }
    const plan: P.Union = { kind: 'Union', inputs: [m, m, m], mappings: [[0], [0], [0]], columns: scan.columns }
    assert.equal((await run(plan, source)).length, 6)
    assert.equal(reads, 1)
    assert.equal(scanSql(scan), 'SELECT "x" FROM "t"')
  })
})
