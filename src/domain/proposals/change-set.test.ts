/**
 * Proposal change sets: applying create/update/delete of warm queries, refusing what does not
 * apply, detecting that the configuration moved, and the diff shown to reviewers and models.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { validateConfig } from '../workspace-config/validate-config.js'
import { applyChangeSet, conflicts, type ProposedChange, proposedChangeSchema } from './change-set.js'
import { diffChangeSet, summariseDiff } from './proposal-diff.js'

const base = validateConfig({
  connections: [
    {
      lookup: 'sensors',
      kind: 'push',
      table: 'Sensors',
      columns: [
        { name: 'timestamp', type: 'datetime' },
        { name: 'value', type: 'real' },
      ],
    },
  ],
  warmQueries: [
    { lookup: 'avg', path: 'plant/avg', description: 'Average value', query: 'Sensors | summarize avg(value)' },
    { lookup: 'count', query: 'Sensors | count' },
  ],
})

const parse = (change: unknown): ProposedChange => proposedChangeSchema.parse(change)

describe('proposal change sets', () => {
  it('creates, updates (null clears a field) and deletes warm queries, in order', () => {
    const changes = [
      parse({ entity: 'warmQuery', action: 'create', lookup: 'max', query: 'Sensors | summarize max(value)', description: 'Peak' }),
      parse({
        entity: 'warmQuery',
        action: 'update',
        lookup: 'avg',
        query: 'Sensors | summarize avg(value) by bin(timestamp, 1h)',
        path: null,
      }),
      parse({ entity: 'warmQuery', action: 'delete', lookup: 'count' }),
    ]
    const { document, problems } = applyChangeSet(base, changes)
    assert.deepEqual(problems, [])
    assert.deepEqual(document.warmQueries, [
      { lookup: 'avg', description: 'Average value', query: 'Sensors | summarize avg(value) by bin(timestamp, 1h)' },
      { lookup: 'max', description: 'Peak', query: 'Sensors | summarize max(value)' },
    ])
    assert.equal(base.warmQueries.length, 2, 'the base document is not mutated')
    assert.equal(base.warmQueries[0]!.path, 'plant/avg')
  })

  it('says why a change does not apply, naming its index', () => {
    const { problems } = applyChangeSet(base, [
      parse({ entity: 'warmQuery', action: 'create', lookup: 'avg', query: 'print 1' }),
      parse({ entity: 'warmQuery', action: 'update', lookup: 'nope', description: 'x' }),
      parse({ entity: 'warmQuery', action: 'delete', lookup: 'gone' }),
      parse({ entity: 'warmQuery', action: 'delete', lookup: 'count' }),
      parse({ entity: 'warmQuery', action: 'update', lookup: 'count', description: 'again' }),
    ])
    assert.deepEqual(problems, [
      'changes[0]: a warm query with the lookup "avg" already exists; propose an update instead',
      'changes[1]: no warm query has the lookup "nope"; propose a create instead',
      'changes[2]: no warm query has the lookup "gone"',
      'changes[4]: warmQuery count is already changed by changes[3]; put everything about it in one change',
    ])
  })

  it('the schema refuses empty updates, bad lookups and paths, empty KQL and unknown fields', () => {
    for (const [input, message] of [
      [{ entity: 'warmQuery', action: 'update', lookup: 'avg' }, /at least one of query, path or description/],
      [{ entity: 'warmQuery', action: 'create', lookup: 'has space', query: 'print 1' }, /a lookup is/],
      [{ entity: 'warmQuery', action: 'create', lookup: 'x', query: 'print 1', path: '/abs' }, /an API path is/],
      [{ entity: 'warmQuery', action: 'create', lookup: 'x', query: '   ' }, /KQL text is empty/],
      [{ entity: 'warmQuery', action: 'delete', lookup: 'x', query: 'print 1' }, /query/],
      [{ entity: 'connection', action: 'delete', lookup: 'x' }, /entity|expected/i],
      [{ entity: 'warmQuery', action: 'approve', lookup: 'x' }, /action|expected/i],
    ] as const) {
      const result = proposedChangeSchema.safeParse(input)
      assert.equal(result.success, false, JSON.stringify(input))
      assert.match(JSON.stringify(result.error!.issues), message)
    }
  })

  it('finds conflicts only for entities that moved since the proposal was made', () => {
    const changes = [
      parse({ entity: 'warmQuery', action: 'update', lookup: 'avg', description: 'Mean' }),
      parse({ entity: 'warmQuery', action: 'create', lookup: 'max', query: 'print 1' }),
    ]
    const { document } = applyChangeSet(base, changes)
    const before = diffChangeSet(base, document, changes).entries.map((e) => e.before ?? undefined)
    assert.deepEqual(conflicts(base, changes, before), [])
    const unrelated = validateConfig({ ...base, warmQueries: [...base.warmQueries, { lookup: 'other', query: 'print 2' }] })
    assert.deepEqual(conflicts(unrelated, changes, before), [])
    const moved = validateConfig({
      ...base,
      warmQueries: [
        { ...base.warmQueries[0]!, query: 'print 3' },
        { lookup: 'max', query: 'print 4' },
      ],
    })
    assert.deepEqual(conflicts(moved, changes, before), [
      'warmQuery avg was changed after the proposal was made',
      'warmQuery max was created after the proposal was made',
    ])
    const removed = validateConfig({ ...base, warmQueries: [base.warmQueries[1]!] })
    assert.deepEqual(conflicts(removed, changes, before), ['warmQuery avg was removed after the proposal was made'])
  })

  it('diffs entity by entity, with a readable text', () => {
    const changes = [
      parse({ entity: 'warmQuery', action: 'create', lookup: 'max', query: 'Sensors\n| summarize max(value)', path: 'plant/max' }),
      parse({ entity: 'warmQuery', action: 'update', lookup: 'avg', description: 'Mean value', path: null }),
      parse({ entity: 'warmQuery', action: 'delete', lookup: 'count' }),
    ]
    const diff = diffChangeSet(base, applyChangeSet(base, changes).document, changes)
    assert.deepEqual(
      diff.entries.map((e) => [e.action, e.id, e.fields]),
      [
        ['added', 'max', []],
        ['changed', 'avg', ['path', 'description']],
        ['removed', 'count', []],
      ],
    )
    assert.deepEqual(diff.entries[1]!.before, base.warmQueries[0])
    assert.equal(diff.entries[0]!.before, null)
    assert.equal(diff.entries[2]!.after, null)
    assert.equal(
      diff.text,
      [
        '+ warm query max',
        '+   path: plant/max',
        '+   query: Sensors',
        '+          | summarize max(value)',
        '~ warm query avg (path, description)',
        '-   path: plant/avg',
        '-   description: Average value',
        '+   description: Mean value',
        '- warm query count',
        '-   query: Sensors | count',
      ].join('\n'),
    )
    assert.equal(summariseDiff(diff), '+ warmQuery max, ~ warmQuery avg (path, description), - warmQuery count')
  })

  it('property: a change set applied to its base never conflicts there, and every real change conflicts with the result', () => {
    const lookupArb = fc.constantFrom('a', 'b', 'c', 'd', 'e')
    const textArb = fc.constantFrom('print 1', 'print 2', 'Sensors | count', 'Sensors | take 5')
    const docArb = fc.uniqueArray(fc.record({ lookup: lookupArb, query: textArb }), { selector: (q) => q.lookup, maxLength: 5 })
    const changeArb = fc.oneof(
      fc.record({ entity: fc.constant('warmQuery'), action: fc.constant('create'), lookup: lookupArb, query: textArb }),
      fc.record({ entity: fc.constant('warmQuery'), action: fc.constant('update'), lookup: lookupArb, query: textArb }),
      fc.record({ entity: fc.constant('warmQuery'), action: fc.constant('delete'), lookup: lookupArb }),
    )
    fc.assert(
      fc.property(docArb, fc.uniqueArray(changeArb, { selector: (c) => c.lookup, maxLength: 5 }), (queries, rawChanges) => {
        const document = validateConfig({ warmQueries: queries })
        const changes = rawChanges.map(parse)
        const applied = applyChangeSet(document, changes)
        fc.pre(applied.problems.length === 0)
        const diff = diffChangeSet(document, applied.document, changes)
        const before = diff.entries.map((e) => e.before ?? undefined)
        assert.deepEqual(conflicts(document, changes, before), [])
        const moved = conflicts(applied.document, changes, before)
        assert.equal(moved.length, diff.entries.filter((e) => e.action !== 'unchanged').length)
        assert.deepEqual(validateConfig(applied.document), applied.document, 'validating an applied document is idempotent')
      }),
      { numRuns: 200 },
    )
  })
})
