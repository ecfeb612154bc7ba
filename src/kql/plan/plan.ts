/**
 * @module
 * The relational plan: what a bound query means, with no SQL and no evaluation strategy in it
 * (style notes §6.3). The binder produces it; the in-memory evaluator (exec/) runs it; a SQL
 * compiler may push the longest supported prefix of a pipeline into the database.
 *
 * Contract for every consumer (keep it stable; other components depend on it):
 * - Every node has `columns`: its output schema, in order. Rows are positional arrays in that order.
 * - Scalar expressions (`Expr`) read one input row: `ColumnRef.index` is a position in the node's
 *   *input* columns (for `Join`, see the node). Every `Expr` carries its KQL result `type`.
 * - Values follow ../types.ts (datetime/timespan bigint ticks, strings never null, ...).
 * - Nodes are plain readonly data except `Call.impl` and the aggregate `impl`s: the function
 *   library's bound implementation for that call site (a SQL compiler reads `name`, `args` and
 *   `type` and ignores `impl`).
 * - Column names are unique within a node's `columns`. Hidden columns (`hidden: true`, from a
 *   table's hiddenColumns) are dropped from the final result.
 *
 * SQL pushdown guidance: `TableScan` is the leaf; a pushdown may replace a chain
 * `TableScan → Filter/Project/Summarize/Sort/Take/Top/Distinct/Count` (and `Join` of two pushed
 * chains) with its own node kind added to this union, as long as it keeps the same `columns`.
 * Everything under a `Materialize`, and expressions of kind `Window`, `ScalarSubquery`,
 * `InSubquery` or `Call` to a function the dialect lacks, must stay in memory.
 */
import type { BoundAggregate, BoundScalar } from '../functions/function-types.js'
import type { KqlType, KqlValue } from '../types.js'

export interface PlanColumn {
  readonly name: string
  readonly type: KqlType
  /** A table's hidden column (reachable by name, never part of `*` or the final result). */
  readonly hidden?: boolean
}

// ---------------------------------------------------------------------------------------------
// Scalar expressions
// ---------------------------------------------------------------------------------------------

export type ArithmeticOp = '+' | '-' | '*' | '/' | '%'
export type ComparisonOp = '==' | '!=' | '<' | '<=' | '>' | '>=' | '=~' | '!~'
export type LogicalOp = 'and' | 'or'
/** KQL string operators, including their negations (`!has`) and case-sensitive forms (`has_cs`). */
export type StringOp =
  | 'contains'
  | '!contains'
  | 'contains_cs'
  | '!contains_cs'
  | 'has'
  | '!has'
  | 'has_cs'
  | '!has_cs'
  | 'hasprefix'
  | '!hasprefix'
  | 'hasprefix_cs'
  | '!hasprefix_cs'
  | 'hassuffix'
  | '!hassuffix'
  | 'hassuffix_cs'
  | '!hassuffix_cs'
  | 'startswith'
  | '!startswith'
  | 'startswith_cs'
  | '!startswith_cs'
  | 'endswith'
  | '!endswith'
  | 'endswith_cs'
  | '!endswith_cs'
  | 'like'
  | '!like'
  | 'like_cs'
  | '!like_cs'
  | 'matches regex'
export type BinaryOp = ArithmeticOp | ComparisonOp | LogicalOp | StringOp

export const STRING_OPS: readonly StringOp[] = [
  'contains',
  '!contains',
  'contains_cs',
  '!contains_cs',
  'has',
  '!has',
  'has_cs',
  '!has_cs',
  'hasprefix',
  '!hasprefix',
  'hasprefix_cs',
  '!hasprefix_cs',
  'hassuffix',
  '!hassuffix',
  'hassuffix_cs',
  '!hassuffix_cs',
  'startswith',
  '!startswith',
  'startswith_cs',
  '!startswith_cs',
  'endswith',
  '!endswith',
  'endswith_cs',
  '!endswith_cs',
  'like',
  '!like',
  'like_cs',
  '!like_cs',
  'matches regex',
]

export type ListOp = 'in' | '!in' | 'in~' | '!in~' | 'has_any' | 'has_all'

export type WindowFn = 'prev' | 'next' | 'row_number' | 'row_cumsum' | 'row_rank_min' | 'row_rank_dense' | 'row_window_session'

export type Expr =
  | Literal
  | ColumnRef
  | Call
  | Binary
  | Unary
  | InList
  | InSubquery
  | Between
  | Member
  | Pack
  | Convert
  | Window
  | ScalarSubquery

export interface Literal {
  readonly kind: 'Literal'
  readonly type: KqlType
  readonly value: KqlValue
}

export interface ColumnRef {
  readonly kind: 'ColumnRef'
  readonly type: KqlType
  /** Position in the input row. */
  readonly index: number
  readonly name: string
}

/** A call to the function library (`name` as registered, lower case). */
export interface Call {
  readonly kind: 'Call'
  readonly type: KqlType
  readonly name: string
  readonly args: readonly Expr[]
  readonly impl: BoundScalar
  /** false for now(), rand(), ...: never constant-folded. */
  readonly deterministic: boolean
  /**
   * The same node feeds several output columns (a multi-column function such as series_stats()
   * split into columns); evaluators compute it once per row.
   */
  readonly shared?: boolean
}

/**
 * Typed binary operation. Arithmetic follows Kusto's typing (int/long/real promotion, datetime and
 * timespan arithmetic, integer division truncating toward zero, `%` never negative for a positive
 * divisor); comparisons yield bool (null when an operand is null, except `!=`); `and`/`or` are
 * three-valued; string operators follow the documentation (`has` = whole term, case-insensitive).
 */
export interface Binary {
  readonly kind: 'Binary'
  readonly type: KqlType
  readonly op: BinaryOp
  readonly left: Expr
  readonly right: Expr
}

export interface Unary {
  readonly kind: 'Unary'
  readonly type: KqlType
  readonly op: 'not' | 'negate'
  readonly operand: Expr
}

/** `x in (a, b)`, `x has_any (...)`, ...; an item of type dynamic array contributes its elements. */
export interface InList {
  readonly kind: 'InList'
  readonly type: 'bool'
  readonly op: ListOp
  readonly operand: Expr
  readonly items: readonly Expr[]
}

/** `x in (T | project y)`: the values of the subquery's first column. */
export interface InSubquery {
  readonly kind: 'InSubquery'
  readonly type: 'bool'
  readonly op: ListOp
  readonly operand: Expr
  readonly subquery: PlanNode
}

export interface Between {
  readonly kind: 'Between'
  readonly type: 'bool'
  readonly negated: boolean
  readonly operand: Expr
  readonly low: Expr
  readonly high: Expr
}

/** Dynamic accessor `x.key`, `x['key']`, `x[0]`, `x[-1]` (result is dynamic). */
export interface Member {
  readonly kind: 'Member'
  readonly type: 'dynamic'
  readonly target: Expr
  /** A string (property) or a long (array index; negative counts from the end). */
  readonly key: Expr
}

/** A property bag built from named values (pack_all(), bag_pack_columns()). */
export interface Pack {
  readonly kind: 'Pack'
  readonly type: 'dynamic'
  readonly entries: readonly { readonly key: string; readonly value: Expr }[]
  /** pack_all(true): leave out null and empty values. */
  readonly skipNullAndEmpty: boolean
}

/** A conversion between KQL types the binder inserted (int → long, `to typeof()`, datatable cells). */
export interface Convert {
  readonly kind: 'Convert'
  readonly type: KqlType
  readonly operand: Expr
}

/**
 * A window function over the input rows in order (valid only over serialized input):
 * prev/next(expr, offset, default), row_number(start, restart), row_cumsum(expr, restart),
 * row_rank_min/dense(expr, restart), row_window_session(expr, maxDistance, maxGap, restart).
 */
export interface Window {
  readonly kind: 'Window'
  readonly type: KqlType
  readonly fn: WindowFn
  readonly args: readonly Expr[]
}

/** toscalar(): the first column of the first row of a plan, evaluated once per run. */
export interface ScalarSubquery {
  readonly kind: 'ScalarSubquery'
  readonly type: KqlType
  readonly plan: PlanNode
}

// ---------------------------------------------------------------------------------------------
// Plan nodes
// ---------------------------------------------------------------------------------------------

export type PlanNode =
  | TableScan
  | Values
  | Range
  | Filter
  | Project
  | Summarize
  | Sort
  | Take
  | Top
  | Distinct
  | Count
  | Join
  | Union
  | MvExpand
  | MvApply
  | ApplyInput
  | Parse
  | ParseKv
  | MakeSeries
  | Serialize
  | Sample
  | SampleDistinct
  | TopNested
  | ScanPattern
  | TopHitters
  | BagUnpack
  | Pivot
  | Partition
  | Materialize
  | SqlQuery

/**
 * Reads a workspace table. `sqlColumns[i]` is the physical column of `columns[i]`; the first
 * phase runs `SELECT <sqlColumns quoted> FROM <sqlName quoted>` and nothing else.
 */
export interface TableScan {
  readonly kind: 'TableScan'
  readonly columns: readonly PlanColumn[]
  /** KQL table name. */
  readonly table: string
  readonly sqlName: string
  readonly sqlColumns: readonly string[]
  /**
   * Per column, when present and not 1: the physical integer times this factor is the value
   * (`_ingested_at` is stored in milliseconds and read as datetime ticks: 10,000). Every reader
   * of the table multiplies in SQL (scanSql, the pushdown's scan).
   */
  readonly sqlScale?: readonly number[]
}

/** Constant rows (datatable, the one empty row under print). */
export interface Values {
  readonly kind: 'Values'
  readonly columns: readonly PlanColumn[]
  readonly rows: readonly (readonly KqlValue[])[]
}

/** `range x from a to b step s`: one column of long, real, datetime or timespan; bounds have no row context. */
export interface Range {
  readonly kind: 'Range'
  readonly columns: readonly PlanColumn[]
  readonly from: Expr
  readonly to: Expr
  readonly step: Expr
}

/** Keeps rows whose predicate is true (null counts as false). */
export interface Filter {
  readonly kind: 'Filter'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly predicate: Expr
}

/**
 * Computes one output column per expression (project, extend, project-away/-rename/-reorder/-keep,
 * print). A pass-through column is a ColumnRef. Window expressions make row order significant.
 */
export interface Project {
  readonly kind: 'Project'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly exprs: readonly Expr[]
}

export interface AggregateCall {
  /** Library name (`count`, `avg`, `percentiles`...). */
  readonly name: string
  /** The explicit arguments; with `star`, followed by one ColumnRef per visible input column. */
  readonly args: readonly Expr[]
  /** `*` was an argument (arg_max(ts, *)). */
  readonly star: boolean
  readonly impl: BoundAggregate
  /** The output columns this call contributes (usually one). */
  readonly outputs: readonly PlanColumn[]
}

/**
 * Groups by `keys` and computes `aggregates`. Output: key columns in order, then each aggregate's
 * outputs. With no keys the output is exactly one row, even for empty input.
 */
export interface Summarize {
  readonly kind: 'Summarize'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly keys: readonly Expr[]
  readonly aggregates: readonly AggregateCall[]
}

export interface SortKey {
  readonly expr: Expr
  readonly descending: boolean
  /** Resolved by the binder (Kusto: nulls first for asc, last for desc, unless written). */
  readonly nullsFirst: boolean
}

/** Stable sort. */
export interface Sort {
  readonly kind: 'Sort'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly keys: readonly SortKey[]
}

export interface Take {
  readonly kind: 'Take'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly count: number
}

/** The first `count` rows in `keys` order (sort + take). */
export interface Top {
  readonly kind: 'Top'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly count: number
  readonly keys: readonly SortKey[]
}

/** Distinct rows over all input columns (the binder projects first), first occurrence order. */
export interface Distinct {
  readonly kind: 'Distinct'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
}

/** One row, one long column: the input's row count. */
export interface Count {
  readonly kind: 'Count'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
}

/** The join kinds the engine runs (spelled as Kusto does; aliases resolve to these in the binder). */
export const JOIN_KINDS = [
  'innerunique',
  'inner',
  'leftouter',
  'rightouter',
  'fullouter',
  'leftanti',
  'rightanti',
  'leftsemi',
  'rightsemi',
] as const
export type JoinKind = (typeof JOIN_KINDS)[number]

/**
 * Equality join on `leftKeys[i] == rightKeys[i]` (indexes into each side's columns; string keys
 * compare case-sensitively, nulls match nulls). Output columns:
 * - leftsemi/leftanti: the left columns; rightsemi/rightanti: the right columns;
 * - otherwise the left columns, then the right columns listed in `rightOutput` (all of them for
 *   join, the non-key ones for lookup), renamed with a numeric suffix on a clash (`Key1`).
 * `innerunique` keeps the first left row per key, then joins like inner.
 */
export interface Join {
  readonly kind: 'Join'
  readonly columns: readonly PlanColumn[]
  readonly joinKind: JoinKind
  readonly left: PlanNode
  readonly right: PlanNode
  readonly leftKeys: readonly number[]
  readonly rightKeys: readonly number[]
  readonly rightOutput: readonly number[]
  /** true for the lookup operator (its right side is a dimension table; semantics as leftouter/inner). */
  readonly isLookup: boolean
}

/**
 * Concatenates inputs. `mappings[i][c]` is the column of input i feeding output column c, or -1
 * (null / ""). With `withSource`, output column 0 holds `sourceNames[i]`.
 */
export interface Union {
  readonly kind: 'Union'
  readonly columns: readonly PlanColumn[]
  readonly inputs: readonly PlanNode[]
  readonly mappings: readonly (readonly number[])[]
  readonly sourceNames?: readonly string[]
}

export interface ExpandItem {
  readonly expr: Expr
  /** The output column that receives the element (replaces a column or is appended). */
  readonly output: number
  /** `to typeof(t)`: elements are converted; otherwise dynamic. */
  readonly type: KqlType
}

/**
 * mv-expand: for each row, the items' arrays (or bags) are expanded in parallel into rows; the
 * longest decides the row count, shorter ones give null. Output columns: the input columns, with
 * item columns replaced in place, then new named items, then the item index column if any.
 * Rows whose arrays are all empty produce no output; a null/non-array scalar is kept as one row.
 */
export interface MvExpand {
  readonly kind: 'MvExpand'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly items: readonly ExpandItem[]
  /** bag: a property bag expands to one single-property bag per key; array: to [key, value] pairs. */
  readonly bagExpansion: 'bag' | 'array'
  /** Output column of with_itemindex (0-based element index), if requested. */
  readonly itemIndex?: number
  readonly limit?: number
}

/**
 * mv-apply: per input row, the items are expanded (in parallel, as mv-expand) into a sub-table
 * whose columns are the row's columns `subtableColumns` (input column indexes), with each item's
 * elements at `itemOutputs[k]` (replacing a column or appended), then the item index if
 * requested. `subquery` (leaf: ApplyInput) runs on it. Output: the input columns `keptColumns`
 * (not expanded and not produced by the subquery), then the subquery's columns.
 */
export interface MvApply {
  readonly kind: 'MvApply'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly items: readonly Expr[]
  readonly itemTypes: readonly KqlType[]
  readonly subtableColumns: readonly number[]
  readonly itemOutputs: readonly number[]
  readonly bagExpansion: 'bag' | 'array'
  readonly withItemIndex: boolean
  readonly limit?: number
  readonly keptColumns: readonly number[]
  readonly subquery: PlanNode
}

/** The per-row sub-table inside an MvApply subquery. */
export interface ApplyInput {
  readonly kind: 'ApplyInput'
  readonly columns: readonly PlanColumn[]
}

/**
 * parse / parse-where. The pattern has been compiled into one JavaScript regular expression;
 * capture group `captures[i].group` feeds output column `captures[i].output` (converted to its
 * type). Rows that do not match keep nulls (parse) or are dropped (parse-where, and rows whose
 * typed captures fail to convert).
 */
export interface Parse {
  readonly kind: 'Parse'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly source: Expr
  readonly regex: string
  readonly flags: string
  readonly captures: readonly { readonly group: number; readonly output: number; readonly type: KqlType }[]
  readonly dropUnmatched: boolean
  /** relaxed: a capture that fails to convert becomes null instead of failing the match. */
  readonly relaxed: boolean
}

/** parse-kv: extracts `keys` from key/value text into appended (or replaced) columns. */
export interface ParseKv {
  readonly kind: 'ParseKv'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly source: Expr
  readonly keys: readonly { readonly name: string; readonly type: KqlType; readonly output: number }[]
  readonly pairDelimiter?: string
  readonly kvDelimiter?: string
  readonly quote?: string
  readonly escape?: string
  /** `regex=`: a pattern with two groups, key and value. */
  readonly regex?: string
  readonly greedy: boolean
}

/**
 * make-series: per group (`keys`), one row whose aggregate columns are dynamic arrays with one
 * element per axis bin from `from` to `to` (exclusive) by `step`, `defaults[i]` where a bin has no
 * rows; the axis column holds the bin starts. Without `from`/`to` the bins span the data (from
 * the bin of the smallest axis value). Output: keys, then aggregates, then the axis.
 */
export interface MakeSeries {
  readonly kind: 'MakeSeries'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly keys: readonly Expr[]
  readonly aggregates: readonly AggregateCall[]
  readonly defaults: readonly KqlValue[]
  readonly axis: Expr
  readonly from?: Expr
  readonly to?: Expr
  readonly step: Expr
  /** Output position of each aggregate's series, and of the axis column. */
  readonly aggregateOutputs: readonly number[]
  readonly axisOutput: number
  /** kind=nonempty: an empty input still yields one row of defaults (when there are no keys). */
  readonly nonEmpty: boolean
  /**
   * The `in range(start, stop, step)` form: bins are aligned with bin() (not to `from`) and
   * `to` is inclusive.
   */
  readonly rangeSyntax?: boolean
  /**
   * The input is one row per key and bin (binder/operators/make-series-bins.ts): `keys` and `axis` read
   * the group's key columns and the bin's start, and each aggregate's only argument reads the
   * group's value, which becomes that bin's cell as it is.
   */
  readonly preAggregated?: boolean
}

/** Marks the input order as meaningful (window functions); a no-op in memory. */
export interface Serialize {
  readonly kind: 'Serialize'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
}

/** `count` rows chosen uniformly with the run's seeded random source. */
export interface Sample {
  readonly kind: 'Sample'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly count: number
}

/** Up to `count` distinct values of `expr` (one column). */
export interface SampleDistinct {
  readonly kind: 'SampleDistinct'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly count: number
  readonly expr: Expr
}

export interface TopNestedLevel {
  readonly count?: number
  readonly key: Expr
  readonly aggregate: AggregateCall
  readonly descending: boolean
  /** `with others = value`: the key value of the row aggregating the rest. */
  readonly others?: KqlValue
}

/** top-nested: hierarchical top-N; output: per level its key column and its aggregate column. */
export interface TopNested {
  readonly kind: 'TopNested'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly levels: readonly TopNestedLevel[]
}

export interface ScanStepPlan {
  readonly name: string
  readonly output: 'all' | 'last' | 'none'
  /**
   * Evaluated over the combined row: input columns, then the step's own state (declared columns
   * as of the previous record of this match), then for each step its state (`step.col`).
   */
  readonly predicate: Expr
  /** Declared-column assignments `state[index] = expr` on the same combined row. */
  readonly assignments: readonly { readonly index: number; readonly expr: Expr }[]
}

/**
 * The scan operator (sequence matching with state). Output: the input columns, the declared
 * columns, then the match id column when `withMatchId`.
 */
export interface ScanPattern {
  readonly kind: 'ScanPattern'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly declared: readonly { readonly name: string; readonly type: KqlType; readonly defaultValue: KqlValue }[]
  readonly steps: readonly ScanStepPlan[]
  readonly withMatchId: boolean
}

/** top-hitters: the `count` most frequent values of `expr` (weighted by `weight` if given). */
export interface TopHitters {
  readonly kind: 'TopHitters'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly count: number
  readonly expr: Expr
  readonly weight?: Expr
}

/**
 * evaluate bag_unpack(column[, prefix]): the bag's properties become columns. The schema is the
 * declared output schema, or the one discovered from the data before the run
 * (CompiledQuery.dynamicSchema): by default the input columns but the bag, then one column per
 * property (sorted, prefixed).
 */
export interface BagUnpack {
  readonly kind: 'BagUnpack'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly bagColumn: number
  /** What feeds each output column: an input column, or a property of the bag (converted to the column's type). */
  readonly sources: readonly ({ readonly column: number } | { readonly property: string })[]
}

/**
 * evaluate pivot(column[, aggregation][, keys...]): rows grouped by `keys`; each value in `values`
 * (the distinct values of `pivot`, discovered from the data before the run) becomes a column that
 * holds `aggregate` over the group's rows with that value. Output: the keys, then one column per
 * value, in `values` order.
 */
export interface Pivot {
  readonly kind: 'Pivot'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly keys: readonly Expr[]
  readonly pivot: Expr
  readonly aggregate: AggregateCall
  readonly values: readonly KqlValue[]
}

/**
 * partition by Column (subquery): the input's rows are grouped by `key`; `subquery` (whose leaf is
 * an ApplyInput with the input's columns) runs on each group and the results are concatenated.
 */
export interface Partition {
  readonly kind: 'Partition'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly key: Expr
  readonly subquery: PlanNode
}

/** materialize(): the input is evaluated at most once per run and shared by every reference. */
export interface Materialize {
  readonly kind: 'Materialize'
  readonly columns: readonly PlanColumn[]
  readonly input: PlanNode
  readonly id: number
}

/** A bound parameter of a pushed-down statement: a literal's driver value, or now() of the run. */
export type SqlParam = { readonly value: unknown } | { readonly now: true }

/**
 * A part of the plan that the database runs as one SQL statement (sql/push-down.ts). Its rows are
 * the `columns` of the subtree it replaces, decoded by type. `fallback` is that subtree: the
 * evaluator runs it in memory when the database refuses the data (SqlRefusalError), so a pushed
 * query never answers differently from the in-memory evaluator.
 */
export interface SqlQuery {
  readonly kind: 'SqlQuery'
  readonly columns: readonly PlanColumn[]
  /** One SELECT with the dialect's placeholders; identifiers quoted, literals never in the text. */
  readonly sql: string
  readonly params: readonly SqlParam[]
  /** Output columns whose NULL stands for NaN (SQLite's AVG of no values: SQLite has no NaN). */
  readonly nullIsNaN: readonly number[]
  readonly fallback: PlanNode
}

/** Every node kind, for `Record<PlanNodeKind, ...>` exhaustiveness checks. */
export type PlanNodeKind = PlanNode['kind']
export type ExprKind = Expr['kind']
