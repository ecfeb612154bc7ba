/**
 * @module
 * The activity feature's public surface for other features (style notes §6.1; architecture rule
 * 10): recording decisions. Grows as other features move their imports here.
 */
export type { ActivityLog, Actor, DecisionInput } from './activity-log.js'
