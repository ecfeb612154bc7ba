/**
 * @module
 * The live event stream under load (issue 6, item 5; design §12): 500 WebSocket clients on
 * `GET /oi-api/live-stream` while 2,000 rows/s are pushed over HTTP (batches of 100 every 50 ms)
 * for 30 s. Measured: delivered events/s, ingest-to-client latency (from the moment the push
 * request is sent to the moment a client reads the event; p50/p99, target p99 <= 100 ms), loss
 * for clients that keep up, and the server's RSS. The server runs in its own process.
 *
 * Baseline in the same run: Mosquitto (started here on a free port) fanning the same messages out
 * to 500 MQTT subscribers (QoS 0), published at the same rate and measured the same way. Mosquitto
 * does no HTTP, validation, commit or activity record, so it is a reference point, not a peer.
 *
 * Both client sets are raw sockets that parse just the frame headers and the event id (a full
 * client library per socket would make the benchmark measure itself on this 2-core machine).
 */
import { type ChildProcess, fork, spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Socket } from 'node:net'
import { loadavg, tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import type { BenchRow, Scenario } from '../harness.js'

const CLIENTS = Number(process.env['LIVE_BENCH_CLIENTS'] ?? 500)
const RATE = 2_000
const BATCH = 100
const SECONDS = Number(process.env['LIVE_BENCH_SECONDS'] ?? 30)
const TOTAL = RATE * SECONDS
const INTERVAL_MS = 1000 * BATCH / RATE
/** Clients whose every arrival time is kept for the latency percentiles. */
const SAMPLED = 100
const TARGET_P99_MS = 100
const DRAIN_MS = 15_000
/** Batches sent at the same pace before the measured ones (JIT, caches, connections). */
const WARMUP_BATCHES = 40
/** `{"type":"event","id":` — the id's digits start here in every message (WebSocket and MQTT). */
const ID_OFFSET = 21

interface Stats {
  readonly name: string
  readonly deliveredPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly lost: number
  readonly incomplete: number
  readonly closed: number
  readonly rssMiB: number
  readonly cpuSeconds?: number
  readonly idleRssMiB?: number
  /** Push request round trip (send to response), the WebSocket side only. */
  readonly pushP50?: number
  readonly pushP99?: number
}

/** Calls `send(batch)` for `count` batches, one every INTERVAL_MS (late ones are sent at once, none skipped). */
async function paced(count: number, send: (batch: number) => void): Promise<void> {
  const start = performance.now()
  for (let batch = 0; batch < count; batch++) {
    const wait = start + batch * INTERVAL_MS - performance.now()
    if (wait > 0) await sleep(wait)
    send(batch)
  }
}

/** Reads the decimal id at `offset` of a message payload. */
function idAt(buffer: Buffer, offset: number): number {
  let id = 0
  for (let i = offset; i < buffer.length; i++) {
    const c = buffer[i]!
    if (c < 48 || c > 57) break
    id = id * 10 + (c - 48)
  }
  return id
}

/** Per-client receive state shared by both protocols. */
class Receiver {
  count = 0
  lastId = 0
  outOfOrder = 0
  closed = false
  private rest: Buffer | undefined
  constructor(readonly arrivals: Float64Array | undefined, readonly firstId: () => number) {}

  record(id: number, at: number): void {
    if (id <= this.lastId) this.outOfOrder++
    this.lastId = id
    const index = id - this.firstId()
    if (index < 0) return // warm-up
    this.count++
    if (this.arrivals && index < this.arrivals.length) this.arrivals[index] = at
  }

  /** Splits `chunk` into packets with `parse`, which returns the packet length or 0 when incomplete. */
  feed(chunk: Buffer, parse: (buffer: Buffer, offset: number, at: number) => number): void {
    const at = performance.now()
    let buffer = chunk
    if (this.rest) {
      buffer = Buffer.concat([this.rest, chunk])
      this.rest = undefined
    }
    let offset = 0
    while (offset < buffer.length) {
      const used = parse(buffer, offset, at)
      if (used === 0) break
      offset += used
    }
    if (offset < buffer.length) this.rest = buffer.subarray(offset)
  }
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

function latencies(receivers: readonly Receiver[], sentAt: Float64Array): Float64Array {
  const values: number[] = []
  for (const r of receivers) {
    if (!r.arrivals) continue
    for (let i = 0; i < r.arrivals.length; i++) {
      const arrival = r.arrivals[i]!
      if (arrival > 0 && sentAt[i]! > 0) values.push(arrival - sentAt[i]!)
    }
  }
  return Float64Array.from(values).sort()
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

// ---------- WebSocket side ----------

/** A raw WebSocket client: handshake, then frame headers and ids only; answers pings. */
function connectWs(base: URL, token: string, receiver: Receiver): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: base.hostname, port: Number(base.port) })
    socket.setNoDelay(true)
    let handshake = ''
    socket.once('error', reject)
    const onHandshake = (chunk: Buffer): void => {
      handshake += chunk.toString('latin1')
      const end = handshake.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.removeListener('data', onHandshake)
      if (!handshake.startsWith('HTTP/1.1 101')) return reject(new Error(`upgrade refused: ${handshake.split('\r\n')[0]}`))
      const rest = Buffer.from(handshake.slice(end + 4), 'latin1')
      socket.on('data', (data: Buffer) => receiver.feed(data, parseWsFrame))
      socket.on('close', () => { receiver.closed = true })
      if (rest.length > 0) receiver.feed(rest, parseWsFrame)
      resolve(socket)
    }
    const parseWsFrame = (buffer: Buffer, offset: number, at: number): number => {
      if (buffer.length - offset < 2) return 0
      const opcode = buffer[offset]! & 0x0f
      let length = buffer[offset + 1]! & 0x7f
      let header = 2
      if (length === 126) {
        if (buffer.length - offset < 4) return 0
        length = buffer.readUInt16BE(offset + 2)
        header = 4
      } else if (length === 127) {
        if (buffer.length - offset < 10) return 0
        length = Number(buffer.readBigUInt64BE(offset + 2))
        header = 10
      }
      if (buffer.length - offset < header + length) return 0
      if (opcode === 1) receiver.record(idAt(buffer, offset + header + ID_OFFSET), at)
      else if (opcode === 9) {
        // pong with the ping's payload, masked with a zero key (client frames must be masked)
        const payload = buffer.subarray(offset + header, offset + header + length)
        socket.write(Buffer.concat([Buffer.from([0x8a, 0x80 | payload.length, 0, 0, 0, 0]), payload]))
      }
      return header + length
    }
    socket.on('data', onHandshake)
    socket.write([
      `GET /oi-api/live-stream HTTP/1.1`, `Host: ${base.host}`, 'Connection: Upgrade', 'Upgrade: websocket',
      'Sec-WebSocket-Version: 13', 'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==', `Authorization: Bearer ${token}`, '', '',
    ].join('\r\n'))
  })
}

async function runWebSocket(): Promise<Stats> {
  const server: ChildProcess = fork(fileURLToPath(new URL('./live-stream-server.ts', import.meta.url)), [], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
  const messages: ((message: any) => void)[] = []
  server.on('message', (message) => messages.shift()?.(message))
  const next = () => new Promise<any>((resolve) => messages.push(resolve))
  const info = await next() as { base: string; viewerToken: string; ingestToken: string }
  const askRss = async () => {
    const reply = next()
    server.send('rss')
    return await reply as { rss: number; peakRss: number; cpu: NodeJS.CpuUsage }
  }
  try {
    const base = new URL(info.base)
    let firstId = Number.MAX_SAFE_INTEGER // set after the warm-up
    const receivers = Array.from({ length: CLIENTS }, (_, i) => new Receiver(i < SAMPLED ? new Float64Array(TOTAL) : undefined, () => firstId))
    const sockets: Socket[] = []
    for (let i = 0; i < CLIENTS; i += 50) sockets.push(...await Promise.all(receivers.slice(i, i + 50).map((r) => connectWs(base, info.viewerToken, r))))
    const idleRss = (await askRss()).rss
    const cpuBefore = (await askRss()).cpu

    const sentAt = new Float64Array(TOTAL)
    const roundTrips: number[] = []
    const url = `${info.base}/oi-api/ingest/data-connections/line`
    let lastId = 0
    const push = async (batch: number): Promise<{ firstRowId: number; lastRowId: number; sent: number }> => {
      const rows = Array.from({ length: BATCH }, (_, i) => ({ timestamp: new Date().toISOString(), sensor: `sensor-${(batch * BATCH + i) % 16}`, value: batch + i / BATCH }))
      const sent = performance.now()
      const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${info.ingestToken}`, 'content-type': 'application/json' }, body: JSON.stringify(rows) })
      const body = await response.json() as { firstRowId: number; lastRowId: number }
      if (response.status !== 200) throw new Error(`ingest failed: ${response.status} ${JSON.stringify(body)}`)
      lastId = Math.max(lastId, body.lastRowId)
      return { ...body, sent }
    }
    // Warm-up at the same pace; its ids are below firstId and not counted.
    const warmup: Promise<unknown>[] = []
    await paced(WARMUP_BATCHES, (batch) => { warmup.push(push(batch)) })
    await Promise.all(warmup)
    firstId = lastId + 1
    const inflight: Promise<void>[] = []
    const start = performance.now()
    await paced(TOTAL / BATCH, (batch) => {
      inflight.push(push(batch).then(({ firstRowId, lastRowId, sent }) => {
        roundTrips.push(performance.now() - sent)
        for (let id = firstRowId; id <= lastRowId; id++) sentAt[id - firstId] = sent
      }))
    })
    await Promise.all(inflight)
    const deadline = performance.now() + DRAIN_MS
    while (performance.now() < deadline && receivers.some((r) => !r.closed && r.lastId < lastId)) await sleep(50)
    const end = performance.now()
    const usage = await askRss()
    const sorted = latencies(receivers, sentAt)
    const delivered = receivers.reduce((sum, r) => sum + r.count, 0)
    const open = receivers.filter((r) => !r.closed)
    for (const socket of sockets) socket.destroy()
    return {
      name: 'provenant',
      deliveredPerSecond: delivered / ((end - start) / 1000),
      p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? NaN,
      lost: open.reduce((sum, r) => sum + (TOTAL - r.count), 0),
      incomplete: open.filter((r) => r.count !== TOTAL || r.outOfOrder > 0).length,
      closed: receivers.length - open.length,
      rssMiB: usage.peakRss / 2 ** 20,
      cpuSeconds: (usage.cpu.user + usage.cpu.system - cpuBefore.user - cpuBefore.system) / 1e6,
      idleRssMiB: idleRss / 2 ** 20,
      pushP50: percentile(Float64Array.from(roundTrips).sort(), 0.5),
      pushP99: percentile(Float64Array.from(roundTrips).sort(), 0.99),
    }
  } finally {
    server.send('stop')
    await new Promise((resolve) => server.once('exit', resolve))
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

function remainingLength(length: number): Buffer {
  const bytes: number[] = []
  do {
    let byte = length % 128
    length = Math.floor(length / 128)
    if (length > 0) byte |= 0x80
    bytes.push(byte)
  } while (length > 0)
  return Buffer.from(bytes)
}

function mqttString(text: string): Buffer {
  const body = Buffer.from(text)
  const length = Buffer.alloc(2)
  length.writeUInt16BE(body.length)
  return Buffer.concat([length, body])
}

function mqttPacket(firstByte: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([firstByte]), remainingLength(body.length), body])
}

/** MQTT 3.1.1 CONNECT with a clean session and no keep-alive. */
const connectPacket = (clientId: string) => mqttPacket(0x10, Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0x02, 0, 0]), mqttString(clientId)]))

/** A raw MQTT subscriber: CONNECT, SUBSCRIBE (QoS 0), then PUBLISH headers and ids only. */
function connectMqtt(port: number, clientId: string, topic: string, receiver: Receiver): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.setNoDelay(true)
    socket.once('error', reject)
    socket.on('close', () => { receiver.closed = true })
    socket.on('data', (chunk: Buffer) => receiver.feed(chunk, (buffer, offset, at) => {
      let length = 0
      let multiplier = 1
      let index = offset + 1
      for (;;) {
        if (index >= buffer.length) return 0
        const byte = buffer[index++]!
        length += (byte & 0x7f) * multiplier
        multiplier *= 128
        if ((byte & 0x80) === 0) break
      }
      if (buffer.length - index < length) return 0
      const type = buffer[offset]! >> 4
      if (type === 3) {
        const topicLength = buffer.readUInt16BE(index)
        receiver.record(idAt(buffer, index + 2 + topicLength + ID_OFFSET), at)
      } else if (type === 9) resolve(socket) // SUBACK
      return index - offset + length
    }))
    socket.write(connectPacket(clientId))
    socket.write(mqttPacket(0x82, Buffer.concat([Buffer.from([0, 1]), mqttString(topic), Buffer.from([0])])))
  })
}

async function runMosquitto(samplePayload: (id: number) => string): Promise<Stats | { skipped: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-mqtt-'))
  const port = await freePort()
  writeFileSync(join(dir, 'mosquitto.conf'), `listener ${port} 127.0.0.1\nallow_anonymous true\npersistence false\nmax_connections -1\nlog_type none\n`)
  let broker: ChildProcess
  try {
    broker = spawn('mosquitto', ['-c', join(dir, 'mosquitto.conf')], { stdio: 'ignore' })
  } catch (error) {
    return { skipped: `mosquitto could not start: ${(error as Error).message}` }
  }
  const failed = new Promise<{ skipped: string }>((resolve) => broker.once('error', (error) => resolve({ skipped: `mosquitto could not start: ${error.message}` })))
  try {
    for (let attempt = 0; ; attempt++) {
      const ok = await new Promise<boolean>((resolve) => {
        const probe = createConnection({ host: '127.0.0.1', port }, () => { probe.destroy(); resolve(true) })
        probe.once('error', () => resolve(false))
      })
      if (ok) break
      if (attempt > 50) return { skipped: 'mosquitto did not start listening' }
      const early = await Promise.race([failed, sleep(100).then(() => undefined)])
      if (early) return early
    }
    const topic = 'provenant/bench/line'
    const firstId = 1 + WARMUP_BATCHES * BATCH
    const receivers = Array.from({ length: CLIENTS }, (_, i) => new Receiver(i < SAMPLED ? new Float64Array(TOTAL) : undefined, () => firstId))
    const sockets: Socket[] = []
    for (let i = 0; i < CLIENTS; i += 50) sockets.push(...await Promise.all(receivers.slice(i, i + 50).map((r, j) => connectMqtt(port, `sub-${i + j}`, topic, r))))
    const publisher = createConnection({ host: '127.0.0.1', port })
    publisher.setNoDelay(true)
    await new Promise((resolve) => publisher.once('connect', resolve))
    publisher.write(connectPacket('publisher'))
    const topicBytes = mqttString(topic)
    const sentAt = new Float64Array(TOTAL)
    const publish = (firstOfBatch: number, record: boolean): void => {
      const packets: Buffer[] = []
      for (let i = 0; i < BATCH; i++) packets.push(mqttPacket(0x30, Buffer.concat([topicBytes, Buffer.from(samplePayload(firstOfBatch + i))])))
      const sent = performance.now()
      if (record) for (let i = 0; i < BATCH; i++) sentAt[firstOfBatch + i - firstId] = sent
      publisher.write(Buffer.concat(packets))
    }
    await paced(WARMUP_BATCHES, (batch) => publish(1 + batch * BATCH, false))
    const start = performance.now()
    await paced(TOTAL / BATCH, (batch) => publish(firstId + batch * BATCH, true))
    const deadline = performance.now() + DRAIN_MS
    while (performance.now() < deadline && receivers.some((r) => !r.closed && r.lastId < firstId + TOTAL - 1)) await sleep(50)
    const end = performance.now()
    const status = readFileSync(`/proc/${broker.pid}/status`, 'utf8')
    const rssKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? /VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0)
    const sorted = latencies(receivers, sentAt)
    const open = receivers.filter((r) => !r.closed)
    publisher.destroy()
    for (const socket of sockets) socket.destroy()
    return {
      name: 'mosquitto',
      deliveredPerSecond: receivers.reduce((sum, r) => sum + r.count, 0) / ((end - start) / 1000),
      p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? NaN,
      lost: open.reduce((sum, r) => sum + (TOTAL - r.count), 0),
      incomplete: open.filter((r) => r.count !== TOTAL || r.outOfOrder > 0).length,
      closed: receivers.length - open.length,
      rssMiB: rssKiB / 1024,
    }
  } finally {
    broker.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  }
}

const ms = (value: number) => `${value.toFixed(1)} ms`

export const liveStream: Scenario = {
  id: 'live-stream',
  title: `Live event stream: ${CLIENTS} WebSocket clients, ${RATE.toLocaleString('en')} events/s for ${SECONDS} s`,
  async run() {
    const load = loadavg()[0]!.toFixed(2)
    const ws = await runWebSocket()
    // The same message bytes as the live stream sends (id, connection, surfaces, timestamp, data).
    const payload = (id: number) => `{"type":"event","id":${id},"connection":"line","surfaces":["plant"],"timestamp":"${new Date().toISOString()}","data":{"timestamp":"${new Date().toISOString()}","sensor":"sensor-${id % 16}","value":${id / 100}}}`
    const mqtt = await runMosquitto(payload)
    const base = (f: (s: Stats) => string) => ('skipped' in mqtt ? 'not run' : f(mqtt))
    const ratio = (f: (s: Stats) => number) => ('skipped' in mqtt ? undefined : f(ws) / f(mqtt))
    const rows: BenchRow[] = [
      { measure: 'delivered events/s (all clients)', subject: `${Math.round(ws.deliveredPerSecond).toLocaleString('en')}/s`, baseline: base((s) => `${Math.round(s.deliveredPerSecond).toLocaleString('en')}/s`), ratio: ratio((s) => s.deliveredPerSecond), target: `${(RATE * CLIENTS).toLocaleString('en')}/s offered`, met: undefined },
      { measure: 'ingest-to-client latency p50', subject: ms(ws.p50), baseline: base((s) => ms(s.p50)), ratio: ratio((s) => s.p50), target: '–', met: undefined },
      { measure: 'ingest-to-client latency p99', subject: ms(ws.p99), baseline: base((s) => ms(s.p99)), ratio: ratio((s) => s.p99), target: `<= ${TARGET_P99_MS} ms`, met: ws.p99 <= TARGET_P99_MS },
      { measure: 'ingest-to-client latency max', subject: ms(ws.max), baseline: base((s) => ms(s.max)), target: '–', met: undefined },
      { measure: 'events lost by clients that stayed connected', subject: `${ws.lost} (${ws.incomplete} clients incomplete or out of order)`, baseline: base((s) => `${s.lost} (${s.incomplete} clients)`), target: '0', met: ws.lost === 0 && ws.incomplete === 0 },
      { measure: 'clients closed by the server', subject: String(ws.closed), baseline: base((s) => String(s.closed)), target: '0 (all keep up)', met: ws.closed === 0 },
      { measure: 'push request round trip p50 / p99 (part of the latency)', subject: `${ms(ws.pushP50 ?? NaN)} / ${ms(ws.pushP99 ?? NaN)}`, baseline: 'no equivalent', target: '–', met: undefined },
      { measure: 'server peak RSS', subject: `${ws.rssMiB.toFixed(0)} MiB`, baseline: base((s) => `${s.rssMiB.toFixed(0)} MiB`), ratio: ratio((s) => s.rssMiB), target: '–', met: undefined },
    ]
    return {
      rows,
      notes: [
        `Ingest: HTTP push batches of ${BATCH} rows every ${INTERVAL_MS} ms (${TOTAL.toLocaleString('en')} rows) into a SQLite-backed server in its own process; each batch is validated, committed with its activity-log decision and fanned out once (framed once, one socket write per client and batch).`,
        'Latency runs from the moment a push request (or an MQTT publish) is written to the moment a client reads the event, for every event of the first 100 clients; all clients count events and check id order for loss.',
        `Server RSS with ${CLIENTS} idle streams: ${ws.idleRssMiB?.toFixed(0)} MiB. ${WARMUP_BATCHES} warm-up batches at the same pace precede the measured ones on both sides.`,
        `Server CPU during the run: ${ws.cpuSeconds?.toFixed(1)} s user+system over ${SECONDS} s.`,
        'skipped' in mqtt ? `Mosquitto baseline: ${mqtt.skipped}.` : `Baseline: Mosquitto ${'2.x'} on a free loopback port, ${CLIENTS} raw MQTT 3.1.1 subscribers at QoS 0, the same message bytes published at the same rate; no HTTP, storage or records, so it bounds what fan-out alone costs.`,
        `Clients, ingest and publisher run in the benchmark process on the same machine (load average ${load} at start; other developers' work shares the 2 cores), so the figures include client-side delays.`,
      ],
    }
  },
}
