/**
 * @module
 * Versioned schema migrations, one module per capability, each with the SQL of both dialects side
 * by side so they stay in step. Applied in id order at start, once, recorded in
 * `schema_migrations`; running them again is a no-op.
 */

export interface Migration {
  /** Sortable unique id, e.g. `0001-foundation`. */
  readonly id: string
  readonly sqlite: string
  readonly postgres: string
}
