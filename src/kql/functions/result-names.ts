/**
 * @module
 * Default column names of function calls (Kusto.Language's rules), split out of
 * function-helpers.ts (issue 19 item 6).
 */
// ---------------------------------------------------------------------------------------------
// Default column names of function calls

/**
 * How Kusto names the column of an unnamed call (`T | extend tostring(Name)` → `Name`), taken
 * from Kusto.Language's function table: `firstArgument` → the first argument's own result name
 * (a column name, recursively through such calls); `nameAndFirstArgument` → `<function>_<first>`;
 * `prefixAndFirstArgument` → `<prefix>_<first>`; `onlyArgument` → the argument's name when there
 * is exactly one; `prefixOnly` → `<prefix>`. Functions not listed give no name (the operator's
 * own default such as `Column1` / `print_0` applies). The binder (kql-core) applies these.
 */
export type ResultNameRule =
  | { readonly kind: 'firstArgument' }
  | { readonly kind: 'nameAndFirstArgument' }
  | { readonly kind: 'onlyArgument' }
  | { readonly kind: 'prefixAndFirstArgument'; readonly prefix: string }
  | { readonly kind: 'prefixOnly'; readonly prefix: string }

const FIRST: ResultNameRule = { kind: 'firstArgument' }
const NAME_FIRST: ResultNameRule = { kind: 'nameAndFirstArgument' }
const ONLY: ResultNameRule = { kind: 'onlyArgument' }

export const FUNCTION_RESULT_NAMES: Readonly<Record<string, ResultNameRule>> = {
  tostring: FIRST,
  tohex: FIRST,
  todynamic: FIRST,
  toobject: FIRST,
  tolong: FIRST,
  toint: FIRST,
  toreal: FIRST,
  todouble: FIRST,
  todatetime: FIRST,
  totimespan: FIRST,
  totime: FIRST,
  tobool: FIRST,
  toboolean: FIRST,
  todecimal: FIRST,
  toguid: FIRST,
  split: FIRST,
  parse_csv: FIRST,
  parse_json: FIRST,
  parsejson: FIRST,
  parse_xml: FIRST,
  format_datetime: FIRST,
  format_timespan: FIRST,
  format_bytes: FIRST,
  startofday: FIRST,
  bin: FIRST,
  floor: FIRST,
  bin_at: FIRST,
  bin_auto: FIRST,
  binary_and: FIRST,
  binary_or: FIRST,
  binary_xor: FIRST,
  binary_not: FIRST,
  binary_shift_left: FIRST,
  binary_shift_right: FIRST,
  bitset_count_ones: FIRST,
  series_fir: FIRST,
  series_iir: FIRST,
  series_outliers: FIRST,
  series_fill_backward: FIRST,
  series_fill_forward: FIRST,
  series_fill_const: FIRST,
  series_fill_linear: FIRST,
  round: FIRST,
  ceiling: FIRST,
  pow: FIRST,
  sqrt: FIRST,
  log: FIRST,
  log2: FIRST,
  log10: FIRST,
  exp: FIRST,
  exp2: FIRST,
  exp10: FIRST,
  cos: FIRST,
  sin: FIRST,
  tan: FIRST,
  acos: FIRST,
  asin: FIRST,
  atan: FIRST,
  atan2: FIRST,
  abs: FIRST,
  rand: FIRST,
  gamma: FIRST,
  loggamma: FIRST,
  strlen: NAME_FIRST,
  string_size: NAME_FIRST,
  dcount_hll: NAME_FIRST,
  percentile_tdigest: NAME_FIRST,
  make_datetime: ONLY,
  make_timespan: ONLY,
  gettype: { kind: 'prefixAndFirstArgument', prefix: 'type' },
  treepath: { kind: 'prefixAndFirstArgument', prefix: 'tree' },
  repeat: { kind: 'prefixAndFirstArgument', prefix: 'repeat' },
  percentiles_array_tdigest: { kind: 'prefixAndFirstArgument', prefix: 'percentile_tdigest' },
  tdigest_merge: { kind: 'prefixOnly', prefix: 'tdigests_merge_result' },
  merge_tdigest: { kind: 'prefixOnly', prefix: 'tdigests_merge_result' },
  hll_merge: { kind: 'prefixOnly', prefix: 'hll_merged_result' },
  ingestion_time: { kind: 'prefixOnly', prefix: '$IngestionTime' },
}
