/**
 * @module
 * The soak (issue 10, item 3): a mixed load against a real `provenant serve` child process — warm
 * queries, ad-hoc queries, activity-log appends and ingest (autocannon, rate-limited so the data
 * grows steadily rather than without bound), exports created and downloaded, corrections, an SSE
 * change-stream client and WebSocket live-stream clients — while the server's RSS and open file descriptors are sampled from /proc.
 * Reports 5xx per route, p99 per route, stream errors, and the RSS/fd trend after warm-up (least-
 * squares slope). `npm run soak -- --minutes 10 [--backend sqlite|postgres] [--no-write]` writes
 * its section of docs/benchmarks.md; test/scale/soak-smoke.test.ts runs it for 60 s in CI.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import type { Backend } from '../test/support/backends.js'
import { listenChanges } from '../test/support/change-listener.js'
import { call, processUsage, seedDeployment, startChildServer } from '../test/support/child-server.js'
import { sensorConfig } from '../test/support/fixtures.js'
import { connectLive } from '../test/support/live-client.js'
import { machine } from './harness.js'

export interface SoakOptions {
  readonly seconds: number
  readonly backend: Backend
  /** Multiplies every route's request rate (1 = the rates below). */
  readonly intensity?: number
  readonly sampleEveryMs?: number
  readonly log?: (line: string) => void
}

export interface RouteReport {
  readonly route: string
  /** Requests answered 2xx. */
  readonly ok?: number
  readonly requests: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly status5xx: number
  readonly otherNon2xx: number
  readonly errors: number
}

export interface Sample {
  readonly atS: number
  readonly rssMiB: number
  readonly fds: number
}

export interface SoakReport {
  readonly backend: Backend
  readonly seconds: number
  readonly routes: readonly RouteReport[]
  readonly total5xx: number
  readonly sse: { readonly events: number; readonly expected: number; readonly errors: number; readonly opens: number }
  /** Per live-stream client: rows received, rows ingested while it was attached, and how it closed (undefined: still open at the end). */
  readonly live: readonly { readonly events: number; readonly expected: number; readonly close: string | undefined }[]
  readonly samples: readonly Sample[]
  /** Least-squares slopes over the samples after warm-up (the first quarter, at least 20 s). */
  readonly rssSlopeMiBPerMin: number
  readonly fdSlopePerMin: number
  readonly warmupS: number
}

/** WebSocket live-stream clients attached for the whole run. */
const LIVE_CLIENTS = 3
/** Rows per ingest request. */
const INGEST_ROWS = 10

function slope(points: readonly { x: number; y: number }[]): number {
  if (points.length < 2) return 0
  const mx = points.reduce((s, p) => s + p.x, 0) / points.length
  const my = points.reduce((s, p) => s + p.y, 0) / points.length
  const num = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0)
  const den = points.reduce((s, p) => s + (p.x - mx) ** 2, 0)
  return den === 0 ? 0 : num / den
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

/** A loop of requests that autocannon cannot express (each depends on the last answer). */
async function loop(name: string, until: number, everyMs: number, one: () => Promise<number>): Promise<RouteReport> {
  const latencies: number[] = []
  let s5 = 0
  let other = 0
  let errors = 0
  while (Date.now() < until) {
    const started = performance.now()
    try {
      const status = await one()
      if (status >= 500) s5++
      else if (status >= 300) other++
    } catch {
      errors++
    }
    const ms = performance.now() - started
    latencies.push(ms)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - ms)))
  }
  latencies.sort((a, b) => a - b)
  return {
    route: name,
    requests: latencies.length,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    status5xx: s5,
    otherNon2xx: other,
    errors,
  }
}

export async function runSoak(options: SoakOptions): Promise<SoakReport> {
  const log = options.log ?? (() => {})
  const intensity = options.intensity ?? 1
  const deployment = await seedDeployment(options.backend, sensorConfig({ settings: { amendments: { approvalRequired: false } } }))
  const server = await startChildServer(deployment)
  try {
    const { editor, viewer } = deployment.tokens
    // Some data first, so the queries read something from the start.
    const seedRows = Array.from({ length: 2000 }, (_, i) => ({
      timestamp: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(),
      sensor: `s${i % 7}`,
      value: i % 100,
    }))
    const seeded = await call(server.url, 'POST', '/oi-api/ingest/data-connections/sensors', editor, seedRows)
    if (seeded.status !== 200) throw new Error(`seeding rows failed: ${seeded.status} ${seeded.text}`)

    const sse = listenChanges(server.url, viewer)
    await sse.waitForOpens(1, 30_000)
    const liveClients = await Promise.all(Array.from({ length: LIVE_CLIENTS }, () => connectLive(server.url, { token: viewer })))
    const liveClosed: (string | undefined)[] = liveClients.map(() => undefined)
    liveClients.forEach(
      (c, i) =>
        void c.closed.then(({ code, reason }) => {
          liveClosed[i] = `${code} ${reason}`
        }),
    )
    const started = Date.now()
    const until = started + options.seconds * 1000
    const samples: Sample[] = []
    const sample = (): void => {
      try {
        const usage = processUsage(server.pid)
        samples.push({ atS: (Date.now() - started) / 1000, rssMiB: usage.rss / 2 ** 20, fds: usage.fds })
      } catch {
        // the process is gone; the report will show it
      }
    }
    sample()
    const sampler = setInterval(sample, options.sampleEveryMs ?? 5000)

    const auth = { authorization: `Bearer ${editor}`, 'content-type': 'application/json' }
    const rate = (perSecond: number) => Math.max(1, Math.round(perSecond * intensity))
    const ingestBody = JSON.stringify(
      Array.from({ length: INGEST_ROWS }, (_, i) => ({
        timestamp: new Date(Date.UTC(2026, 0, 2) + i * 1000).toISOString(),
        sensor: `s${i % 7}`,
        value: i,
      })),
    )
    const cannon = (route: string, opts: { method: 'GET' | 'POST'; path: string; body?: string; connections: number; perSecond: number }) =>
      autocannon({
        url: `${server.url}${opts.path}`,
        method: opts.method,
        headers: auth,
        ...(opts.body ? { body: opts.body } : {}),
        connections: opts.connections,
        overallRate: rate(opts.perSecond),
        duration: options.seconds,
      }).then(
        (r): RouteReport => ({
          route,
          requests: r.requests.total,
          p50Ms: r.latency.p50,
          p99Ms: r.latency.p99,
          status5xx: r['5xx'],
          otherNon2xx: r.non2xx - r['5xx'],
          errors: r.errors + r.timeouts,
          ok: r['2xx'],
        }),
      )

    let corrections = 0
    let attempts = 0
    const routes = await Promise.all([
      cannon('GET warm query (plant/hall/avg)', {
        method: 'GET',
        path: '/oi-api/warm-queries/plant/hall/avg',
        connections: 4,
        perSecond: 40,
      }),
      cannon('POST ad-hoc query', {
        method: 'POST',
        path: '/oi-api/warm-queries',
        body: JSON.stringify({
          Query: 'Sensors | where value > 50 | summarize n = count(), avg_value = avg(value) by sensor | order by sensor asc',
        }),
        connections: 4,
        perSecond: 20,
      }),
      cannon('POST activity-log append', {
        method: 'POST',
        path: '/oi-api/provenance/events',
        body: JSON.stringify({ ScopeKey: 'soak', entityType: 'reading', entityId: 'r', actionType: 'append', details: { soak: true } }),
        connections: 4,
        perSecond: 50,
      }),
      cannon('POST ingest (10 rows)', {
        method: 'POST',
        path: '/oi-api/ingest/data-connections/sensors',
        body: ingestBody,
        connections: 2,
        perSecond: 10,
      }),
      loop('POST export + GET download', until, 2000 / intensity, async () => {
        const created = await call(server.url, 'POST', '/oi-api/downloads/data-connections/sensors', editor, {
          format: 'csv',
          from: '2026-01-01T00:00:00Z',
          to: '2026-01-01T00:10:00Z',
        })
        if (created.status !== 200) return created.status
        const issued = new URL(created.body.downloadUrl)
        const file = await fetch(`${server.url}${issued.pathname}${issued.search}`)
        await file.arrayBuffer()
        return file.status
      }),
      loop('POST correction', until, 1000 / intensity, async () => {
        const n = attempts++
        const r = await call(server.url, 'POST', '/oi-api/provenance/amendments', editor, {
          ScopeKey: 'soak',
          entityType: 'lab-result',
          entityId: `LR-${n}`,
          reasonCategory: 'data-entry-error',
          reason: 'soak',
          before: { v: n },
          after: { v: n + 1 },
        })
        if (r.status === 200) corrections++
        return r.status
      }),
    ])
    clearInterval(sampler)
    sample()

    // Every correction committed is a change: wait for the stream to catch up, then count.
    const deadline = Date.now() + 15_000
    while (sse.events.filter((e) => e.data.kind === 'correction').length < corrections && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    sse.close()
    // autocannon stops with requests still in flight, which the server may yet commit: count the
    // rows the soak ingested (dated 2026-01-02; the seed rows are of 2026-01-01) once they settle.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const counted = await call(server.url, 'POST', '/oi-api/warm-queries', editor, {
      Query: 'Sensors | where timestamp >= datetime(2026-01-02) | count',
    })
    const rowsIngested = counted.status === 200 ? Number(counted.body.results[0].Count) : -1
    const liveDeadline = Date.now() + 15_000
    while (liveClients.some((c, i) => liveClosed[i] === undefined && c.events.length < rowsIngested) && Date.now() < liveDeadline)
      await new Promise((resolve) => setTimeout(resolve, 100))
    const live = liveClients.map((c, i) => ({ events: c.events.length, expected: rowsIngested, close: liveClosed[i] }))
    for (const c of liveClients) c.close()
    const correctionEvents = sse.events.filter((e) => e.data.kind === 'correction').length

    const warmupS = Math.max(20, options.seconds / 4)
    const steady = samples.filter((s) => s.atS >= warmupS)
    const report: SoakReport = {
      backend: options.backend,
      seconds: options.seconds,
      routes,
      total5xx: routes.reduce((s, r) => s + r.status5xx, 0),
      live,
      sse: { events: correctionEvents, expected: corrections, errors: sse.errorCodes.length, opens: sse.opens },
      samples,
      rssSlopeMiBPerMin: slope(steady.map((s) => ({ x: s.atS / 60, y: s.rssMiB }))),
      fdSlopePerMin: slope(steady.map((s) => ({ x: s.atS / 60, y: s.fds }))),
      warmupS,
    }
    log(summary(report))
    return report
  } finally {
    await server.kill('SIGTERM')
    await deployment.cleanup()
  }
}

export function summary(report: SoakReport): string {
  const first = report.samples[0]
  const last = report.samples.at(-1)
  return [
    `soak ${report.backend}, ${report.seconds} s: ${report.total5xx} 5xx; SSE ${report.sse.events}/${report.sse.expected} correction changes, ${report.sse.errors} stream errors; live stream clients ${report.live.map((l) => `${l.events}/${l.expected}${l.close ? ` closed ${l.close}` : ''}`).join(', ')} rows`,
    ...report.routes.map(
      (r) =>
        `  ${r.route}: ${r.requests} requests, p50 ${r.p50Ms.toFixed(1)} ms, p99 ${r.p99Ms.toFixed(1)} ms, 5xx ${r.status5xx}, other non-2xx ${r.otherNon2xx}, errors ${r.errors}`,
    ),
    `  RSS ${first?.rssMiB.toFixed(0)} → ${last?.rssMiB.toFixed(0)} MiB (slope after ${report.warmupS.toFixed(0)} s: ${report.rssSlopeMiBPerMin.toFixed(2)} MiB/min); fds ${first?.fds} → ${last?.fds} (slope ${report.fdSlopePerMin.toFixed(2)}/min)`,
  ].join('\n')
}

function markdown(report: SoakReport): string {
  const first = report.samples[0]!
  const last = report.samples.at(-1)!
  const steadyStart = report.samples.find((s) => s.atS >= report.warmupS) ?? first
  const at = new Date().toISOString().slice(0, 16).replace('T', ' ') + ' UTC'
  return [
    `### Soak: ${report.seconds / 60} minutes of mixed load (${report.backend})`,
    '',
    `Measured ${at} on ${machine()} (shared with other jobs). One \`provenant serve\` child process; ` +
      'autocannon (rate-limited) and real clients (an SSE client, 3 WebSocket live-stream clients) at once; RSS and open file descriptors sampled from /proc every 5 s. ' +
      'Run with `npm run soak -- --minutes 10`.',
    '',
    '| route | requests | p50 ms | p99 ms | 5xx | other non-2xx | errors |',
    '|---|---|---|---|---|---|---|',
    ...report.routes.map(
      (r) =>
        `| ${r.route} | ${r.requests} | ${r.p50Ms.toFixed(1)} | ${r.p99Ms.toFixed(1)} | ${r.status5xx} | ${r.otherNon2xx} | ${r.errors} |`,
    ),
    '',
    `- **5xx: ${report.total5xx}.** SSE change stream: ${report.sse.events} of ${report.sse.expected} correction changes received, ${report.sse.errors} stream errors, ${report.sse.opens} connection(s).`,
    `- WebSocket live stream: ${report.live.length} clients received ${report.live.map((l) => l.events).join(', ')} of ${report.live[0]?.expected ?? 0} ingested rows; ${report.live.filter((l) => l.close !== undefined).length} closed early${
      report.live.some((l) => l.close)
        ? ` (${report.live
            .map((l) => l.close)
            .filter(Boolean)
            .join('; ')})`
        : ''
    }.`,
    `- RSS: ${first.rssMiB.toFixed(0)} MiB at start, ${steadyStart.rssMiB.toFixed(0)} MiB after warm-up (${report.warmupS.toFixed(0)} s), ${last.rssMiB.toFixed(0)} MiB at the end; slope after warm-up ${report.rssSlopeMiBPerMin.toFixed(2)} MiB/min.`,
    `- Open file descriptors: ${first.fds} at start, ${steadyStart.fds} after warm-up, ${last.fds} at the end; slope after warm-up ${report.fdSlopePerMin.toFixed(2)}/min.`,
  ].join('\n')
}

export function writeSoakSection(file: string, report: SoakReport): void {
  const block = `<!-- soak:${report.backend} -->\n${markdown(report)}\n<!-- /soak:${report.backend} -->`
  const current = existsSync(file) ? readFileSync(file, 'utf8') : '# Benchmarks\n'
  const pattern = new RegExp(`<!-- soak:${report.backend} -->[\\s\\S]*?<!-- /soak:${report.backend} -->`)
  writeFileSync(file, pattern.test(current) ? current.replace(pattern, block) : `${current.trimEnd()}\n\n${block}\n`)
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: {
      minutes: { type: 'string', default: '10' },
      backend: { type: 'string', default: 'sqlite' },
      intensity: { type: 'string', default: '1' },
      'no-write': { type: 'boolean' },
    },
  })
  const backend = values.backend as Backend
  if (backend !== 'sqlite' && backend !== 'postgres') throw new Error('--backend is sqlite or postgres')
  const report = await runSoak({
    seconds: Math.round(Number(values.minutes) * 60),
    backend,
    intensity: Number(values.intensity),
    log: (line) => console.log(line),
  })
  if (!values['no-write']) {
    const file = fileURLToPath(new URL('../docs/benchmarks.md', import.meta.url))
    writeSoakSection(file, report)
    console.log(`wrote ${file}`)
  }
  process.exit(report.total5xx === 0 ? 0 : 1)
}
