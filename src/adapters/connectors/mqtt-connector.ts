/**
 * @module
 * The `mqtt` pull connector (issue 6, item 2): subscribes to topic filters with QoS 1 on a
 * persistent session (clean: false, a stable client id), so messages published while the server is
 * down are delivered when it is back. Messages are batched (up to `batchSize`, or `batchMs` after
 * the first, or as soon as the broker pauses) and acknowledged (PUBACK) only after their rows are
 * committed: nothing acknowledged is lost. The payload mapping is in README "Pull connectors".
 *
 * The one gap, a crash between the commit and the PUBACKs (the broker then delivers the batch
 * again, flagged DUP), is closed with the cursor: it holds digests of the most recently committed
 * messages, and a redelivered (DUP) message whose digest is among them is acknowledged without
 * storing it again.
 */
import { createHash } from 'node:crypto'
import mqtt, { type IClientOptions, type IPublishPacket, type MqttClient } from 'mqtt'
import { z } from 'zod'
import {
  type ConnectorContext,
  type ConnectorFactory,
  ConnectorSettingsError,
  type RunningConnector,
} from '../../domain/connectors/connector-supervisor.js'
import { parseDynamicJson } from '../../kql/index.js'

const column = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/)

export const mqttSettingsSchema = z.strictObject({
  /** mqtt://, mqtts://, ws:// or wss:// */
  url: z.string().regex(/^(mqtts?|wss?):\/\/./, 'a broker URL like mqtt://host:1883 or mqtts://host:8883'),
  topics: z.array(z.string().min(1).max(1024)).min(1).max(100),
  qos: z.union([z.literal(0), z.literal(1)]).default(1),
  /** Defaults to one derived from the server id, workspace and connection (stable across restarts). */
  clientId: z.string().min(1).max(128).optional(),
  tls: z.strictObject({ ca: z.string().optional(), rejectUnauthorized: z.boolean().optional() }).optional(),
  /** A declared string column that receives the message's topic. */
  topicColumn: column.optional(),
  /** A declared datetime column set to the time the message arrived when the payload has no value for it. */
  timeColumn: column.optional(),
  batchSize: z.number().int().min(1).max(5000).default(500),
  batchMs: z.number().int().min(1).max(10_000).default(200),
  keepaliveSeconds: z.number().int().min(5).max(3600).default(30),
})

export type MqttSettings = z.output<typeof mqttSettingsSchema>

/** Batches that may wait for the database before the connector stops reading from the broker. */
const MAX_PENDING_BATCHES = 2

/** Longest wait for the broker when disconnecting. */
const END_TIMEOUT_MS = 5000

/** Digests of recently committed messages kept in the cursor (a few batches' worth). */
const RECENT_DIGESTS = 1500

/** Handed to mqtt.js's handleMessage callback: the PUBACK is ours to send after the commit. */
const ACK_DEFERRED = Object.freeze(Object.assign(new Error('acknowledged after commit'), { name: 'AckDeferred' }))

export function parseMqttSettings(settings: unknown, columns: readonly { name: string; type: string }[]): MqttSettings {
  const parsed = mqttSettingsSchema.safeParse(settings)
  if (!parsed.success) {
    throw new ConnectorSettingsError(
      `mqtt connector: ${parsed.error.issues.map((i) => `${i.path.length ? `settings.${i.path.join('.')}` : 'settings'}: ${i.message}`).join('; ')}`,
    )
  }
  const names = new Set(columns.map((c) => c.name))
  for (const key of ['topicColumn', 'timeColumn'] as const) {
    const name = parsed.data[key]
    if (name !== undefined && !names.has(name))
      throw new ConnectorSettingsError(`mqtt connector: settings.${key} names "${name}", which is not a declared column`)
  }
  return parsed.data
}

export function messageDigest(topic: string, payload: Uint8Array): string {
  return createHash('sha256').update(topic).update('\u0000').update(payload).digest('hex').slice(0, 24)
}

/** A stable client id: the same server (all processes on one database), workspace and connection. */
export function defaultClientId(serverId: string, workspaceId: string, lookup: string): string {
  return `provenant-${createHash('sha256').update(`${serverId}\n${workspaceId}\n${lookup}`).digest('hex').slice(0, 20)}`
}

export interface PayloadRows {
  readonly rows: Record<string, unknown>[]
  /** Why the payload gave no rows, when it did not. */
  readonly problem?: string
}

/**
 * One payload to rows: a JSON object is one row, a JSON array of objects one row per element.
 * Fields are matched to declared columns by name; other fields are ignored. The topic and the
 * arrival time fill their configured columns.
 */
export function payloadToRows(
  settings: Pick<MqttSettings, 'topicColumn' | 'timeColumn'>,
  columns: readonly { name: string }[],
  topic: string,
  payload: Uint8Array,
  receivedAt: number,
): PayloadRows {
  let value: unknown
  try {
    // exact 64-bit integers (issue 17): JSON.parse would round a device's 9007199254740993
    value = parseDynamicJson(Buffer.from(payload).toString('utf8'))
  } catch {
    return { rows: [], problem: `message on ${topic}: the payload is not JSON` }
  }
  const items = Array.isArray(value) ? value : [value]
  if (items.length === 0 || items.some((item) => item === null || typeof item !== 'object' || Array.isArray(item))) {
    return { rows: [], problem: `message on ${topic}: the payload is not a JSON object (or an array of objects)` }
  }
  const rows = (items as Record<string, unknown>[]).map((item) => {
    const row: Record<string, unknown> = {}
    for (const c of columns) if (Object.hasOwn(item, c.name)) row[c.name] = item[c.name]
    if (settings.topicColumn) row[settings.topicColumn] = topic
    if (settings.timeColumn && (row[settings.timeColumn] === undefined || row[settings.timeColumn] === null))
      row[settings.timeColumn] = new Date(receivedAt).toISOString()
    return row
  })
  return { rows }
}

interface Pending {
  readonly packet: IPublishPacket
  readonly receivedAt: number
  readonly digest: string
}

function recentOf(cursor: string | undefined): string[] {
  if (!cursor) return []
  try {
    const parsed = JSON.parse(cursor) as { recent?: unknown }
    return Array.isArray(parsed.recent) ? parsed.recent.filter((d): d is string => typeof d === 'string') : []
  } catch {
    return []
  }
}

export const mqttConnector: ConnectorFactory = (ctx: ConnectorContext): RunningConnector => {
  const settings = parseMqttSettings(ctx.connection.settings, ctx.connection.columns)
  const clientId = settings.clientId ?? defaultClientId(ctx.serverId, ctx.workspaceId, ctx.connection.lookup)
  let recent = recentOf(ctx.cursor)
  let recentSet = new Set(recent)
  const options: IClientOptions = {
    clientId,
    clean: false,
    protocolVersion: 4,
    reconnectPeriod: 0, // the supervisor restarts with backoff
    connectTimeout: 10_000,
    keepalive: settings.keepaliveSeconds,
    ...(ctx.credentials?.['username'] !== undefined ? { username: ctx.credentials['username'] } : {}),
    ...(ctx.credentials?.['password'] !== undefined ? { password: ctx.credentials['password'] } : {}),
    ...(settings.tls?.ca !== undefined ? { ca: settings.tls.ca } : {}),
    ...(settings.tls?.rejectUnauthorized !== undefined ? { rejectUnauthorized: settings.tls.rejectUnauthorized } : {}),
  }

  let queue: Pending[] = []
  let flushing: Promise<void> = Promise.resolve()
  let pendingBatches = 0
  let firstTimer: NodeJS.Timeout | undefined
  let idleTimer: NodeJS.Timeout | undefined
  let stopping = false
  let settle: { resolve: () => void; reject: (error: unknown) => void } | undefined
  const done = new Promise<void>((resolve, reject) => {
    settle = { resolve, reject }
  })
  let failed = false

  const client: MqttClient = mqtt.connect(settings.url, options)

  function fail(error: unknown): void {
    if (failed || stopping) return
    failed = true
    clearTimers()
    client.end(true)
    settle?.reject(error)
  }

  function clearTimers(): void {
    if (firstTimer) clearTimeout(firstTimer)
    if (idleTimer) clearTimeout(idleTimer)
    firstTimer = idleTimer = undefined
  }

  /**
   * Disconnects politely when connected (DISCONNECT keeps the persistent session), at once
   * otherwise; never waits more than END_TIMEOUT_MS (a socket still connecting may never answer).
   */
  function endClient(): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        client.stream?.destroy()
        resolve()
      }, END_TIMEOUT_MS)
      timer.unref()
      client.end(!client.connected, {}, () => {
        clearTimeout(timer)
        resolve()
      })
    })
  }

  function ack(messageId: number | undefined): void {
    if (messageId === undefined || !client.connected)
      return // mqtt.js has no public PUBACK call; its own handlers send it exactly like this.
    ;(client as unknown as { _sendPacket(packet: object, cb: () => void): void })._sendPacket({ cmd: 'puback', messageId }, () => {})
  }

  async function commit(batch: Pending[]): Promise<void> {
    const inputs: Record<string, unknown>[] = []
    const samples: string[] = []
    let unparsed = 0
    const fresh: Pending[] = []
    const digests: string[] = []
    for (const item of batch) {
      // A redelivery of something already committed (crash between commit and PUBACK).
      if (item.packet.dup && recentSet.has(item.digest)) continue
      fresh.push(item)
      digests.push(item.digest)
      const { rows, problem } = payloadToRows(
        settings,
        ctx.connection.columns,
        item.packet.topic,
        item.packet.payload as Uint8Array,
        item.receivedAt,
      )
      if (problem) {
        unparsed++
        if (samples.length < 5) samples.push(problem)
      }
      inputs.push(...rows)
    }
    if (fresh.length > 0) {
      const nextRecent = [...recent, ...digests].slice(-RECENT_DIGESTS)
      await ctx.ingest(inputs, JSON.stringify({ recent: nextRecent }), { count: unparsed, samples })
      recent = nextRecent
      recentSet = new Set(recent)
    }
    for (const item of batch) if (item.packet.qos > 0) ack(item.packet.messageId)
    await ctx.healthy()
  }

  function flush(): Promise<void> {
    clearTimers()
    if (queue.length === 0) return flushing
    const batch = queue
    queue = []
    pendingBatches++
    flushing = flushing
      .then(() => (failed ? undefined : commit(batch)))
      .catch((error: unknown) => fail(error))
      .finally(() => {
        pendingBatches--
      })
    return flushing
  }

  client.handleMessage = (packet, callback) => {
    if (stopping || failed) {
      // Not taken: the broker delivers it again on the next session.
      callback(ACK_DEFERRED)
      return
    }
    queue.push({ packet, receivedAt: Date.now(), digest: messageDigest(packet.topic, packet.payload as Uint8Array) })
    if (queue.length >= settings.batchSize) void flush()
    else {
      firstTimer ??= setTimeout(() => void flush(), settings.batchMs)
      // The broker paused (or its in-flight window is full): commit what is here now.
      if (idleTimer) clearTimeout(idleTimer)
      idleTimer = setTimeout(() => void flush(), Math.min(20, settings.batchMs))
    }
    const release = () => callback(packet.qos > 0 ? ACK_DEFERRED : undefined)
    // Backpressure: while batches wait for the database, mqtt.js reads no further packet, so a
    // flood (QoS 0 has no in-flight window) queues at the broker, not in this process's memory.
    if (pendingBatches >= MAX_PENDING_BATCHES) void flushing.then(release, release)
    else release()
  }

  client.on('connect', () => {
    client.subscribe(
      settings.topics.map((t) => t),
      { qos: settings.qos },
      (error, granted) => {
        if (error) return fail(error)
        const refused = (granted ?? []).filter((g) => g.qos === 128)
        if (refused.length) return fail(new Error(`the broker refused the subscription to ${refused.map((g) => g.topic).join(', ')}`))
        ctx.healthy().catch(fail)
      },
    )
  })
  client.on('error', (error) => fail(error))
  client.on('close', () => fail(new Error(`the connection to the MQTT broker ${new URL(settings.url).host} closed`)))

  return {
    done,
    async stop() {
      if (failed) return done.catch(() => {})
      stopping = true
      await flush().catch(() => {})
      await endClient()
      settle?.resolve()
      await done.catch(() => {})
    },
  }
}
