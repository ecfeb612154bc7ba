/**
 * Query workers run at a lower CPU priority than the event loop (PROVENANT_QUERY_WORKER_NICE), so a
 * hostile query on a busy machine takes CPU from other query work before it takes it from /healthz,
 * appends and streams (issue 15). Linux only: the nice value is per thread there, read back from
 * /proc/self/task/<tid>/stat (field 19).
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'
import { after, before, describe, it } from 'node:test'
import { eventually } from '../support/eventually.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

/** The nice value of every thread of this process, by thread id. */
function threadNiceValues(): Map<number, number> {
  const out = new Map<number, number>()
  for (const tid of readdirSync('/proc/self/task')) {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    out.set(Number(tid), Number(fields[16]))
  }
  return out
}

describe('query workers run below the event loop’s CPU priority', { skip: process.platform !== 'linux' && 'Linux only' }, () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer('sqlite', { config: { queryCapacity: { workers: 2, workerNice: 7 } } })
  })
  after(() => server?.stop())

  it('every query worker thread has the configured nice value and the main thread keeps its own', async () => {
    const mainNice = threadNiceValues().get(process.pid)
    const token = await server.token('analyst')
    const answer = await server.api('POST', '/oi-api/warm-queries', { token, body: { Query: 'print x = 1' }, unchecked: true })
    assert.equal(answer.status, 200, answer.text)
    // Each worker lowers its priority once it has started; the pool starts two and a spare.
    const niced = await eventually(
      async () => [...threadNiceValues()].filter(([tid, nice]) => tid !== process.pid && nice === 7),
      (threads) => threads.length >= 2,
      'two query worker threads at nice 7',
      120_000,
    )
    assert.ok(niced.length >= 2)
    assert.equal(threadNiceValues().get(process.pid), mainNice, 'the event loop thread keeps its priority')
    assert.notEqual(mainNice, 7)
  })
})
