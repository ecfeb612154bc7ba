import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createGroupCommitQueue, QueueClosedError } from './group-commit.js'

type Groups = ReadonlyMap<string, { readonly key: string; readonly entries: readonly number[] }>

/** A queue whose commit records each flush and answers entry × 10, optionally after a gate opens. */
function harness(options: { fail?: (groups: Groups) => boolean; maxBatch?: number } = {}) {
  const flushes: Record<string, number[]>[] = []
  let gate: Promise<void> = Promise.resolve()
  const queue = createGroupCommitQueue<string, number, number>({
    keyOf: (k) => k,
    ...(options.maxBatch !== undefined ? { maxBatch: options.maxBatch } : {}),
    async commit(groups) {
      await gate
      flushes.push(Object.fromEntries([...groups].map(([k, g]) => [k, [...g.entries]])))
      if (options.fail?.(groups)) throw new Error('disk full')
      return new Map([...groups].map(([k, g]) => [k, g.entries.map((e) => e * 10)]))
    },
  })
  return {
    queue,
    flushes,
    hold: () => {
      let open!: () => void
      gate = new Promise((r) => {
        open = r
      })
      return () => open()
    },
  }
}

describe('group commit', () => {
  it('commits everything submitted in one turn in one flush, grouped per key in submission order, and answers each entry', async () => {
    const { queue, flushes } = harness()
    const results = await Promise.all([queue.submit('a', 1), queue.submit('b', 2), queue.submit('a', 3), queue.submit('a', 4)])
    assert.deepEqual(results, [10, 20, 30, 40])
    assert.deepEqual(flushes, [{ a: [1, 3, 4], b: [2] }])
  })

  it('entries arriving during a flush form the next one (no timer, no partial flush)', async () => {
    const { queue, flushes, hold } = harness()
    const open = hold()
    const first = queue.submit('a', 1)
    await new Promise((r) => setImmediate(r))
    const later = [queue.submit('a', 2), queue.submit('b', 3)]
    open()
    assert.deepEqual(await Promise.all([first, ...later]), [10, 20, 30])
    assert.deepEqual(flushes, [{ a: [1] }, { a: [2], b: [3] }])
  })

  it('a failed flush rejects every entry it carried, and only those', async () => {
    const { queue, flushes, hold } = harness({ fail: (groups) => groups.has('bad') })
    const open = hold()
    const carried = [queue.submit('a', 1), queue.submit('bad', 2)]
    await new Promise((r) => setImmediate(r))
    const next = queue.submit('a', 3)
    open()
    const settled = await Promise.allSettled([...carried, next])
    assert.deepEqual(
      settled.map((s) => s.status),
      ['rejected', 'rejected', 'fulfilled'],
    )
    assert.match(String((settled[0] as PromiseRejectedResult).reason), /disk full/)
    assert.equal((settled[2] as PromiseFulfilledResult<number>).value, 30)
    assert.equal(flushes.length, 2)
  })

  it('splits at maxBatch, keeping the order', async () => {
    const { queue, flushes } = harness({ maxBatch: 3 })
    const results = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((n) => queue.submit('a', n)))
    assert.deepEqual(results, [10, 20, 30, 40, 50, 60, 70])
    assert.deepEqual(flushes, [{ a: [1, 2, 3] }, { a: [4, 5, 6] }, { a: [7] }])
  })

  it('drain waits for what was submitted; close drains and then refuses new entries', async () => {
    const { queue, flushes, hold } = harness()
    await queue.drain()
    const open = hold()
    let done = false
    void queue.submit('a', 1).then(() => {
      done = true
    })
    const drained = queue.drain()
    setTimeout(open, 20)
    await drained
    assert.equal(done, true)
    await queue.close()
    await assert.rejects(queue.submit('a', 2), QueueClosedError)
    assert.deepEqual(flushes, [{ a: [1] }])
  })
})
