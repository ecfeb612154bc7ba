/**
 * @module
 * TEMPORARY: the activity log before the ledger is wired in (issue 4 replaces this module with the
 * ledger-backed implementation and deletes it). Records nothing.
 */
import type { ActivityLog } from './activity-log.js'

export function createUnrecordedActivityLog(): ActivityLog {
  return { recordDecision: async () => {} }
}
