/**
 * @module
 * The activity log's decisions and API calls (spec 1, 2.6; design §8). Other features import from
 * here, never from the files behind it.
 */
export { type ActivityLog, type Actor, type ApiCall, createActivityLog, type DecisionInput, SYSTEM_ACTOR } from './activity-log.js'
