/**
 * @module
 * What recording every call costs (spec 1, design §5): the same read route with the api-call
 * record committed before each reply, and with recording replaced by a no-op, in the same process
 * and run (two apps over the same services).
 */
import { apiServicesOf } from '../../src/domain/services.js'
import { buildApp } from '../../src/http/app.js'
import { apiRoutes } from '../../src/http/routes/index.js'
import { formatRate, type Scenario } from '../harness.js'
import { load } from '../load.js'
import { startBenchRuntime } from './ledger-support.js'

export const callRecording: Scenario = {
  id: 'call-recording',
  title: 'Activity log: cost of recording every call on a read route',
  async run() {
    const bench = await startBenchRuntime('sqlite', 'analyst')
    const services = bench.runtime.services
    const unrecorded = apiServicesOf({ ...services, activity: { ...services.activity, recordCall: async () => {} } })
    const bare = await buildApp({
      services: unrecorded,
      routes: apiRoutes(unrecorded),
      version: 'bench',
      publicUrl: 'http://127.0.0.1',
      logger: false,
    })
    try {
      const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' })
      const headers = { authorization: `Bearer ${bench.token}` }
      const path = '/oi-api/provenance/reason-categories'
      await load({ url: `${bench.url}${path}`, headers, seconds: 2 })
      await load({ url: `${bareUrl}${path}`, headers, seconds: 2 })
      const without = await load({ url: `${bareUrl}${path}`, headers, seconds: 8 })
      const recorded = await load({ url: `${bench.url}${path}`, headers, seconds: 8 })
      if (recorded.non2xx + recorded.errors + without.non2xx + without.errors > 0) throw new Error('read requests failed')
      const stats = services.ledger.stats()
      return {
        rows: [
          {
            measure: 'GET /oi-api/provenance/reason-categories, 32 clients, SQLite',
            subject: `${formatRate(recorded.requestsPerSecond)} with recording (p99 ${recorded.p99Ms} ms)`,
            baseline: `${formatRate(without.requestsPerSecond)} without (p99 ${without.p99Ms} ms)`,
            ratio: recorded.requestsPerSecond / without.requestsPerSecond,
            target:
              'informational (every call is a durable record; design §12 asks ≥ 0.6× of bare Fastify for a warm query with recording on)',
            met: undefined,
          },
        ],
        notes: [
          `With recording, each reply waits for its api-call record's group commit (mean ${(stats.entries / Math.max(1, stats.flushes)).toFixed(1)} records per commit over the run, including the set-up).`,
          'Without: the same app and services with the call recorder replaced by a no-op (the /oi-api pipeline is otherwise identical: auth, revocation read, rights, validation, envelope).',
        ],
      }
    } finally {
      await bare.close()
      await bench.close()
    }
  },
}
