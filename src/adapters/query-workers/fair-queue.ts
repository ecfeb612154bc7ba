/**
 * @module
 * Fair sharing of the query workers (issue 15 item 3; design §14): at most `perCaller` queries of
 * one caller run at once, the rest wait in a bounded queue (overall and per caller), and the next
 * free worker goes to the oldest waiting query whose caller is below its limit. So an analyst's
 * heavy queries never hold every worker and a dashboard's warm queries keep flowing. Requests are
 * never refused by rate (spec: no per-request rate limit), only when the waiting room is full.
 */

export interface FairQueueLimits {
  /** Queries one caller may have running at once. */
  readonly perCaller: number
  /** Queries that may wait, all callers together. */
  readonly queueLimit: number
  /** Queries one caller may have waiting. */
  readonly perCallerQueue: number
}

export class FairQueue<T extends { readonly caller: string }> {
  private readonly waiting: T[] = []
  private readonly runningBy = new Map<string, number>()
  private readonly waitingBy = new Map<string, number>()

  constructor(private readonly limits: FairQueueLimits) {}

  get length(): number {
    return this.waiting.length
  }

  /** Whether `caller` may start a query now (below its running limit). */
  mayRun(caller: string): boolean {
    return (this.runningBy.get(caller) ?? 0) < this.limits.perCaller
  }

  /** Why a new query of `caller` cannot wait, or undefined when it can. */
  refusal(caller: string): string | undefined {
    if (this.waiting.length >= this.limits.queueLimit)
      return `the server's query capacity is busy (${this.limits.queueLimit} queries are already waiting); retry in a moment`
    if ((this.waitingBy.get(caller) ?? 0) >= this.limits.perCallerQueue)
      return `the query capacity for this account is busy (${this.limits.perCaller} running and ${this.limits.perCallerQueue} waiting); retry when one finishes`
    return undefined
  }

  push(item: T): void {
    this.waiting.push(item)
    bump(this.waitingBy, item.caller, 1)
  }

  /** Takes a waiting item out (cancelled or timed out); false when it was not waiting. */
  remove(item: T): boolean {
    const at = this.waiting.indexOf(item)
    if (at < 0) return false
    this.waiting.splice(at, 1)
    bump(this.waitingBy, item.caller, -1)
    return true
  }

  /** The oldest waiting item whose caller may run one more, now counted as running. */
  next(): T | undefined {
    const at = this.waiting.findIndex((item) => this.mayRun(item.caller))
    if (at < 0) return undefined
    const [item] = this.waiting.splice(at, 1)
    bump(this.waitingBy, item!.caller, -1)
    this.started(item!)
    return item
  }

  /** Counts an item as running without it having waited. */
  started(item: T): void {
    bump(this.runningBy, item.caller, 1)
  }

  /** A running item finished (answered, failed, stopped). */
  finished(item: T): void {
    bump(this.runningBy, item.caller, -1)
  }

  /** Empties the queue (shutdown) and returns what waited. */
  drain(): T[] {
    this.waitingBy.clear()
    return this.waiting.splice(0)
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const n = (counts.get(key) ?? 0) + by
  if (n <= 0) counts.delete(key)
  else counts.set(key, n)
}
