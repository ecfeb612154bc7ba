/**
 * @module
 * The KQL syntax tree: plain readonly nodes with a `kind` and their source offsets (`start`, `end`).
 *
 * Scalar and tabular expressions share one `Expr` union because KQL's grammar does not tell them
 * apart (`T` may be a table or a scalar `let`); the binder decides.
 */
import type { KqlType, KqlValue } from '../types.js'

export interface Span {
  readonly start: number
  readonly end: number
}

// ---------------------------------------------------------------------------------------------
// Statements
// ---------------------------------------------------------------------------------------------

export type Statement = LetStatement | QueryStatement | SetStatement | DeclareParametersStatement | PatternStatement

export interface LetStatement extends Span {
  readonly kind: 'Let'
  readonly name: string
  readonly nameStart: number
  readonly value: Expr | Lambda
}

export interface QueryStatement extends Span {
  readonly kind: 'Query'
  readonly expr: Expr
}

/** `set name [= value]`: query options; the binder reads the ones it knows (query_bin_auto_*). */
export interface SetStatement extends Span {
  readonly kind: 'Set'
  readonly name: string
  readonly value?: Expr
}

/**
 * `declare pattern Name [= (arg:string, ...)[path:string] { (v, ...).[p] = { tabular }; ... }]`.
 * `definitions` is undefined for a pattern declared without any.
 */
export interface PatternStatement extends Span {
  readonly kind: 'Pattern'
  readonly name: string
  readonly params: readonly string[]
  readonly pathName?: string
  readonly definitions?: readonly PatternDefinition[]
}

export interface PatternDefinition extends Span {
  readonly args: readonly string[]
  readonly path?: string
  readonly body: Expr
}

/** `declare query_parameters(name:type [= default], ...)`. */
export interface DeclareParametersStatement extends Span {
  readonly kind: 'DeclareParameters'
  readonly params: readonly Param[]
}

/** A user-defined function body: `(params) { lets; expr }` or `view () { ... }`. */
export interface Lambda extends Span {
  readonly kind: 'Lambda'
  readonly params: readonly Param[]
  readonly body: readonly Statement[]
  readonly isView: boolean
}

export interface Param extends Span {
  readonly name: string
  /** A scalar type, or a tabular parameter: `(x:long)` or `(*)`. */
  readonly type: ParamType
  readonly defaultValue?: Expr
}

export type ParamType =
  | { readonly kind: 'scalar'; readonly type: KqlType }
  | { readonly kind: 'tabular'; readonly columns: readonly ColumnDecl[]; readonly open: boolean }

export interface ColumnDecl extends Span {
  readonly name: string
  readonly type: KqlType
}

// ---------------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------------

export type Expr =
  | NameExpr
  | LiteralExpr
  | CallExpr
  | MemberExpr
  | IndexExpr
  | UnaryExpr
  | BinaryExpr
  | InExpr
  | BetweenExpr
  | ParenExpr
  | StarExpr
  | PipeExpr
  | DatatableExpr
  | PrintExpr
  | RangeExpr
  | UnionExpr
  | NamedArgExpr

export interface NameExpr extends Span {
  readonly kind: 'Name'
  readonly name: string
  /** True for `['name']`, which is never a keyword. */
  readonly quoted: boolean
}

export interface LiteralExpr extends Span {
  readonly kind: 'Literal'
  readonly type: KqlType
  readonly value: KqlValue
}

export interface CallExpr extends Span {
  readonly kind: 'Call'
  readonly name: string
  readonly nameEnd: number
  readonly args: readonly Expr[]
}

/** `x.y` (also `$left.x`). */
export interface MemberExpr extends Span {
  readonly kind: 'Member'
  readonly target: Expr
  readonly name: string
}

/** `x[0]`, `x['key']`, `x[-1]`. */
export interface IndexExpr extends Span {
  readonly kind: 'Index'
  readonly target: Expr
  readonly index: Expr
}

export interface UnaryExpr extends Span {
  readonly kind: 'Unary'
  readonly op: '-' | '+'
  readonly operand: Expr
}

/**
 * Arithmetic, comparison, logical and string operators. `op` is the operator as written in
 * lower case (`+`, `==`, `=~`, `and`, `contains`, `!has_cs`, `matches regex`, ...).
 */
export interface BinaryExpr extends Span {
  readonly kind: 'Binary'
  readonly op: string
  readonly opStart: number
  readonly left: Expr
  readonly right: Expr
}

/** `in`, `!in`, `in~`, `!in~`, `has_any`, `has_all` with a parenthesised list (or a tabular expression). */
export interface InExpr extends Span {
  readonly kind: 'In'
  readonly op: 'in' | '!in' | 'in~' | '!in~' | 'has_any' | 'has_all'
  readonly left: Expr
  readonly items: readonly Expr[]
}

export interface BetweenExpr extends Span {
  readonly kind: 'Between'
  readonly negated: boolean
  readonly left: Expr
  readonly low: Expr
  readonly high: Expr
}

export interface ParenExpr extends Span {
  readonly kind: 'Paren'
  readonly expr: Expr
}

/** `*` as an argument (`count(*)`, `arg_max(x, *)`) or a projection. */
export interface StarExpr extends Span {
  readonly kind: 'Star'
}

/** `name = value` inside a call's argument list (`f(c=7)`). */
export interface NamedArgExpr extends Span {
  readonly kind: 'NamedArg'
  readonly name: string
  readonly value: Expr
}

export interface PipeExpr extends Span {
  readonly kind: 'Pipe'
  readonly source: Expr
  readonly op: Operator
}

export interface DatatableExpr extends Span {
  readonly kind: 'Datatable'
  readonly columns: readonly ColumnDecl[]
  readonly values: readonly Expr[]
}

export interface PrintExpr extends Span {
  readonly kind: 'Print'
  readonly items: readonly NamedExpr[]
}

export interface RangeExpr extends Span {
  readonly kind: 'Range'
  readonly column: string
  readonly from: Expr
  readonly to: Expr
  readonly step: Expr
}

export interface UnionExpr extends Span {
  readonly kind: 'Union'
  readonly params: readonly OperatorParam[]
  readonly tables: readonly Expr[]
}

// ---------------------------------------------------------------------------------------------
// Pieces shared by operators
// ---------------------------------------------------------------------------------------------

/** `[name =] expr` or `(a, b) = expr`; `names` is empty when no name was written. */
export interface NamedExpr extends Span {
  readonly names: readonly string[]
  readonly expr: Expr
}

/** `name=value` operator parameters (`kind=inner`, `withsource=T`, `hint.strategy=shuffle`). */
export interface OperatorParam extends Span {
  readonly name: string
  /** An identifier value keeps its text; literals keep their value. */
  readonly value: string | number | boolean | bigint
  readonly valueStart: number
}

export interface OrderItem extends Span {
  readonly expr: Expr
  readonly direction?: 'asc' | 'desc'
  readonly nulls?: 'first' | 'last'
}

/** A column name or a wildcard pattern (`Col*`) in project-away/keep/reorder. */
export interface NamePattern extends Span {
  readonly pattern: string
  readonly direction?: 'asc' | 'desc' | 'granny-asc' | 'granny-desc'
}

export type ParsePatternPart =
  | { readonly kind: 'text'; readonly text: string; readonly start: number }
  | { readonly kind: 'star'; readonly start: number }
  | { readonly kind: 'column'; readonly name: string; readonly type?: KqlType; readonly start: number }

export interface MvExpandItem extends Span {
  readonly name?: string
  readonly expr: Expr
  readonly toType?: KqlType
}

// ---------------------------------------------------------------------------------------------
// Tabular operators (what follows a `|`)
// ---------------------------------------------------------------------------------------------

export type Operator =
  | WhereOp
  | ProjectOp
  | ProjectAwayOp
  | ProjectKeepOp
  | ProjectRenameOp
  | ProjectReorderOp
  | ProjectByNamesOp
  | ExtendOp
  | SummarizeOp
  | CountOp
  | DistinctOp
  | TopOp
  | TakeOp
  | SortOp
  | JoinOp
  | LookupOp
  | MvExpandOp
  | MvApplyOp
  | ParseOp
  | ParseKvOp
  | MakeSeriesOp
  | SerializeOp
  | SampleOp
  | SampleDistinctOp
  | AsOp
  | GetSchemaOp
  | RenderOp
  | TopNestedOp
  | ScanOp
  | EvaluateOp
  | InvokeOp
  | ConsumeOp
  | TopHittersOp
  | UnionOp
  | PartitionOp

export interface WhereOp extends Span {
  readonly kind: 'Where'
  readonly predicate: Expr
  /** From a `search` over tables: its `*` terms do not read the `$table` column it adds. */
  readonly searchSource?: true
}
export interface ProjectOp extends Span {
  readonly kind: 'Project'
  readonly items: readonly NamedExpr[]
}
export interface ProjectAwayOp extends Span {
  readonly kind: 'ProjectAway'
  readonly patterns: readonly NamePattern[]
}
export interface ProjectKeepOp extends Span {
  readonly kind: 'ProjectKeep'
  readonly patterns: readonly NamePattern[]
}
export interface ProjectRenameOp extends Span {
  readonly kind: 'ProjectRename'
  readonly renames: readonly { readonly newName: string; readonly oldName: string; readonly start: number; readonly oldStart: number }[]
}
export interface ProjectReorderOp extends Span {
  readonly kind: 'ProjectReorder'
  readonly patterns: readonly NamePattern[]
}
export interface ProjectByNamesOp extends Span {
  readonly kind: 'ProjectByNames'
  readonly args: readonly Expr[]
}
export interface ExtendOp extends Span {
  readonly kind: 'Extend'
  readonly items: readonly NamedExpr[]
}
export interface SummarizeOp extends Span {
  readonly kind: 'Summarize'
  readonly params: readonly OperatorParam[]
  readonly aggregates: readonly NamedExpr[]
  readonly by: readonly NamedExpr[]
}
export interface CountOp extends Span {
  readonly kind: 'Count'
  readonly name?: string
}
export interface DistinctOp extends Span {
  readonly kind: 'Distinct'
  readonly params: readonly OperatorParam[]
  readonly items: readonly NamedExpr[]
}
export interface TopOp extends Span {
  readonly kind: 'Top'
  readonly count: Expr
  readonly by: readonly OrderItem[]
}
export interface TakeOp extends Span {
  readonly kind: 'Take'
  readonly count: Expr
}
export interface SortOp extends Span {
  readonly kind: 'Sort'
  readonly by: readonly OrderItem[]
}

/** One join condition: a shared column name, or `$left.a == $right.b`. */
export interface JoinCondition extends Span {
  readonly left: string
  readonly right: string
  readonly leftStart: number
  readonly rightStart: number
}

export interface JoinOp extends Span {
  readonly kind: 'Join'
  readonly params: readonly OperatorParam[]
  readonly right: Expr
  readonly on: readonly JoinCondition[]
}
export interface LookupOp extends Span {
  readonly kind: 'Lookup'
  readonly params: readonly OperatorParam[]
  readonly right: Expr
  readonly on: readonly JoinCondition[]
}
export interface MvExpandOp extends Span {
  readonly kind: 'MvExpand'
  readonly params: readonly OperatorParam[]
  readonly items: readonly MvExpandItem[]
  readonly limit?: Expr
}
export interface MvApplyOp extends Span {
  readonly kind: 'MvApply'
  readonly params: readonly OperatorParam[]
  readonly items: readonly MvExpandItem[]
  readonly limit?: Expr
  /** The sub-pipeline inside `on ( ... )`, applied to each row's expanded rows. */
  readonly subquery: readonly Operator[]
  readonly subqueryStart: number
}
export interface ParseOp extends Span {
  readonly kind: 'Parse'
  readonly where: boolean
  readonly params: readonly OperatorParam[]
  readonly source: Expr
  readonly pattern: readonly ParsePatternPart[]
}
export interface ParseKvOp extends Span {
  readonly kind: 'ParseKv'
  readonly source: Expr
  readonly keys: readonly ColumnDecl[]
  readonly options: readonly OperatorParam[]
}
export interface MakeSeriesOp extends Span {
  readonly kind: 'MakeSeries'
  readonly params: readonly OperatorParam[]
  readonly aggregates: readonly { readonly item: NamedExpr; readonly defaultValue?: Expr }[]
  readonly on: Expr
  readonly from?: Expr
  readonly to?: Expr
  readonly step: Expr
  /** Written as `in range(from, to, step)`. */
  readonly rangeSyntax?: boolean
  readonly by: readonly NamedExpr[]
}
export interface SerializeOp extends Span {
  readonly kind: 'Serialize'
  readonly items: readonly NamedExpr[]
}
export interface SampleOp extends Span {
  readonly kind: 'Sample'
  readonly count: Expr
}
export interface SampleDistinctOp extends Span {
  readonly kind: 'SampleDistinct'
  readonly count: Expr
  readonly column: Expr
}
export interface AsOp extends Span {
  readonly kind: 'As'
  readonly params: readonly OperatorParam[]
  readonly name: string
}
export interface GetSchemaOp extends Span {
  readonly kind: 'GetSchema'
}
export interface RenderOp extends Span {
  readonly kind: 'Render'
  readonly chart: string
  readonly properties: readonly { readonly name: string; readonly value: Expr }[]
}
export interface TopNestedLevel extends Span {
  readonly count?: Expr
  readonly of: NamedExpr
  readonly others?: { readonly name?: string; readonly value: Expr }
  readonly by: NamedExpr
  readonly direction?: 'asc' | 'desc'
}
export interface TopNestedOp extends Span {
  readonly kind: 'TopNested'
  readonly levels: readonly TopNestedLevel[]
}
export interface ScanStep extends Span {
  readonly name: string
  readonly output?: 'all' | 'last' | 'none'
  readonly predicate: Expr
  readonly assignments: readonly { readonly name: string; readonly value: Expr; readonly start: number }[]
}
export interface ScanOp extends Span {
  readonly kind: 'Scan'
  readonly params: readonly OperatorParam[]
  readonly declare: readonly { readonly name: string; readonly type: KqlType; readonly defaultValue?: Expr; readonly start: number }[]
  readonly steps: readonly ScanStep[]
}
export interface EvaluateOp extends Span {
  readonly kind: 'Evaluate'
  readonly params: readonly OperatorParam[]
  readonly call: CallExpr
  /** `: (name:type, ...)` after the call; `schemaStar` when it starts with `*` (keep the input columns). */
  readonly schema?: readonly ColumnDecl[]
  readonly schemaStar?: boolean
}
export interface InvokeOp extends Span {
  readonly kind: 'Invoke'
  readonly call: CallExpr
}
export interface ConsumeOp extends Span {
  readonly kind: 'Consume'
}
export interface TopHittersOp extends Span {
  readonly kind: 'TopHitters'
  readonly count: Expr
  readonly of: Expr
  readonly by?: Expr
}
export interface UnionOp extends Span {
  readonly kind: 'UnionOp'
  readonly params: readonly OperatorParam[]
  readonly tables: readonly Expr[]
}

/** `partition by Column (operators)`: the operators run on each partition's rows. */
export interface PartitionOp extends Span {
  readonly kind: 'Partition'
  readonly params: readonly OperatorParam[]
  readonly by: Expr
  readonly subquery: readonly Operator[]
}

/** The parsed query: statements in order; the last tabular query statement is the result. */
export interface Script extends Span {
  readonly statements: readonly Statement[]
}
