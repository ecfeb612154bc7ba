/**
 * @module
 * The client side of the live-stream benchmark, run in its own process (so parsing half a million
 * messages a second does not delay the ingest requests that are timed): N raw WebSocket or MQTT
 * subscribers that parse only frame headers and event ids. Times are epoch milliseconds with
 * sub-millisecond resolution (`performance.timeOrigin + performance.now()`), comparable across
 * processes. Also exports the MQTT packet helpers the publisher uses.
 */
import { createConnection, type Socket } from 'node:net'
import { performance } from 'node:perf_hooks'

/** `{"type":"event","id":` — the id's digits start here in every message (WebSocket and MQTT). */
export const ID_OFFSET = 21
/** Clients whose every arrival time is kept for the latency percentiles. */
const SAMPLED = 100

export const epochNow = (): number => performance.timeOrigin + performance.now()
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

export type ClientsStart =
  | {
      readonly kind: 'start'
      readonly protocol: 'ws'
      readonly count: number
      readonly total: number
      readonly url: string
      readonly token: string
    }
  | {
      readonly kind: 'start'
      readonly protocol: 'mqtt'
      readonly count: number
      readonly total: number
      readonly port: number
      readonly topic: string
    }

/** Sent before the measured phase: ids from here on are counted. */
export interface ClientsMeasure {
  readonly kind: 'measure'
  readonly firstId: number
}

export interface ClientsFinish {
  readonly kind: 'finish'
  readonly firstId: number
  readonly lastId: number
  /** Send time (epoch ms) of each measured id, indexed by id - firstId. */
  readonly sentAt: Float64Array
  readonly drainMs: number
}

export interface ClientsResult {
  readonly kind: 'result'
  readonly delivered: number
  readonly firstArrival: number
  readonly lastArrival: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly lost: number
  readonly incomplete: number
  readonly closed: number
  readonly cpuSeconds: number
  /** The highest id the first client received (shows how far a subscriber got, warm-up included). */
  readonly reachedId: number
}

function idAt(buffer: Buffer, offset: number): number {
  let id = 0
  for (let i = offset; i < buffer.length; i++) {
    const c = buffer[i]!
    if (c < 48 || c > 57) break
    id = id * 10 + (c - 48)
  }
  return id
}

/** Per-client receive state. Ids below `firstId` are warm-up and not counted. */
class Receiver {
  count = 0
  lastId = 0
  outOfOrder = 0
  closed = false
  firstId = Number.MAX_SAFE_INTEGER
  private rest: Buffer | undefined
  /** Arrival times of ids (raw, resolved against firstId at the end): pairs of id, time. */
  readonly arrivals: number[] | undefined
  constructor(sampled: boolean) {
    this.arrivals = sampled ? [] : undefined
  }

  record(id: number, at: number): void {
    if (id <= this.lastId) this.outOfOrder++
    this.lastId = id
    if (id < this.firstId) return // warm-up
    this.count++
    this.arrivals?.push(id, at)
  }

  /** Splits `chunk` into packets with `parse`, which returns the packet length or 0 when incomplete. */
  feed(chunk: Buffer, parse: (buffer: Buffer, offset: number, at: number) => number): void {
    const at = epochNow()
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

/** A raw WebSocket client: handshake, then frame headers and ids only; answers pings. */
function connectWs(url: URL, token: string, receiver: Receiver): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: url.hostname, port: Number(url.port) })
    socket.setNoDelay(true)
    let handshake = ''
    socket.once('error', reject)
    const parseFrame = (buffer: Buffer, offset: number, at: number): number => {
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
    const onHandshake = (chunk: Buffer): void => {
      handshake += chunk.toString('latin1')
      const end = handshake.indexOf('\r\n\r\n')
      if (end < 0) return
      socket.removeListener('data', onHandshake)
      if (!handshake.startsWith('HTTP/1.1 101')) {
        reject(new Error(`upgrade refused: ${handshake.split('\r\n')[0]}`))
        return
      }
      socket.on('data', (data: Buffer) => receiver.feed(data, parseFrame))
      socket.on('close', () => {
        receiver.closed = true
      })
      const rest = Buffer.from(handshake.slice(end + 4), 'latin1')
      if (rest.length > 0) receiver.feed(rest, parseFrame)
      resolve(socket)
    }
    socket.on('data', onHandshake)
    socket.write(
      [
        `GET ${url.pathname} HTTP/1.1`,
        `Host: ${url.host}`,
        'Connection: Upgrade',
        'Upgrade: websocket',
        'Sec-WebSocket-Version: 13',
        'Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==',
        `Authorization: Bearer ${token}`,
        '',
        '',
      ].join('\r\n'),
    )
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

export function mqttString(text: string): Buffer {
  const body = Buffer.from(text)
  const length = Buffer.alloc(2)
  length.writeUInt16BE(body.length)
  return Buffer.concat([length, body])
}

export function mqttPacket(firstByte: number, body: Buffer): Buffer {
  return Buffer.concat([Buffer.from([firstByte]), remainingLength(body.length), body])
}

/** MQTT 3.1.1 CONNECT with a clean session and no keep-alive. */
export const mqttConnect = (clientId: string) =>
  mqttPacket(0x10, Buffer.concat([mqttString('MQTT'), Buffer.from([4, 0x02, 0, 0]), mqttString(clientId)]))

/** A raw MQTT subscriber: CONNECT, SUBSCRIBE (QoS 0), then PUBLISH headers and ids only. */
function connectMqtt(port: number, clientId: string, topic: string, receiver: Receiver): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.setNoDelay(true)
    socket.once('error', reject)
    socket.on('close', () => {
      receiver.closed = true
    })
    socket.on('data', (chunk: Buffer) =>
      receiver.feed(chunk, (buffer, offset, at) => {
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
        if (type === 3) receiver.record(idAt(buffer, index + 2 + buffer.readUInt16BE(index) + ID_OFFSET), at)
        else if (type === 9) resolve(socket) // SUBACK
        return index - offset + length
      }),
    )
    socket.write(mqttConnect(clientId))
    socket.write(mqttPacket(0x82, Buffer.concat([Buffer.from([0, 1]), mqttString(topic), Buffer.from([0])])))
  })
}

function percentile(sorted: Float64Array, p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

async function main(): Promise<void> {
  const receivers: Receiver[] = []
  const sockets: Socket[] = []
  let cpuBefore = process.cpuUsage()
  process.on('message', (message: ClientsStart | ClientsMeasure | ClientsFinish) => {
    void (async () => {
      if (message.kind === 'start') {
        for (let i = 0; i < message.count; i++) receivers.push(new Receiver(i < SAMPLED))
        for (let i = 0; i < message.count; i += 50) {
          sockets.push(
            ...(await Promise.all(
              receivers
                .slice(i, i + 50)
                .map((r, j) =>
                  message.protocol === 'ws'
                    ? connectWs(new URL(message.url), message.token, r)
                    : connectMqtt(message.port, `sub-${i + j}`, message.topic, r),
                ),
            )),
          )
        }
        process.send!({ kind: 'ready' })
        return
      }
      if (message.kind === 'measure') {
        for (const r of receivers) r.firstId = message.firstId
        cpuBefore = process.cpuUsage()
        process.send!({ kind: 'measuring' })
        return
      }
      const { firstId, lastId, sentAt, drainMs } = message
      const deadline = Date.now() + drainMs
      while (Date.now() < deadline && receivers.some((r) => !r.closed && r.lastId < lastId)) await sleep(50)
      const values: number[] = []
      let firstArrival = Infinity
      let lastArrival = 0
      for (const r of receivers) {
        if (!r.arrivals) continue
        for (let i = 0; i < r.arrivals.length; i += 2) {
          const index = r.arrivals[i]! - firstId
          if (index < 0 || index >= sentAt.length || !(sentAt[index]! > 0)) continue
          const at = r.arrivals[i + 1]!
          firstArrival = Math.min(firstArrival, at)
          lastArrival = Math.max(lastArrival, at)
          values.push(at - sentAt[index]!)
        }
      }
      const sorted = Float64Array.from(values).sort()
      const total = lastId - firstId + 1
      const open = receivers.filter((r) => !r.closed)
      const cpu = process.cpuUsage(cpuBefore)
      const result: ClientsResult = {
        kind: 'result',
        delivered: receivers.reduce((sum, r) => sum + r.count, 0),
        firstArrival,
        lastArrival,
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: sorted.at(-1) ?? NaN,
        lost: open.reduce((sum, r) => sum + Math.max(0, total - r.count), 0),
        incomplete: open.filter((r) => r.count !== total || r.outOfOrder > 0).length,
        closed: receivers.length - open.length,
        cpuSeconds: (cpu.user + cpu.system) / 1e6,
        reachedId: receivers[0]?.lastId ?? 0,
      }
      for (const socket of sockets) socket.destroy()
      process.send!(result)
    })().catch((error: unknown) => {
      console.error(error)
      process.exit(1)
    })
  })
}

if (process.argv[2] === 'clients') void main()
