/**
 * @module
 * The KQL engine's public surface (design §7). Pure: no HTTP, no database driver, no clock.
 *
 * text → tokens → syntax tree → bound tree (types) → plan → for each part the dialect can express
 * faithfully, SQL + bound parameters; the rest runs in the engine's own evaluator over the rows
 * that SQL returned (docs/decisions.md, "KQL execution").
 */

export { type CompiledPlanQuery, compileQuery } from './compile-query.js'
export { DUCKDB_REFUSAL, DUCKDB_TYPES } from './dialect/duckdb/duckdb-dialect.js'
export { SQLITE_FUNCTIONS } from './dialect/sqlite/sqlite-functions.js'
export { dynamicJsonText, parseDynamicJson } from './dynamic-json.js'
export type {
  CompiledQuery,
  CompileOptions,
  ExecuteOptions,
  QueryResult,
  SqlDialectName,
  SqlSource,
  Visualization,
} from './engine-types.js'
export { MAX_INTERMEDIATE_ROWS } from './exec/operator-context.js'
export { quoteIdentifier, scanSql } from './exec/scan-sql.js'
// Names the engine knows, for editors' completion (the portal's Explore page).
export { aggregateNames, scalarNames } from './functions/registry.js'
export { KqlError, type KqlErrorKind, type SourcePosition, SqlRefusalError } from './kql-error.js'
export { canonLong, INT64_MAX, INT64_MIN, type Long, longFrom, longFromText, longToString } from './long.js'
export type { Expr as PlanExpr, PlanColumn, PlanNode, SqlParam, SqlQuery } from './plan/plan.js'
export { JOIN_KINDS } from './plan/plan.js'
export type { KqlColumn, KqlSchema, KqlTable } from './schema.js'
export { EMPTY_SCHEMA } from './schema.js'
export { TABULAR_OPERATORS } from './syntax/operator-parsers.js'
export { type DynamicValue, KQL_TYPES, type KqlType, type KqlValue, parseTypeName } from './types.js'
export {
  civilFromDays,
  dateTimeFromEpochMs,
  formatDateTime,
  formatTimespan,
  makeDateTime,
  parseDateTime,
  parseTimespan,
  TICKS_PER_MINUTE,
  TICKS_PER_SECOND,
  toWireValue,
} from './values.js'
export { toWireRows, type WireRows } from './wire-rows.js'
