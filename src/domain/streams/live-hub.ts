/**
 * @module
 * The live event hub behind `GET /oi-api/live-stream` (spec 4.3, 6; design §9): every ingested row,
 * once, in row-id order, fanned out to the streams of its workspace.
 *
 * Row ids are workspace-wide, dense and reserved under the row counter's lock, so they are handed
 * out in commit order: when rows [a, b] are announced, every id below a is committed (or was rolled
 * back and re-used). One sequencer per workspace therefore emits strictly in id order: an
 * announcement that starts past the next expected id waits briefly for the missing one (announcements
 * of concurrent commits, or of two processes, may arrive out of order), then the gap is read from
 * storage. Announcements without rows (relayed from another process by LISTEN/NOTIFY) are read from
 * storage by id range, adjacent ones in one read. A periodic poll of the row counter recovers
 * announcements that were lost (a LISTEN connection that reconnected).
 *
 * Because the hub emits in order, a stream's hand-over from replay to live needs no de-duplication
 * by content: it joins at the hub's high-water mark H, replays (since, H] from storage while live
 * batches wait in its buffer, then drains the buffer.
 */
import type { KqlValue } from '../../kql/index.js'
import { InvalidInputError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { ConfigService, ConnectionTable, WorkspaceConfig } from '../workspace-config/index.js'
import type { BusEvent, EventBus, RowsIngested } from './event-bus.js'

export interface LiveRow {
  /** The row's workspace-wide row id: the event id. */
  readonly id: number
  /** Ingest time, ms since the epoch. */
  readonly at: number
  /** Typed values in the table's declared column order. */
  readonly values: readonly KqlValue[]
}

/** Rows of one connection, consecutive in the stream. The same object reaches every stream. */
export interface LiveBatch {
  readonly connection: string
  readonly rows: readonly LiveRow[]
}

/** The workspace as the streams need it: configuration and the connection tables' columns. */
export interface LiveView {
  readonly config: WorkspaceConfig
  readonly tables: ReadonlyMap<string, ConnectionTable>
}

export type LiveControl = { readonly kind: 'view'; readonly view: LiveView } | { readonly kind: 'token-revoked'; readonly tokenId: string }

/** One stream's end of the hub. Handlers must not throw. */
export interface LiveSink {
  /** True when the stream receives rows of this connection (asked once per batch). */
  wants(connection: string): boolean
  /** Live or replayed rows, in id order. */
  deliver(batch: LiveBatch): void
  /** Resolves when the consumer has taken what was delivered so far (replay pacing). */
  drained(): Promise<void>
  /** The configuration changed, or a token was revoked. */
  control(event: LiveControl): void
  /** Called when live rows waiting during the replay exceed the buffer: the stream must end. */
  overflow(limit: number): void
}

export interface LiveSubscription {
  /** Resolves when the replay is done and live delivery has begun; rejects on a storage error. */
  readonly started: Promise<void>
  close(): void
}

export interface LiveHubDeps {
  /** Connection tables (`config`) and their rows (`data`), read for replay and catch-up only. */
  readonly stores: Pick<Stores, 'config' | 'data'>
  readonly config: Pick<ConfigService, 'currentIn'>
  readonly bus: EventBus
  readonly onError?: (error: unknown, what: string) => void
}

export interface LiveHubOptions {
  /** How long an out-of-order announcement waits for the missing one before storage is read. */
  readonly gapWaitMs?: number
  /** Interval of the row-counter poll that recovers lost announcements. */
  readonly pollMs?: number
  /** Rows read from storage per table per query. */
  readonly pageSize?: number
  /** Live rows a stream may hold while it replays; beyond that it overflows. */
  readonly replayBufferRows?: number
}

/** The declared contract of the live event stream's fan-out (spec 4.3, 6; design §9); `createLiveHub` is checked against it. */
export interface LiveHub {
  /** The workspace as the hub sees it now (for checking a new stream's filters). */
  view(workspaceId: string): Promise<LiveView>
  /**
   * Checks `since` before a stream is accepted: it MUST NOT be beyond the last row id handed out
   * (an id this server never issued; resuming there would silently skip rows): InvalidInputError.
   */
  checkSince(workspaceId: string, since: number | undefined): Promise<void>
  /**
   * Joins a stream: with `since`, every row after it that the sink wants is replayed from storage
   * first, then live rows follow, and MUST do so without gap or duplicate. A member whose held rows
   * exceed the replay buffer is told it overflowed.
   */
  subscribe(workspaceId: string, since: number | undefined, sink: LiveSink): LiveSubscription
  /** Stops listening to the bus and every channel's timers. */
  close(): Promise<void>
}

interface Member {
  readonly sink: LiveSink
  /** Rows up to this id are not sent (the client's `since`, -1 for none; then where the replay ended). */
  after: number
  /** Live batches held while the member replays; undefined once it is live. */
  buffer: LiveBatch[] | undefined
  bufferedRows: number
  closed: boolean
}

interface Channel {
  readonly workspaceId: string
  readonly members: Set<Member>
  readonly pending: RowsIngested[]
  high: number
  view: LiveView | undefined
  ready: Promise<void>
  running: boolean
  /** Set when a gap has waited long enough (or a poll found unannounced rows): read storage. */
  catchUpTo: number
  gapTimer: NodeJS.Timeout | undefined
  pollTimer: NodeJS.Timeout | undefined
}

/** Parses `since`: a row id (decimal). Throws InvalidInputError otherwise. */
export function parseSince(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const text = value.trim()
  if (!/^\d{1,15}$/.test(text))
    throw new InvalidInputError(`since must be the id of a live event (a whole number), not "${text.slice(0, 40)}"`)
  return Number(text)
}

export function createLiveHub(deps: LiveHubDeps, options: LiveHubOptions = {}): LiveHub {
  const { stores, bus } = deps
  const gapWaitMs = options.gapWaitMs ?? 25
  const pollMs = options.pollMs ?? 5_000
  const pageSize = options.pageSize ?? 2_000
  const replayBufferRows = options.replayBufferRows ?? 100_000
  const channels = new Map<string, Channel>()
  let closed = false

  const report = (error: unknown, what: string): void => {
    try {
      deps.onError?.(error, what)
    } catch {
      // a failing logger must not stop the stream
    }
  }

  async function loadView(workspaceId: string): Promise<LiveView> {
    const [current, tables] = await Promise.all([deps.config.currentIn(stores, workspaceId), stores.config.connectionTables(workspaceId)])
    return { config: current.document, tables: new Map(tables.map((t) => [t.lookup, t])) }
  }

  /**
   * Reads the rows with ids in (after, upTo] of the given tables, merged in id order, page by page;
   * `emit` receives runs of consecutive rows of one connection.
   */
  async function readRange(
    tables: readonly ConnectionTable[],
    after: number,
    upTo: number,
    emit: (batch: LiveBatch) => Promise<void> | void,
    stopped: () => boolean = () => false,
  ): Promise<void> {
    let cursor = after
    while (cursor < upTo && tables.length > 0 && !stopped()) {
      const pages = await Promise.all(
        tables.map(async (table) => ({ table, rows: await stores.data.rowsAfter(table, cursor, pageSize, upTo) })),
      )
      // Rows up to `cap` are complete: no table that filled its page can hold a smaller id beyond it.
      let cap = upTo
      for (const page of pages) if (page.rows.length === pageSize) cap = Math.min(cap, page.rows[page.rows.length - 1]!.rowId)
      const merged = pages.flatMap((page) =>
        page.rows
          .filter((r) => r.rowId <= cap)
          .map((r) => ({ connection: page.table.lookup, row: { id: r.rowId, at: r.ingestedAt, values: r.values } })),
      )
      merged.sort((x, y) => x.row.id - y.row.id)
      let run: LiveRow[] = []
      let runConnection = ''
      for (const { connection, row } of merged) {
        if (connection !== runConnection && run.length > 0) {
          await emit({ connection: runConnection, rows: run })
          run = []
        }
        runConnection = connection
        run.push(row)
      }
      if (run.length > 0) await emit({ connection: runConnection, rows: run })
      cursor = cap
    }
  }

  function fanOut(channel: Channel, batch: LiveBatch): void {
    for (const member of channel.members) {
      if (member.closed || !member.sink.wants(batch.connection)) continue
      if (member.buffer) {
        member.buffer.push(batch)
        member.bufferedRows += batch.rows.length
        if (member.bufferedRows > replayBufferRows) {
          member.closed = true
          member.buffer = undefined
          member.sink.overflow(replayBufferRows)
        }
      } else deliverAfter(member, batch)
    }
  }

  /** Delivers the rows after the member's `since` (which may lie beyond what the hub had emitted when it joined). */
  function deliverAfter(member: Member, batch: LiveBatch): void {
    const rows = batch.rows
    if (rows.length === 0 || rows[rows.length - 1]!.id <= member.after) return
    if (rows[0]!.id > member.after) member.sink.deliver(batch)
    else member.sink.deliver({ connection: batch.connection, rows: rows.filter((r) => r.id > member.after) })
  }

  async function refreshView(channel: Channel): Promise<void> {
    channel.view = await loadView(channel.workspaceId)
    const event: LiveControl = { kind: 'view', view: channel.view }
    for (const member of channel.members) if (!member.closed) member.sink.control(event)
  }

  /** Emits what can be emitted in order; one loop per channel at a time. */
  async function pump(channel: Channel): Promise<void> {
    if (channel.running || closed) return
    channel.running = true
    try {
      await channel.ready
      for (;;) {
        const pending = channel.pending
        pending.sort((x, y) => x.firstRowId - y.firstRowId)
        while (pending.length > 0 && pending[0]!.lastRowId <= channel.high) pending.shift()
        const first = pending[0]
        if (first === undefined && channel.catchUpTo <= channel.high) break
        if (first === undefined || first.firstRowId > channel.high + 1) {
          const gapEnd = first === undefined ? channel.catchUpTo : first.firstRowId - 1
          if (channel.catchUpTo < gapEnd) {
            // Wait a moment for the missing announcement before reading storage.
            channel.gapTimer ??= setTimeout(() => {
              channel.gapTimer = undefined
              channel.catchUpTo = Math.max(channel.catchUpTo, gapEnd)
              void pump(channel)
            }, gapWaitMs)
            break
          }
          // A gap may hold rows of a connection another process created moments ago: read the tables anew.
          await refreshView(channel)
          const tables = [...(channel.view?.tables.values() ?? [])]
          await readRange(tables, channel.high, gapEnd, (batch) => fanOut(channel, batch))
          channel.high = gapEnd
          continue
        }
        if (channel.gapTimer) {
          clearTimeout(channel.gapTimer)
          channel.gapTimer = undefined
        }
        pending.shift()
        // A connection (or a column) this process has not seen yet: the configuration changed moments
        // ago and its announcement may still be on the way. Read it first, so streams without filters
        // include the new connection and encode every column.
        const known = channel.view?.tables.get(first.connection)
        if (!known || (first.rows && first.rows[0] !== undefined && first.rows[0].length !== known.columns.length))
          await refreshView(channel)
        if (first.rows) {
          const rows = first.rows.map((values, i) => ({ id: first.firstRowId + i, at: first.at, values }))
          const skip = channel.high - first.firstRowId + 1
          fanOut(channel, { connection: first.connection, rows: skip > 0 ? rows.slice(skip) : rows })
          channel.high = first.lastRowId
          continue
        }
        // Relayed without rows: read this announcement and the adjacent ones of the same connection at once.
        let upTo = first.lastRowId
        while (pending[0] && pending[0].connection === first.connection && pending[0].firstRowId === upTo + 1 && !pending[0].rows)
          upTo = pending.shift()!.lastRowId
        const table = channel.view?.tables.get(first.connection)
        if (table) await readRange([table], channel.high, upTo, (batch) => fanOut(channel, batch))
        channel.high = upTo
      }
    } catch (error) {
      report(error, 'reading announced rows')
      // Try again shortly; what was not emitted stays pending.
      setTimeout(() => {
        void pump(channel)
      }, 1_000).unref()
    } finally {
      channel.running = false
    }
  }

  function channelOf(workspaceId: string): Channel {
    const channel = channels.get(workspaceId)
    if (channel) return channel
    const created: Channel = {
      workspaceId,
      members: new Set(),
      pending: [],
      high: 0,
      view: undefined,
      ready: Promise.resolve(),
      running: false,
      catchUpTo: 0,
      gapTimer: undefined,
      pollTimer: undefined,
    }
    channels.set(workspaceId, created)
    // The channel is registered (so announcements are kept) before the counter is read: nothing
    // committed in between is missed.
    created.ready = (async () => {
      const [high, view] = await Promise.all([stores.data.latestRowId(workspaceId), loadView(workspaceId)])
      created.high = high
      created.catchUpTo = high
      created.view = view
    })()
    created.ready.catch(() => {
      if (channels.get(workspaceId) === created) channels.delete(workspaceId)
    })
    created.pollTimer = setInterval(() => {
      stores.data.latestRowId(workspaceId).then(
        (latest) => {
          if (latest > created.high && created.pending.length === 0) {
            created.catchUpTo = Math.max(created.catchUpTo, latest)
            void pump(created)
          }
        },
        (error: unknown) => report(error, 'polling the row counter'),
      )
    }, pollMs)
    created.pollTimer.unref()
    return created
  }

  function dropChannelIfIdle(channel: Channel): void {
    if (channel.members.size > 0 || channels.get(channel.workspaceId) !== channel) return
    channels.delete(channel.workspaceId)
    clearInterval(channel.pollTimer)
    clearTimeout(channel.gapTimer)
  }

  const unsubscribe = bus.subscribe((event: BusEvent) => {
    if (event.kind === 'rows') {
      const channel = channels.get(event.workspaceId)
      if (!channel) return
      channel.pending.push(event)
      void pump(channel)
    } else if (event.kind === 'change') {
      const change = event.change
      const channel = channels.get(change.workspaceId)
      if (!channel) return
      if (change.kind === 'config' || change.kind === 'connection') {
        void channel.ready.then(() => refreshView(channel)).catch((error: unknown) => report(error, 'reading the changed configuration'))
      } else if (change.kind === 'token' && change.action === 'revoked') {
        for (const member of channel.members) if (!member.closed) member.sink.control({ kind: 'token-revoked', tokenId: change.entityId })
      }
    } else {
      const channel = channels.get(event.workspaceId)
      if (channel)
        for (const member of channel.members) if (!member.closed) member.sink.control({ kind: 'token-revoked', tokenId: event.tokenId })
    }
  })

  return {
    /** The workspace as the hub sees it now (for checking a new stream's filters). */
    async view(workspaceId: string): Promise<LiveView> {
      return loadView(workspaceId)
    },

    /**
     * Checks `since` before a stream is accepted: it may not be beyond the last row id handed out
     * (an id this server never issued; resuming there would silently skip rows).
     */
    async checkSince(workspaceId: string, since: number | undefined): Promise<void> {
      if (since === undefined) return
      const latest = await stores.data.latestRowId(workspaceId)
      if (since > latest)
        throw new InvalidInputError(
          `since ${since} is beyond the latest event of this workspace (${latest}); reconnect without it to receive events from now on`,
        )
    },

    /**
     * Joins a stream: with `since`, every row after it that the sink wants is replayed from storage
     * first, then live rows follow without gap or duplicate.
     */
    subscribe(workspaceId: string, since: number | undefined, sink: LiveSink): LiveSubscription {
      const channel = channelOf(workspaceId)
      const member: Member = { sink, after: since ?? -1, buffer: [], bufferedRows: 0, closed: false }
      channel.members.add(member)
      const started = (async () => {
        await channel.ready
        // Joining here: the hub has emitted everything up to `high`; whatever it emits beyond
        // (even from a read in progress) reaches the buffer. The replay reads (since, high].
        const joinedAt = channel.high
        if (since !== undefined && since < joinedAt) {
          const tables = [...(channel.view?.tables.values() ?? [])].filter((t) => sink.wants(t.lookup))
          await readRange(
            tables,
            since,
            joinedAt,
            async (batch) => {
              if (member.closed) return
              sink.deliver(batch)
              await sink.drained()
            },
            () => member.closed,
          )
        }
        // Batches the hub emitted between this member's registration and `joinedAt` sit in the
        // buffer too, but the replay has covered them.
        member.after = Math.max(member.after, joinedAt)
        const buffered = member.buffer ?? []
        member.buffer = undefined
        for (const batch of buffered) {
          if (member.closed) break
          deliverAfter(member, batch)
        }
      })()
      started.catch(() => {})
      return {
        started,
        close() {
          member.closed = true
          member.buffer = undefined
          channel.members.delete(member)
          dropChannelIfIdle(channel)
        },
      }
    },

    async close(): Promise<void> {
      closed = true
      unsubscribe()
      for (const channel of channels.values()) {
        clearInterval(channel.pollTimer)
        clearTimeout(channel.gapTimer)
      }
      channels.clear()
    },
  }
}
