/**
 * @module
 * `provenant columnar status|segments|compact|check` (issue 16; docs/design/columnar.md): the
 * columnar tier's compaction progress per connection table, its segment files, a forced
 * compaction, and a check of the segment files against the manifest.
 */
import { columnarOf } from '../../config/config.js'
import { createServices } from '../../main.js'
import { type Command, configFrom, parse, table, UsageError } from '../cli-support.js'

const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z')

export const columnarCommand: Command = {
  name: 'columnar',
  summary: 'show, compact and check the columnar tier (Parquet segments)',
  usage: `provenant columnar status [--json]
provenant columnar segments [--json]
provenant columnar compact
provenant columnar check [--remove-orphans]

  status    per connection table: segments, rows compacted, rows still in the row store only
            (the tail every query reads from there) and the compaction watermark.
  segments  every segment file with its rows, row ids and time range.
  compact   compacts every table now (safe beside running servers: a segment is recorded only
            if no other compactor recorded those rows first).
  check     compares the segment files with the manifest: missing files, files with another
            number of rows, and orphans (files no manifest row names, left by a crash).
            --remove-orphans deletes orphans older than ten minutes.
  Segments live in PROVENANT_COLUMNAR_DIR (default <data>/segments).`,
  async run(argv) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' }, 'remove-orphans': { type: 'boolean' } })
    const [action] = positionals
    if (!['status', 'segments', 'compact', 'check'].includes(action ?? '')) throw new UsageError('say status, segments, compact or check')
    const base = configFrom(values)
    const handle = await createServices({ ...base, columnar: base.columnar ?? columnarOf(process.env, base.dataDir, true) })
    try {
      const columnar = handle.columnar!
      if (action === 'status') {
        const progress = await columnar.progress()
        if (values.json) return console.log(JSON.stringify(progress, null, 2))
        console.log(
          table(
            ['TABLE', 'CONNECTION', 'SEGMENTS', 'COMPACTED ROWS', 'TAIL ROWS', 'WATERMARK'],
            progress.map((p) => [
              p.sqlName,
              p.lookup,
              String(p.segments),
              String(p.compactedRows),
              String(p.tailRows),
              String(p.watermark),
            ]),
          ),
        )
      } else if (action === 'segments') {
        const segments = await columnar.store.segments()
        if (values.json) return console.log(JSON.stringify(segments, (_, v) => (typeof v === 'bigint' ? v.toString() : v), 2))
        console.log(
          table(
            ['TABLE', 'FILE', 'ROWS', 'ROW IDS', 'CREATED'],
            segments.map((s) => [s.sqlName, s.fileName, String(s.rowCount), `${s.minRowId}-${s.maxRowId}`, iso(s.createdAt)]),
          ),
        )
      } else if (action === 'compact') {
        const rows = await columnar.compactAll()
        console.log(`compacted ${rows} rows`)
      } else {
        const report = await columnar.store.check()
        const removed = values['remove-orphans'] ? await columnar.store.removeOrphans(10 * 60_000) : []
        console.log(
          `missing files: ${report.missing.length ? report.missing.join(', ') : 'none'}\n` +
            `files with another row count: ${report.mismatched.length ? report.mismatched.join(', ') : 'none'}\n` +
            `orphans: ${report.orphans.length ? report.orphans.join(', ') : 'none'}${removed.length ? ` (removed ${removed.length})` : ''}`,
        )
        if (report.missing.length > 0 || report.mismatched.length > 0) process.exitCode = 1
      }
    } finally {
      await handle.close()
    }
  },
}
