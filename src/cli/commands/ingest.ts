/**
 * @module
 * `provenant ingest CONNECTION FILE`: imports a CSV (header row of column names) or JSONL file into
 * a data connection in batches, through the same validation as push ingest, keeping the rows that
 * fit and reporting the others. Shows a progress bar on a terminal and ends with a summary.
 */
import { createReadStream, statSync } from 'node:fs'
import { createInterface } from 'node:readline'
import cliProgress from 'cli-progress'
import { parse as parseCsv } from 'csv-parse'
import type { RowProblem } from '../../domain/ingest/index.js'
import { parseStrictJson } from '../../shared/strict-json.js'
import { type Command, configFrom, parse, resolveWorkspace, UsageError, withServices } from '../cli-support.js'

const BATCH = 5_000

/** One record of the file: its line number and value, and how many bytes were read so far. */
type FileRecord = { line: number; bytes: number } & ({ value: unknown } | { error: string })

async function* jsonlRecords(file: string): AsyncGenerator<FileRecord> {
  const lines = createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })
  let line = 0
  let bytes = 0
  for await (const text of lines) {
    line++
    bytes += Buffer.byteLength(text) + 1
    if (text.trim() === '') continue
    try {
      // as the HTTP ingest route: an integer beyond 2^53 that fits 64 bits is an exact long (issue 17)
      yield { line, bytes, value: parseStrictJson(text, { exactIntegers: true }) }
    } catch (error) {
      yield { line, bytes, error: `not valid JSON: ${(error as Error).message}` }
    }
  }
}

async function* csvRecords(file: string): AsyncGenerator<FileRecord> {
  const parser = createReadStream(file).pipe(parseCsv({ columns: true, bom: true, skip_empty_lines: true, info: true }))
  for await (const { record, info } of parser as AsyncIterable<{
    record: Record<string, string>
    info: { lines: number; bytes: number }
  }>) {
    yield { line: info.lines, bytes: info.bytes, value: record }
  }
}

export const ingestCommand: Command = {
  name: 'ingest',
  summary: 'import a CSV or JSONL file into a data connection',
  usage: `provenant ingest CONNECTION FILE [--format csv|jsonl] [--workspace W]

  CSV files have a header row of column names; JSONL files hold one row object per line.
  Rows that do not fit the connection's columns are skipped and listed in the summary
  (exit code 1 when any row was rejected).`,
  async run(argv) {
    const { values, positionals } = parse(argv, { format: { type: 'string' }, workspace: { type: 'string' } })
    const [lookup, file] = positionals
    if (!lookup || !file) throw new UsageError('ingest needs CONNECTION and FILE')
    const format = values.format ?? (/\.(csv|tsv)$/i.test(file) ? 'csv' : /\.(jsonl|ndjson|json)$/i.test(file) ? 'jsonl' : undefined)
    if (format !== 'csv' && format !== 'jsonl')
      throw new UsageError('cannot tell the format from the file name; pass --format csv or --format jsonl')
    let size: number
    try {
      size = statSync(file).size
    } catch (error) {
      throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
    }
    await withServices(configFrom(values), async (services) => {
      const workspace = await resolveWorkspace(services, values.workspace)
      await services.ingest.connectionOf(workspace.id, lookup)
      const started = Date.now()
      const bar = process.stderr.isTTY
        ? new cliProgress.SingleBar(
            { format: 'ingest |{bar}| {percentage}% | {stored} rows stored, {rejected} rejected', hideCursor: true },
            cliProgress.Presets.shades_classic,
          )
        : undefined
      bar?.start(size, 0, { stored: 0, rejected: 0 })
      let stored = 0
      const problems: RowProblem[] = []
      let batch: { line: number; value: unknown }[] = []
      let bytes = 0
      const flush = async () => {
        if (batch.length === 0) return
        const lines = batch.map((r) => r.line)
        const { result, problems: rejected } = await services.ingest.importRows(
          workspace.id,
          lookup,
          batch.map((r) => r.value),
          { fromText: format === 'csv', firstRowNumber: 1, actor: { id: 'cli', name: 'provenant CLI', via: 'cli' } },
        )
        stored += result?.rowCount ?? 0
        problems.push(...rejected.map((p) => ({ row: lines[p.row - 1]!, message: p.message })))
        batch = []
        bar?.update(Math.min(size, bytes), { stored, rejected: problems.length })
      }
      try {
        const records = format === 'csv' ? csvRecords(file) : jsonlRecords(file)
        for await (const record of records) {
          bytes = record.bytes
          if ('error' in record) {
            problems.push({ row: record.line, message: record.error })
            continue
          }
          batch.push({ line: record.line, value: record.value })
          if (batch.length >= BATCH) await flush()
        }
        await flush()
      } catch (error) {
        bar?.stop()
        throw new UsageError(`cannot read ${file} as ${format}: ${(error as Error).message}`)
      }
      bar?.update(size, { stored, rejected: problems.length })
      bar?.stop()
      const seconds = (Date.now() - started) / 1000
      console.log(`${stored} rows stored in ${lookup}, ${problems.length} rejected, ${seconds.toFixed(1)} s`)
      for (const problem of problems.slice(0, 50)) console.log(`  line ${problem.row}: ${problem.message}`)
      if (problems.length > 50) console.log(`  … and ${problems.length - 50} more`)
      if (problems.length > 0) process.exitCode = 1
    })
  },
}
