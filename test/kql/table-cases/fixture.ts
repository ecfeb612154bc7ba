/**
 * @module
 * The workspace tables behind test/kql/table-cases/*.json: two push connections (Readings, Sites)
 * and their rows, ingested through the real ingest service. Values cover nulls, empty strings,
 * case variants, non-ASCII text, negative numbers and a datetime before 1970.
 */
export const TABLE_CASES_CONFIG = {
  connections: [
    {
      lookup: 'readings', kind: 'push', table: 'Readings',
      columns: [
        { name: 'timestamp', type: 'datetime' }, { name: 'sensor', type: 'string' }, { name: 'site', type: 'string' },
        { name: 'value', type: 'real' }, { name: 'status', type: 'long' }, { name: 'note', type: 'string' },
        { name: 'ok', type: 'bool' }, { name: 'duration', type: 'timespan' },
      ],
    },
    {
      lookup: 'sites', kind: 'push', table: 'Sites',
      columns: [{ name: 'timestamp', type: 'datetime' }, { name: 'site', type: 'string' }, { name: 'region', type: 'string' }, { name: 'capacity', type: 'long' }],
    },
  ],
}

export const READINGS_ROWS: readonly Record<string, unknown>[] = [
  { timestamp: '2024-01-01T00:00:00Z', sensor: 's1', site: 'north', value: 20.5, status: 200, note: 'ok', ok: true, duration: '00:00:01' },
  { timestamp: '2024-01-01T00:30:00Z', sensor: 's1', site: 'north', value: 21.5, status: 200, note: 'ERROR: disk full', ok: false, duration: '00:00:02' },
  { timestamp: '2024-01-01T01:10:00Z', sensor: 's2', site: 'south', value: 19.0, status: 500, note: 'error-timeout', ok: false, duration: null },
  { timestamp: '2024-01-01T01:50:00Z', sensor: 's2', site: 'south', value: null, status: 404, note: '', ok: null, duration: '00:00:05' },
  { timestamp: '2024-01-01T02:05:00Z', sensor: 's3', site: 'north', value: -3.25, status: 200, note: 'Über warm', ok: true, duration: '00:00:01' },
  { timestamp: '1969-12-31T23:00:00Z', sensor: 's3', site: 'north', value: 7.75, status: null, note: 'legacy', ok: true, duration: '00:00:03' },
  { timestamp: '2024-01-02T00:00:00Z', sensor: 's1', site: 'west', value: 22.0, status: 200, note: 'ok line1', ok: true, duration: '00:00:01' },
  { timestamp: '2024-01-02T12:00:00Z', sensor: 'S1', site: 'west', value: 18.5, status: 503, note: 'Error Timeout', ok: false, duration: '00:00:10' },
]

export const SITES_ROWS: readonly Record<string, unknown>[] = [
  { timestamp: '2024-01-01T00:00:00Z', site: 'north', region: 'EU', capacity: 10 },
  { timestamp: '2024-01-01T00:00:00Z', site: 'south', region: 'US', capacity: 5 },
  { timestamp: '2024-01-01T00:00:00Z', site: 'east', region: 'APAC', capacity: null },
]
