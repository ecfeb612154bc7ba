/**
 * @module
 * The live event stream under load (issue 6, item 5; design §12): 500 WebSocket clients on
 * `GET /oi-api/live-stream` while 2,000 rows/s are pushed over HTTP (batches of 100 every 50 ms)
 * for 30 s. Measured: delivered events/s, ingest-to-client latency (from the moment the push
 * request is sent to the moment a client reads the event; p50/p99, target p99 <= 100 ms), loss
 * for clients that keep up, and the server's RSS. Server, clients and ingest run in three
 * processes (live-stream-server.ts, live-stream-clients.ts, this one).
 *
 * Baseline in the same run: Mosquitto (started here on a free port) fanning the same message bytes
 * out to 500 MQTT subscribers (QoS 0), published at the same rate and measured the same way.
 * Mosquitto does no HTTP, validation, commit or activity record: a reference point for fan-out.
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import type { BenchRow, Scenario } from '../harness.js'
import { type ClientsResult, type ClientsStart, epochNow, mqttConnect, mqttPacket, mqttString } from './live-stream-clients.js'

const CLIENTS = Number(process.env['LIVE_BENCH_CLIENTS'] ?? 500)
const RATE = 2_000
const BATCH = 100
const SECONDS = Number(process.env['LIVE_BENCH_SECONDS'] ?? 30)
const TOTAL = RATE * SECONDS
const INTERVAL_MS = (1000 * BATCH) / RATE
const TARGET_P99_MS = 100
const DRAIN_MS = 15_000
/** Batches sent at the same pace before the measured ones (JIT, caches, connections). */
const WARMUP_BATCHES = 40

interface Stats extends Omit<ClientsResult, 'kind'> {
  readonly deliveredPerSecond: number
  readonly rssMiB: number
  readonly serverCpuSeconds?: number
  readonly idleRssMiB?: number
  /** Push request round trip (send to response), the WebSocket side only. */
  readonly pushP50?: number
  readonly pushP99?: number
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Calls `send(batch)` for `count` batches, one every INTERVAL_MS (late ones are sent at once, none skipped). */
async function paced(count: number, send: (batch: number) => void): Promise<void> {
  const start = performance.now()
  for (let batch = 0; batch < count; batch++) {
    const wait = start + batch * INTERVAL_MS - performance.now()
    if (wait > 0) await sleep(wait)
    send(batch)
  }
}

function percentile(values: readonly number[], p: number): number {
  const sorted = Float64Array.from(values).sort()
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

/** A forked process answering IPC messages in order. */
function child(file: string, args: string[]): { process: ChildProcess; next: () => Promise<unknown>; send: (message: unknown) => void } {
  const proc = fork(fileURLToPath(new URL(file, import.meta.url)), args, {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  })
  const queue: unknown[] = []
  const waiting: ((message: unknown) => void)[] = []
  proc.on('message', (message) => {
    const resolve = waiting.shift()
    if (resolve) resolve(message)
    else queue.push(message)
  })
  return {
    process: proc,
    next: () => (queue.length > 0 ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiting.push(resolve))),
    send: (message) => proc.send(message as never),
  }
}

async function stopChild(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return
  const exited = new Promise((resolve) => proc.once('exit', resolve))
  proc.kill('SIGTERM')
  await exited
}

/** Starts the client process, connects its subscribers, and returns a function that collects the result. */
async function startClients(start: ClientsStart): Promise<{
  measure: (firstId: number) => Promise<void>
  finish: (firstId: number, lastId: number, sentAt: Float64Array) => Promise<ClientsResult>
}> {
  const clients = child('./live-stream-clients.ts', ['clients'])
  clients.send(start)
  const ready = (await clients.next()) as { kind: string }
  if (ready.kind !== 'ready') throw new Error(`the client process failed: ${JSON.stringify(ready)}`)
  return {
    async measure(firstId) {
      clients.send({ kind: 'measure', firstId })
      await clients.next()
    },
    async finish(firstId, lastId, sentAt) {
      clients.send({ kind: 'finish', firstId, lastId, sentAt, drainMs: DRAIN_MS })
      const result = (await clients.next()) as ClientsResult
      await stopChild(clients.process)
      return result
    },
  }
}

// ---------- WebSocket side ----------

async function runWebSocket(): Promise<Stats> {
  const server = child('./live-stream-server.ts', [])
  const info = (await server.next()) as { base: string; viewerToken: string; ingestToken: string }
  const usage = async () => {
    server.send('rss')
    return (await server.next()) as { rss: number; peakRss: number; cpu: NodeJS.CpuUsage }
  }
  try {
    const clients = await startClients({
      kind: 'start',
      protocol: 'ws',
      count: CLIENTS,
      total: TOTAL,
      url: `${info.base.replace(/^http/, 'ws')}/oi-api/live-stream`,
      token: info.viewerToken,
    })
    const idle = await usage()
    const url = `${info.base}/oi-api/ingest/data-connections/line`
    let lastId = 0
    const push = async (batch: number): Promise<{ firstRowId: number; lastRowId: number; sent: number; roundTrip: number }> => {
      const rows = Array.from({ length: BATCH }, (_, i) => ({
        timestamp: new Date().toISOString(),
        sensor: `sensor-${(batch * BATCH + i) % 16}`,
        value: batch + i / BATCH,
      }))
      const body = JSON.stringify(rows)
      const sent = epochNow()
      const response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${info.ingestToken}`, 'content-type': 'application/json' },
        body,
      })
      const result = (await response.json()) as { firstRowId: number; lastRowId: number }
      const roundTrip = epochNow() - sent
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${JSON.stringify(result)}`)
      lastId = Math.max(lastId, result.lastRowId)
      return { ...result, sent, roundTrip }
    }
    // Warm-up at the same pace; its ids are below firstId and not counted.
    const warmup: Promise<unknown>[] = []
    await paced(WARMUP_BATCHES, (batch) => {
      warmup.push(push(batch))
    })
    await Promise.all(warmup)
    const firstId = lastId + 1
    await clients.measure(firstId)
    const cpuBefore = (await usage()).cpu
    const sentAt = new Float64Array(TOTAL)
    const roundTrips: number[] = []
    const inflight: Promise<void>[] = []
    await paced(TOTAL / BATCH, (batch) => {
      inflight.push(
        push(batch).then(({ firstRowId, lastRowId, sent, roundTrip }) => {
          roundTrips.push(roundTrip)
          for (let id = firstRowId; id <= lastRowId; id++) sentAt[id - firstId] = sent
        }),
      )
    })
    await Promise.all(inflight)
    const result = await clients.finish(firstId, firstId + TOTAL - 1, sentAt)
    const after = await usage()
    return {
      ...result,
      deliveredPerSecond: result.delivered === 0 ? 0 : result.delivered / ((result.lastArrival - sentAt[0]!) / 1000),
      rssMiB: after.peakRss / 2 ** 20,
      idleRssMiB: idle.rss / 2 ** 20,
      serverCpuSeconds: (after.cpu.user + after.cpu.system - cpuBefore.user - cpuBefore.system) / 1e6,
      pushP50: percentile(roundTrips, 0.5),
      pushP99: percentile(roundTrips, 0.99),
    }
  } finally {
    server.send('stop')
    await Promise.race([new Promise((resolve) => server.process.once('exit', resolve)), sleep(10_000)])
    await stopChild(server.process)
  }
}

// ---------- MQTT side ----------

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const port = (probe.address() as { port: number }).port
      probe.close(() => resolve(port))
    })
  })
}

async function runMosquitto(samplePayload: (id: number) => string): Promise<Stats | { skipped: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-mqtt-'))
  const port = await freePort()
  writeFileSync(
    join(dir, 'mosquitto.conf'),
    `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_connections -1\nlog_type none\n`,
  )
  let broker: ChildProcess
  try {
    broker = spawn('mosquitto', ['-c', join(dir, 'mosquitto.conf')], { stdio: 'ignore' })
  } catch (error) {
    return { skipped: `mosquitto could not start: ${(error as Error).message}` }
  }
  const failed = new Promise<{ skipped: string }>((resolve) =>
    broker.once('error', (error) => resolve({ skipped: `mosquitto could not start: ${error.message}` })),
  )
  try {
    for (let attempt = 0; ; attempt++) {
      const ok = await new Promise<boolean>((resolve) => {
        const probe = createConnection({ host: '127.0.0.1', port }, () => {
          probe.destroy()
          resolve(true)
        })
        probe.once('error', () => resolve(false))
      })
      if (ok) break
      if (attempt > 50) return { skipped: 'mosquitto did not start listening' }
      const early = await Promise.race([failed, sleep(100).then(() => undefined)])
      if (early) return early
    }
    const topic = 'provenant/bench/line'
    const firstId = 1 + WARMUP_BATCHES * BATCH
    const clients = await startClients({ kind: 'start', protocol: 'mqtt', count: CLIENTS, total: TOTAL, port, topic })
    const publisher = createConnection({ host: '127.0.0.1', port })
    publisher.setNoDelay(true)
    await new Promise((resolve) => publisher.once('connect', resolve))
    publisher.write(mqttConnect('publisher'))
    const topicBytes = mqttString(topic)
    const sentAt = new Float64Array(TOTAL)
    const publish = (firstOfBatch: number, record: boolean): void => {
      const packets: Buffer[] = []
      for (let i = 0; i < BATCH; i++)
        packets.push(mqttPacket(0x30, Buffer.concat([topicBytes, Buffer.from(samplePayload(firstOfBatch + i))])))
      const sent = epochNow()
      if (record) for (let i = 0; i < BATCH; i++) sentAt[firstOfBatch + i - firstId] = sent
      publisher.write(Buffer.concat(packets))
    }
    await paced(WARMUP_BATCHES, (batch) => publish(1 + batch * BATCH, false))
    await clients.measure(firstId)
    await paced(TOTAL / BATCH, (batch) => publish(firstId + batch * BATCH, true))
    const result = await clients.finish(firstId, firstId + TOTAL - 1, sentAt)
    const status = readFileSync(`/proc/${broker.pid}/status`, 'utf8')
    const rssKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? /VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    publisher.destroy()
    return {
      ...result,
      deliveredPerSecond: result.delivered === 0 ? 0 : result.delivered / ((result.lastArrival - sentAt[0]!) / 1000),
      rssMiB: rssKiB / 1024,
    }
  } finally {
    broker.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(1)} ms` : 'n/a (nothing delivered)')

export const liveStream: Scenario = {
  id: 'live-stream',
  title: `Live event stream: ${CLIENTS} WebSocket clients, ${RATE.toLocaleString('en')} events/s for ${SECONDS} s`,
  async run() {
    const load = loadavg()[0]!.toFixed(2)
    const ws = await runWebSocket()
    // The same message bytes as the live stream sends (id, connection, surfaces, timestamp, data).
    const payload = (id: number) =>
      `{"type":"event","id":${id},"connection":"line","surfaces":["plant"],"timestamp":"${new Date().toISOString()}","data":{"timestamp":"${new Date().toISOString()}","sensor":"sensor-${id % 16}","value":${id / 100}}}`
    const mqtt = await runMosquitto(payload)
    const base = (f: (s: Stats) => string) => ('skipped' in mqtt ? 'not run' : f(mqtt))
    const ratio = (f: (s: Stats) => number) =>
      'skipped' in mqtt || !(f(mqtt) > 0) || !Number.isFinite(f(ws)) ? undefined : f(ws) / f(mqtt)
    const rows: BenchRow[] = [
      {
        measure: 'delivered events/s (all clients)',
        subject: `${Math.round(ws.deliveredPerSecond).toLocaleString('en')}/s`,
        baseline: base((s) => `${Math.round(s.deliveredPerSecond).toLocaleString('en')}/s`),
        ratio: ratio((s) => s.deliveredPerSecond),
        target: `${(RATE * CLIENTS).toLocaleString('en')}/s offered`,
        met: undefined,
      },
      {
        measure: 'ingest-to-client latency p50',
        subject: ms(ws.p50),
        baseline: base((s) => ms(s.p50)),
        ratio: ratio((s) => s.p50),
        target: '–',
        met: undefined,
      },
      {
        measure: 'ingest-to-client latency p99',
        subject: ms(ws.p99),
        baseline: base((s) => ms(s.p99)),
        ratio: ratio((s) => s.p99),
        target: `<= ${TARGET_P99_MS} ms`,
        met: ws.p99 <= TARGET_P99_MS,
      },
      { measure: 'ingest-to-client latency max', subject: ms(ws.max), baseline: base((s) => ms(s.max)), target: '–', met: undefined },
      {
        measure: 'events lost by clients that stayed connected',
        subject: `${ws.lost} (${ws.incomplete} clients incomplete or out of order)`,
        baseline: base((s) => `${s.lost} (${s.incomplete} clients)`),
        target: '0',
        met: ws.lost === 0 && ws.incomplete === 0,
      },
      {
        measure: 'clients closed by the server',
        subject: String(ws.closed),
        baseline: base((s) => String(s.closed)),
        target: '0 (all keep up)',
        met: ws.closed === 0,
      },
      {
        measure: 'push request round trip p50 / p99 (part of the latency)',
        subject: `${ms(ws.pushP50 ?? NaN)} / ${ms(ws.pushP99 ?? NaN)}`,
        baseline: 'no equivalent',
        target: '–',
        met: undefined,
      },
      {
        measure: 'server peak RSS',
        subject: `${ws.rssMiB.toFixed(0)} MiB`,
        baseline: base((s) => `${s.rssMiB.toFixed(0)} MiB`),
        ratio: ratio((s) => s.rssMiB),
        target: '–',
        met: undefined,
      },
    ]
    return {
      rows,
      notes: [
        `Ingest: HTTP push batches of ${BATCH} rows every ${INTERVAL_MS} ms (${TOTAL.toLocaleString('en')} rows) into a SQLite-backed server in its own process; each batch is validated, committed with its activity-log decision and fanned out once (framed once, one socket write per client and batch).`,
        'Latency runs from the moment a push request (or an MQTT publish) is written to the moment a client reads the event, for every event of the first 100 clients; all clients count events and check id order for loss. Server, clients (raw sockets parsing only frame headers and ids) and ingest run in separate processes.',
        `Server RSS with ${CLIENTS} idle streams: ${ws.idleRssMiB?.toFixed(0)} MiB. ${WARMUP_BATCHES} warm-up batches at the same pace precede the measured ones on both sides.`,
        `CPU during the measured phase and drain: server ${ws.serverCpuSeconds?.toFixed(1)} s, WebSocket clients ${ws.cpuSeconds.toFixed(1)} s${'skipped' in mqtt ? '' : `, MQTT clients ${mqtt.cpuSeconds.toFixed(1)} s`} (user+system, over ${SECONDS} s of ingest).`,
        'skipped' in mqtt
          ? `Mosquitto baseline: ${mqtt.skipped}.`
          : `Baseline: Mosquitto ${'2.x'} on a free loopback port, ${CLIENTS} raw MQTT 3.1.1 subscribers at QoS 0, the same message bytes published at the same rate; no HTTP, storage or records, so it bounds what fan-out alone costs. Mosquitto drops QoS 0 messages for a subscriber whose queue holds max_queued_messages (default 1,000) unsent ones; those count as lost.`,
        ...('skipped' in mqtt || mqtt.delivered >= CLIENTS * TOTAL * 0.99
          ? []
          : [
              `Mosquitto fell behind: it writes every message to every subscriber separately (${(CLIENTS * RATE).toLocaleString('en')} writes/s here); by the end of the drain its first subscriber had reached id ${mqtt.reachedId.toLocaleString('en')} of ${(WARMUP_BATCHES * BATCH + TOTAL).toLocaleString('en')} (warm-up ids 1-${(WARMUP_BATCHES * BATCH).toLocaleString('en')}), and messages beyond a subscriber's queue were dropped. Provenant frames each batch once and writes it to each socket in one write (${((CLIENTS * RATE) / BATCH).toLocaleString('en')} writes/s).`,
            ]),
        `Everything runs on the same machine (load average ${load} at start, ${loadavg()[0]!.toFixed(2)} at the end; other developers' builds and tests share the 2 cores), so the figures include scheduling delays of all processes.`,
      ],
    }
  },
}
