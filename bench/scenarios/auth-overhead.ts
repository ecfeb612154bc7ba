/**
 * @module
 * The cost of the /oi-api pipeline (bearer verification with the revocation lookup, right check,
 * zod validation, envelope and headers) on a no-op route declared through the route registry,
 * against a bare Fastify route returning the same JSON, in the same process and run.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Fastify from 'fastify'
import { z } from 'zod'
import { loadConfig } from '../../src/config/config.js'
import { apiServicesOf } from '../../src/domain/services.js'
import { buildApp } from '../../src/http/app.js'
import { defineRoute } from '../../src/http/route-registry.js'
import { createServices } from '../../src/main.js'
import { formatRate, type Scenario } from '../harness.js'
import { load } from '../load.js'

export const authOverhead: Scenario = {
  id: 'auth-overhead',
  title: 'Authenticated no-op route vs bare Fastify route (cost of auth + validation + envelope)',
  async run() {
    const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-'))
    const handle = await createServices(loadConfig({ data: dir, port: 0 }, {}), { scryptCost: { log2N: 10, r: 8, p: 1 } })
    const { services } = handle
    const workspace = await services.admin.createWorkspace('bench')
    const account = await services.admin.addAccount({ name: 'bench', role: 'analyst', workspaceId: workspace.id })
    const { token } = await services.access.createToken({
      workspaceId: workspace.id,
      accountId: account.id,
      name: 'bench',
      expires: '1h',
      createdBy: { id: account.id, name: account.name },
    })
    const noop = defineRoute({
      method: 'GET',
      path: '/bench/noop',
      operationId: 'benchNoop',
      summary: 'no-op',
      tag: 'Bench',
      rights: ['warm-queries:read'],
      query: z.object({ n: z.coerce.number().int().optional() }),
      responses: { 200: { description: 'ok', schema: z.object({ ok: z.boolean() }) } },
      handler: async () => ({ ok: true }),
    })
    const app = await buildApp({
      services: apiServicesOf(services),
      routes: [noop],
      version: 'bench',
      publicUrl: 'http://127.0.0.1',
      logger: false,
    })
    const bare = Fastify({ logger: false })
    bare.get('/bench/noop', async () => ({ ok: true }))
    try {
      const appUrl = await app.listen({ port: 0, host: '127.0.0.1' })
      const bareUrl = await bare.listen({ port: 0, host: '127.0.0.1' })
      await load({ url: `${bareUrl}/bench/noop?n=1`, seconds: 2 }) // warm-up
      await load({ url: `${appUrl}/oi-api/bench/noop?n=1`, headers: { authorization: `Bearer ${token}` }, seconds: 2 })
      const baseline = await load({ url: `${bareUrl}/bench/noop?n=1`, seconds: 8 })
      const subject = await load({ url: `${appUrl}/oi-api/bench/noop?n=1`, headers: { authorization: `Bearer ${token}` }, seconds: 8 })
      if (subject.non2xx > 0 || subject.errors > 0)
        throw new Error(`the authenticated route failed ${subject.non2xx + subject.errors} requests`)
      const ratio = subject.requestsPerSecond / baseline.requestsPerSecond
      return {
        rows: [
          {
            measure: 'GET no-op, 32 connections, SQLite',
            subject: `${formatRate(subject.requestsPerSecond)} (p99 ${subject.p99Ms} ms)`,
            baseline: `${formatRate(baseline.requestsPerSecond)} (p99 ${baseline.p99Ms} ms)`,
            ratio,
            target: 'informational (design §12 targets ≥ 0.6× for a warm query)',
            met: undefined,
          },
        ],
        notes: [
          'Subject: the full /oi-api pipeline: JWT check (Ed25519 signature verified once per token text, expiry every time), token/account/membership read for revocation and effective rights (one SQL read per request, never cached, so revocation is immediate), right check, zod query validation, envelope headers.',
          'Baseline: a bare Fastify route returning the same JSON. autocannon runs in its own worker thread; both servers share the process.',
        ],
      }
    } finally {
      await app.close()
      await bare.close()
      await handle.close()
      rmSync(dir, { recursive: true, force: true })
    }
  },
}
