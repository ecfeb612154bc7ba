/**
 * @module
 * Lowers the calling thread's CPU priority (Linux nice). On Linux the nice value is a per-thread
 * attribute, so setpriority on the thread's own id (from /proc/thread-self) lowers only this thread.
 * Raising a priority back needs privileges the server should not have, so this is one-way.
 * Elsewhere, or where it is refused, the thread runs as it is.
 */
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'

export function lowerThisThreadPriority(nice: number): void {
  if (nice <= 0 || process.platform !== 'linux') return
  try {
    setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), nice)
  } catch {
    // not permitted or not Linux-like: run at the inherited priority
  }
}
