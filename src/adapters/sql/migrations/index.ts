/**
 * @module
 * Every migration, in order. A capability adds its module here.
 */
import { foundation } from './0001-foundation.js'
import { ledger } from './0002-ledger.js'
import { exportsMigration } from './0003-exports.js'
import { credentialsMigration } from './0004-credentials.js'
import { proposals } from './0005-proposals.js'
import { portal } from './0006-portal.js'
import { connectors } from './0007-connectors.js'
import { corrections } from './0008-corrections.js'
import { columnar } from './0009-columnar.js'
import type { Migration } from './migration.js'

export const MIGRATIONS: readonly Migration[] = [
  foundation,
  ledger,
  exportsMigration,
  credentialsMigration,
  proposals,
  portal,
  connectors,
  corrections,
  columnar,
]
