/**
 * @module
 * The one catalogue of documented KQL the engine refuses (issue 17 item 12): every entry is a
 * KqlError('unsupported') naming the feature and saying why — never "unknown function" with a
 * suggestion of another one. The parser (operators, sources, statements) and the binder
 * (functions, plugins) read it; src/kql/README.md lists it.
 */

const OUTSIDE_WORKSPACE = 'it reads data outside the workspace (other clusters, databases or stores)'
const NO_CLUSTER = 'there is no Kusto cluster, principal or extent behind a workspace'
const GRAPH = 'graph semantics (make-graph, graph-match) are not implemented'
const GEO_SHAPES = 'needs a geometry engine (lines, polygons, H3 cells) the engine does not include'

/** Scalar and aggregate functions, by name → reason. */
export const UNSUPPORTED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['cluster', OUTSIDE_WORKSPACE],
  ['database', OUTSIDE_WORKSPACE],
  ['external_table', OUTSIDE_WORKSPACE],
  ['materialized_view', OUTSIDE_WORKSPACE],
  ['stored_query_result', OUTSIDE_WORKSPACE],
  ['extent_id', NO_CLUSTER],
  ['extent_tags', NO_CLUSTER],
  ['cursor_after', NO_CLUSTER],
  ['cursor_before_or_at', NO_CLUSTER],
  ['cursor_current', NO_CLUSTER],
  ['current_principal', NO_CLUSTER],
  ['current_principal_details', NO_CLUSTER],
  ['current_principal_is_member_of', NO_CLUSTER],
  ['current_cluster_endpoint', NO_CLUSTER],
  ['current_database', NO_CLUSTER],
  ['estimate_data_size', "Kusto's size estimate depends on its storage format"],
  ['graph', GRAPH],
  ['all', GRAPH],
  ['inner_nodes', GRAPH],
  ['labels', GRAPH],
  ['map', GRAPH],
  ['node_degree_in', GRAPH],
  ['node_degree_out', GRAPH],
  ['geo_info_from_ip_address', 'needs a commercial IP geolocation database'],
  ['parse_user_agent', "Kusto's user-agent parser and its device database are not published"],
  [
    'hash_combine',
    'Kusto does not document how it mixes the hashes and no known function reproduces the documented example; the engine would return a different number',
  ],
  [
    'hash_many',
    'it combines hash() values the way hash_combine() does, which Kusto does not document; the engine would return a different number',
  ],
])

/** Documented geospatial functions that need shapes (the point/geohash/S2 ones are implemented). */
export function unsupportedGeoReason(name: string): string | undefined {
  return /^geo_[a-z0-9_]+$/.test(name) ? GEO_SHAPES : undefined
}

/** Tabular operators, by name → reason. */
export const UNSUPPORTED_OPERATORS: ReadonlyMap<string, string> = new Map([
  ['fork', 'one query yields one result table here (no multiple result sets)'],
  ['facet', 'one query yields one result table here (no multiple result sets)'],
  [
    'reduce',
    "Kusto's pattern-mining algorithm is not published and its documented examples contradict each other and the cited SLCT algorithm (threshold=0.9 prints nine groups sharing one wildcard pattern); the engine would return different groups",
  ],
  ['find', 'its output schema (pack of columns per table, $table) is not implemented; use search or union'],
  ['make-graph', GRAPH],
  ['graph-match', GRAPH],
  ['graph-merge', GRAPH],
  ['graph-to-table', GRAPH],
  ['graph-shortest-paths', GRAPH],
  ['graph-mark-components', GRAPH],
  ['externaldata', OUTSIDE_WORKSPACE],
  ['execute-and-cache', NO_CLUSTER],
  ['project-smart', 'an undocumented Kusto operator'],
  ['summarize-tdigest', 'an undocumented Kusto operator'],
  ['assert-schema', 'an undocumented Kusto operator'],
  ['inline_external_table', OUTSIDE_WORKSPACE],
  ['macro-expand', 'entity groups and clusters are not part of a workspace'],
  ['sql', 'T-SQL is not accepted'],
])

/** Tabular sources (`name(...)` at the start of a pipeline) that read outside the workspace. */
export const UNSUPPORTED_SOURCES: ReadonlyMap<string, string> = new Map([
  ['external_table', OUTSIDE_WORKSPACE],
  ['materialized_view', OUTSIDE_WORKSPACE],
  ['cluster', OUTSIDE_WORKSPACE],
  ['database', OUTSIDE_WORKSPACE],
  ['contextual_datatable', OUTSIDE_WORKSPACE],
  ['graph', GRAPH],
  ['entity_group', 'entity groups and clusters are not part of a workspace'],
  ['stored_query_result', OUTSIDE_WORKSPACE],
  ['inline_external_table', OUTSIDE_WORKSPACE],
])

/** `evaluate` plugins the engine implements; every other plugin is refused (pluginRefusal). */
export const SUPPORTED_PLUGINS: ReadonlySet<string> = new Set(['bag_unpack', 'pivot', 'narrow'])

const SANDBOXED = 'it runs user code in a sandbox (Python, R)'
const EXTERNAL = 'it calls a service outside the workspace'
const UNPUBLISHED = 'a machine-learning routine whose algorithm Kusto does not publish; the engine would return different groups'
const NOT_BUILT = 'a documented analytics plugin this engine does not implement (yet)'

/** Documented plugins by name → why each is refused; unknown names get the generic reason. */
const PLUGIN_REASONS: ReadonlyMap<string, string> = new Map([
  ...['python', 'r'].map((n) => [n, SANDBOXED] as const),
  ...[
    'sql_request',
    'cosmosdb_sql_request',
    'mysql_request',
    'postgresql_request',
    'http_request',
    'http_request_post',
    'azure_digital_twins_query_request',
    'ai_embeddings',
    'ai_chat_completion',
    'ai_chat_completion_prompt',
    'infer_storage_schema',
    'infer_storage_schema_with_suggestions',
  ].map((n) => [n, EXTERNAL] as const),
  ...['autocluster', 'basket', 'diffpatterns', 'diffpatterns_text'].map((n) => [n, UNPUBLISHED] as const),
  ...['geo_polygon_lookup', 'geo_line_lookup'].map((n) => [n, GEO_SHAPES] as const),
  ['preview', 'one query yields one result table here (no multiple result sets)'],
  ...[
    'active_users_count',
    'activity_counts_metrics',
    'activity_engagement',
    'activity_metrics',
    'new_activity_metrics',
    'session_count',
    'sliding_window_counts',
    'rolling_percentile',
    'sequence_detect',
    'funnel_sequence',
    'funnel_sequence_completion',
    'dcount_intersect',
    'schema_merge',
    'ipv4_lookup',
    'ipv6_lookup',
  ].map((n) => [n, NOT_BUILT] as const),
])

/** Why `evaluate name(...)` is refused: the documented plugin's own reason, else that no such plugin exists here. */
export function pluginRefusal(name: string): string {
  return PLUGIN_REASONS.get(name) ?? 'the engine implements only bag_unpack, pivot and narrow'
}

/** "'x' is not supported: reason" — the one wording every refusal of documented KQL uses. */
export function notSupported(what: string, reason: string): string {
  return `${what} is not supported: ${reason}`
}
