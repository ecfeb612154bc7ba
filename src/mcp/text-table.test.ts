/**
 * The text table AI clients read next to the structured rows.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_CELL, textTable } from './text-table.js'

describe('text table', () => {
  it('pads columns, escapes pipes, flattens newlines, shows null as empty and JSON for objects', () => {
    assert.equal(
      textTable(
        ['sensor', 'value', 'tags'],
        [
          { sensor: 's|1', value: 1.5, tags: { a: [1] } },
          { sensor: 'line\nbreak', value: null, tags: null },
        ],
      ),
      [
        '| sensor     | value | tags      |',
        '| ---------- | ----- | --------- |',
        '| s\\|1       | 1.5   | {"a":[1]} |',
        '| line⏎break |       |           |',
      ].join('\n'),
    )
  })

  it('cuts long cells and says so with an ellipsis; an empty result says (no rows)', () => {
    const table = textTable(['x'], [{ x: 'y'.repeat(500) }])
    assert.equal(table.split('\n')[2], `| ${'y'.repeat(MAX_CELL - 1)}… |`)
    assert.equal(textTable(['a'], []), '| a   |\n| --- |\n(no rows)')
  })
})
