/**
 * @module
 * The KQL engine's public surface (design §7). Pure: no HTTP, no database driver, no clock.
 *
 * text → tokens → syntax tree → bound tree (types) → plan → for each part the dialect can express
 * faithfully, SQL + bound parameters; the rest runs in the engine's own evaluator over the rows
 * that SQL returned (docs/decisions.md, "KQL execution").
 */
export { KqlError, SqlRefusalError, type KqlErrorKind, type SourcePosition } from './kql-error.js'
export type { KqlType, KqlValue, DynamicValue } from './types.js'
export type { KqlColumn, KqlTable, KqlSchema } from './schema.js'
export { EMPTY_SCHEMA } from './schema.js'
export { formatDateTime, formatTimespan, parseDateTime, parseTimespan, toWireValue } from './values.js'
export type {
  CompiledQuery, CompileOptions, ExecuteOptions, QueryResult, SqlDialectName, SqlSource, Visualization,
} from './engine-types.js'
export { compileQuery, type CompiledPlanQuery } from './compile-query.js'
export { toWireRows, type WireRows } from './wire-rows.js'
export type { PlanNode, PlanColumn, Expr as PlanExpr, SqlQuery, SqlParam } from './plan/plan.js'
export { MAX_INTERMEDIATE_ROWS, quoteIdentifier, scanSql } from './exec/evaluator.js'
