/**
 * @module
 * The change feed behind `GET /oi-api/eac-changes/stream` (spec 6, design §9): every committed
 * workspace change exactly once, in sequence order, resuming after a given sequence number.
 *
 * The outbox (`workspace_changes`) is the source of truth; the event bus only says "something was
 * committed". Because sequence order is commit order (the counter row is locked until commit), a
 * change announced with seq N means every change up to N is readable, so on a gap the feed reads the
 * outbox from the last delivered sequence. That makes the hand-over from replay to live free of gaps
 * and duplicates, tolerates notifications that arrive out of order from other processes, and
 * recovers changes whose notification was lost (poll()).
 */
import type { WorkspaceChange } from '../changes/index.js'
import { InvalidInputError } from '../errors.js'
import type { Stores } from '../stores.js'
import type { ChangeView, Viewer } from './change-visibility.js'
import type { EventBus } from './event-bus.js'

/** Where the feed delivers: `write` resolves when the consumer can take the next change. */
export interface ChangeSink {
  write(change: WorkspaceChange): Promise<void>
  /** The feed cannot continue (a storage error); the consumer should end the stream. */
  fail(error: unknown): void
}

export interface ChangeFeed {
  /** Starts delivering: first the replay after `afterSeq`, then live changes. */
  start(): void
  /** Reads the outbox for changes whose notification may have been lost. */
  poll(): void
  /** The sequence number of the last change delivered. */
  readonly lastSeq: number
  close(): void
}

/** openChangeFeed bound to its storage and bus: what the edges are given. */
export interface ChangeFeedService {
  open(workspaceId: string, afterSeq: number | undefined, sink: ChangeSink): Promise<ChangeFeed>
  /** What this caller's scopes let it see of each change (issue 14 item 6): the change, narrowed, or nothing. */
  viewFor(caller: Viewer): ChangeView
}

export interface ChangeFeedDeps {
  readonly stores: Pick<Stores, 'changes'>
  readonly bus: EventBus
}

/** Changes read from the outbox per query during replay. */
const BATCH = 200

/**
 * Parses a `Last-Event-ID` (header or query parameter): the decimal sequence number of the last
 * change the client received. Empty means "none". Throws InvalidInputError for anything else.
 */
export function parseLastEventId(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined
  const text = value.trim()
  if (!/^\d{1,15}$/.test(text))
    throw new InvalidInputError(`Last-Event-ID must be the id of a change event (a whole number), not "${text.slice(0, 40)}"`)
  return Number(text)
}

/**
 * Opens a feed for one workspace. With `afterSeq`, every change after it is replayed; without, only
 * changes committed from now on are delivered. Throws InvalidInputError when `afterSeq` is beyond
 * the latest change (an id this server never issued, e.g. from before a database reset): resuming
 * there would silently skip changes.
 */
export async function openChangeFeed(
  deps: ChangeFeedDeps,
  workspaceId: string,
  afterSeq: number | undefined,
  sink: ChangeSink,
): Promise<ChangeFeed> {
  const { stores, bus } = deps
  const inbox: WorkspaceChange[] = []
  let lastSeq = -1
  let started = false
  let closed = false
  let running = false
  let rescan = false

  // Subscribe before reading the latest sequence, so a change committed in between is not missed.
  const unsubscribe = bus.subscribe((event) => {
    if (closed || event.kind !== 'change' || event.change.workspaceId !== workspaceId) return
    inbox.push(event.change)
    void pump()
  })
  try {
    const latest = await stores.changes.latestSeq(workspaceId)
    if (afterSeq !== undefined && afterSeq > latest) {
      throw new InvalidInputError(
        `Last-Event-ID ${afterSeq} is beyond the latest change of this workspace (${latest}); reconnect without it to receive changes from now on`,
      )
    }
    lastSeq = afterSeq ?? latest
  } catch (error) {
    unsubscribe()
    throw error
  }
  rescan = afterSeq !== undefined

  async function deliver(change: WorkspaceChange): Promise<void> {
    await sink.write(change)
    lastSeq = change.seq
  }

  async function readOutbox(): Promise<void> {
    for (;;) {
      const batch = await stores.changes.since(workspaceId, lastSeq, BATCH)
      for (const change of batch) {
        if (closed) return
        await deliver(change)
      }
      if (batch.length < BATCH) return
    }
  }

  /** One delivery loop at a time; events arriving meanwhile wait in the inbox. */
  async function pump(): Promise<void> {
    if (!started || running || closed) return
    running = true
    try {
      while (!closed && (rescan || inbox.length > 0)) {
        if (rescan) {
          rescan = false
          inbox.length = 0
          await readOutbox()
          continue
        }
        const change = inbox.shift()!
        if (change.seq <= lastSeq) continue
        // The next one in sequence can be delivered from the announcement itself; after a gap the
        // outbox holds the missing ones (and this one).
        if (change.seq === lastSeq + 1) await deliver(change)
        else rescan = true
      }
    } catch (error) {
      if (!closed) sink.fail(error)
    } finally {
      running = false
    }
  }

  return {
    start() {
      started = true
      void pump()
    },
    poll() {
      rescan = true
      void pump()
    },
    get lastSeq() {
      return lastSeq
    },
    close() {
      closed = true
      inbox.length = 0
      unsubscribe()
    },
  }
}
