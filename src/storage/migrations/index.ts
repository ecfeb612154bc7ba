/**
 * @module
 * Every migration, in order. A capability adds its module here.
 */
import { foundation } from './0001-foundation.js'
import type { Migration } from './migration.js'
import { portal } from './0006-portal.js'

export const MIGRATIONS: readonly Migration[] = [foundation, portal]
