/**
 * @module
 * Closes open streams whose token stopped being valid (issue 14 item 7; docs/decisions.md). A
 * request is authenticated once, but a stream lives on: revocation, a disabled account, a removed
 * membership or expiry must end it whoever caused it — this process, the portal, the CLI or
 * another server process. Announcements (the event bus) only reach this process on SQLite, and a
 * disabled account is never announced, so the guard asks storage: one read per tick for every
 * token with an open stream in this process, and the stream is closed with the reason.
 */
import type { Clock } from '../../shared/clock.js'
import type { Stores } from '../stores.js'
import type { AuthRecord } from './access-store.js'
import type { Caller } from './caller.js'

export interface StreamGuard {
  /**
   * Calls `close(reason)` once, when the caller's token is no longer valid. Returns the function
   * that stops watching (call it when the stream ends for any other reason).
   */
  watch(caller: Caller, close: (reason: string) => void): () => void
  /** Stops the timer; watched streams are left to their own shutdown. */
  close(): void
}

export interface StreamGuardDeps {
  readonly stores: Pick<Stores, 'access'>
  readonly clock: Clock
  /** How often storage is asked (default 1 s; streams close within about this long). */
  readonly intervalMs?: number
  readonly onError?: (error: unknown) => void
}

interface Watch {
  readonly caller: Caller
  readonly close: (reason: string) => void
}

/** Why a stream of this caller must end now, or undefined while its token is still good. */
export function invalidReason(caller: Caller, record: AuthRecord | undefined, now: number): string | undefined {
  if (caller.expiresAt !== undefined && caller.expiresAt <= now) return 'token expired'
  if (caller.tokenId === undefined) return undefined
  if (!record) return 'token no longer known'
  if (record.token.revokedAt !== undefined) return 'token revoked'
  if (record.account.disabled) return 'account disabled'
  if (record.role === undefined) return 'account no longer a member of this workspace'
  if (record.token.expiresAt <= now) return 'token expired'
  return undefined
}

export function createStreamGuard(deps: StreamGuardDeps): StreamGuard {
  const intervalMs = deps.intervalMs ?? 1_000
  const watches = new Set<Watch>()
  let timer: NodeJS.Timeout | undefined
  let checking = false

  async function check(): Promise<void> {
    if (checking || watches.size === 0) return
    checking = true
    try {
      const current = [...watches]
      const ids = [...new Set(current.flatMap((w) => (w.caller.tokenId === undefined ? [] : [w.caller.tokenId])))]
      const records = ids.length === 0 ? new Map<string, AuthRecord>() : await deps.stores.access.authRecords(ids)
      const now = deps.clock.now()
      for (const w of current) {
        if (!watches.has(w)) continue
        const reason = invalidReason(w.caller, w.caller.tokenId === undefined ? undefined : records.get(w.caller.tokenId), now)
        if (reason === undefined) continue
        watches.delete(w)
        w.close(reason)
      }
    } catch (error) {
      // A failed read closes nothing: the next tick asks again (storage errors are not revocations).
      deps.onError?.(error)
    } finally {
      checking = false
      if (watches.size === 0 && timer) {
        clearInterval(timer)
        timer = undefined
      }
    }
  }

  return {
    watch(caller, close) {
      const w: Watch = { caller, close }
      watches.add(w)
      if (!timer) {
        timer = setInterval(() => void check(), intervalMs)
        timer.unref()
      }
      return () => {
        watches.delete(w)
      }
    },
    close() {
      if (timer) clearInterval(timer)
      timer = undefined
      watches.clear()
    },
  }
}
