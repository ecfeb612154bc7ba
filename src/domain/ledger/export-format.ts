/**
 * @module
 * The activity-log export formats (spec 4.5 `format=json|csv`; design §8) and their reader, so an
 * export can be verified offline with verify-chain (a later `provenant verify-export FILE`).
 *
 * Both formats are written as a stream: one header, the records in RecordID order, one trailer.
 * Every record carries every hashed field exactly as stored (RecordID, timestamp, userId, the
 * canonical text, previous digest and digest in lowercase hex) next to readable copies of the body
 * fields. The canonical text is authoritative; a reader checks the readable copies against it, so
 * an export whose displayed fields were edited fails verification at that record.
 *
 * JSON: one valid JSON document, laid out one item per line so it can be read line by line:
 *
 *     {"format":"provenant/activity-log-export/v1","header":{...},"records":[
 *     {"RecordID":"000000000001",...}
 *     ,{"RecordID":"000000000002",...}
 *     ],"trailer":{...}}
 *
 * CSV (RFC 4180, CRLF): a column-name row, then rows whose first column `kind` is `header`,
 * `record` or `trailer`; header and trailer rows carry their JSON in the `canonical` column.
 *
 * The header says which range the file holds (first and last RecordID, the predecessor of the first
 * and the compact range of everything before it); the trailer holds signed checkpoints (each with
 * an RFC 9162 consistency proof up to the last record when it is smaller) and the verifier keys.
 * Exporters SHOULD include a checkpoint of exactly the last exported record's size (signing one
 * for that size if needed) so the whole file is covered by a signature.
 */
import { createHash } from 'node:crypto'
import { pipeline, Readable } from 'node:stream'
import { CsvError, type CsvErrorCode, parse as parseCsv } from 'csv-parse'
import { canonicalJson } from '../../shared/canonical-json.js'
import { type JsonObject, type JsonValue, parseStrictJson, StrictJsonError } from '../../shared/strict-json.js'
import { genesisDigest, RECORD_TAG } from './digest.js'
import type { ContainerRef, StoredRecord } from './ledger-types.js'
import { type CompactRange, deserializeCompactRange } from './merkle.js'
import { parseRecordId } from './record-id.js'
import { NoteError, type NoteVerifierKey, openNote, parseVerifierKey, SIG_TYPE_ED25519 } from './signed-note.js'
import { createChainVerifier, type VerifyResult } from './verify-chain.js'

export const EXPORT_FORMAT_ID = 'provenant/activity-log-export/v1'
export type ExportFormat = 'json' | 'csv'

export const EXPORT_CONTENT_TYPES = {
  json: 'application/json; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
} as const satisfies Record<ExportFormat, string>

export interface ExportHeader {
  readonly format: typeof EXPORT_FORMAT_ID
  readonly workspaceId: string
  readonly containerId: string
  readonly ScopeKey: string | null
  /** The container's checkpoint origin line. */
  readonly origin: string
  /** Names the digest layout: the record tag of digest.ts. */
  readonly algorithm: string
  /** Hex genesis digest of the container (the predecessor of RecordID 000000000001). */
  readonly genesis: string
  readonly exportedAt: string
  /** What the caller asked for (date range etc.); informative only. */
  readonly filter: JsonObject
  /** The first exported record and its predecessor's digest (hex), or null for an empty file. */
  readonly first: { readonly RecordID: string; readonly previousDigest: string } | null
  /** The last exported record and its digest (hex), or null for an empty file. */
  readonly last: { readonly RecordID: string; readonly digest: string } | null
  /** Compact range of the records before `first` (size first-1, peaks hex), or null when first is 1 or absent. */
  readonly prefix: { readonly size: number; readonly peaks: readonly string[] } | null
}

export interface ExportTrailer {
  readonly recordCount: number
  /**
   * Signed checkpoint notes, each with an RFC 9162 consistency proof (hex) between its size and the
   * last exported record: from its size up to `last` when smaller, from `last` up to its size when
   * larger (then it shows the exported records are a prefix of the signed tree), empty when equal.
   */
  readonly checkpoints: readonly { readonly note: string; readonly consistencyProof: readonly string[] }[]
  /** Verifier keys of the service's checkpoint signing key(s). */
  readonly verifierKeys: readonly string[]
  /** Signed note over the header, the rest of the trailer and the record count (exportSealText): no edit goes unnoticed. */
  readonly seal?: string
  /**
   * The container's newest stored checkpoint at export time, whatever its size. It is always
   * carried; a verifier checks it against the records like the others (it is one of `checkpoints`
   * unless its proof could not be built).
   */
  readonly latestCheckpoint?: string | null
  /** Why the newest checkpoint comes without a proof (a broken store); verify-export then fails. */
  readonly proofProblem?: string
}

/**
 * The text the export seal signs: the format, the origin, the number of records, and the SHA-256 of
 * the canonical JSON of the header and of the trailer without its seal. With the header pinned
 * (first and last RecordID, their digests), the chain pins every record in between, so a verified
 * seal on a verified chain means no byte of the file's content was changed.
 */
export function exportSealText(header: ExportHeader, trailer: ExportTrailer, recordCount: number): string {
  const { seal: _seal, ...sealed } = trailer
  const digest = (v: unknown) => createHash('sha256').update(canonicalJson(v), 'utf8').digest('base64')
  return `${EXPORT_FORMAT_ID}\n${header.origin}\n${recordCount}\n${digest(header)}\n${digest(sealed)}\n`
}

/** What the seal check found: `valid`, or why not. */
export type ExportSealStatus = 'valid' | 'missing' | 'invalid' | 'untrusted'

/** The members of an exported record, in order (a JSON record's keys, the CSV columns after `kind`). */
const RECORD_KEYS = [
  'RecordID',
  'timestamp',
  'userId',
  'ScopeKey',
  'entityType',
  'entityId',
  'actionType',
  'details',
  'previousDigest',
  'digest',
  'canonical',
] as const

/** The columns of the CSV format, in order. */
export const CSV_COLUMNS = ['kind', ...RECORD_KEYS] as const

export class ExportFormatError extends Error {
  /** 1-based line (JSON) or row (CSV) of the problem. */
  readonly line: number
  constructor(message: string, line: number) {
    super(`line ${line}: ${message}`)
    this.name = 'ExportFormatError'
    this.line = line
  }
}

/** Everything needed to describe a range of a container at export time. */
export function buildExportHeader(args: {
  readonly container: ContainerRef
  readonly scopeKey: string | null
  readonly origin: string
  readonly genesis: Uint8Array
  readonly exportedAt: string
  readonly filter?: JsonObject
  /** The first and last records of the range (read in the same snapshot), or null when empty. */
  readonly first: StoredRecord | null
  readonly last: StoredRecord | null
  /** The compact range before `first` (size first.seq - 1). Required when first.seq > 1. */
  readonly prefix: CompactRange | null
}): ExportHeader {
  // Without the compact range before a partial range, a verifier can check the records' chain but
  // cannot compare them with any checkpoint; a wrong-sized one is a bug.
  if (args.first !== null && args.first.seq > 1 && args.prefix !== null && args.prefix.size !== args.first.seq - 1) {
    throw new RangeError(`the compact range before ${args.first.recordId} must have size ${args.first.seq - 1}, got ${args.prefix.size}`)
  }
  return {
    format: EXPORT_FORMAT_ID,
    workspaceId: args.container.workspaceId,
    containerId: args.container.containerId,
    ScopeKey: args.scopeKey,
    origin: args.origin,
    algorithm: RECORD_TAG,
    genesis: hex(args.genesis),
    exportedAt: args.exportedAt,
    filter: args.filter ?? {},
    first: args.first === null ? null : { RecordID: args.first.recordId, previousDigest: hex(args.first.prevDigest) },
    last: args.last === null ? null : { RecordID: args.last.recordId, digest: hex(args.last.digest) },
    prefix:
      args.first === null || args.first.seq === 1 || args.prefix === null
        ? null
        : { size: args.prefix.size, peaks: args.prefix.peaks().map(hex) },
  }
}

// --- writing --------------------------------------------------------------------------------------

/** Produces the text of an export piece by piece; the caller writes each piece to its stream. */
export interface ExportWriter {
  readonly contentType: string
  header(h: ExportHeader): string
  record(r: StoredRecord): string
  trailer(t: ExportTrailer): string
}

export function createExportWriter(format: ExportFormat): ExportWriter {
  return format === 'json' ? createJsonWriter() : createCsvWriter()
}

interface Display {
  ScopeKey: JsonValue
  entityType: JsonValue
  entityId: JsonValue
  actionType: JsonValue
  details: JsonValue
}

/** Readable copies of the body fields; a body that does not parse (tampered) displays as nulls. */
function display(canonical: string): Display {
  let v: unknown
  try {
    v = JSON.parse(canonical)
  } catch {
    v = null
  }
  const o = (typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {}) as Record<string, JsonValue>
  return {
    ScopeKey: o.ScopeKey ?? null,
    entityType: o.entityType ?? null,
    entityId: o.entityId ?? null,
    actionType: o.actionType ?? null,
    details: o.details ?? null,
  }
}

function recordObject(r: StoredRecord): Record<string, JsonValue> {
  const d = display(r.canonical)
  return {
    RecordID: r.recordId,
    timestamp: r.timestamp,
    userId: r.userId,
    ScopeKey: d.ScopeKey,
    entityType: d.entityType,
    entityId: d.entityId,
    actionType: d.actionType,
    details: d.details,
    previousDigest: hex(r.prevDigest),
    digest: hex(r.digest),
    canonical: r.canonical,
  }
}

function createJsonWriter(): ExportWriter {
  let records = 0
  return {
    contentType: EXPORT_CONTENT_TYPES.json,
    header: (h) => `{"format":${JSON.stringify(EXPORT_FORMAT_ID)},"header":${JSON.stringify(h)},"records":[\n`,
    record: (r) => `${records++ === 0 ? '' : ','}${JSON.stringify(recordObject(r))}\n`,
    trailer: (t) => `],"trailer":${JSON.stringify(t)}}\n`,
  }
}

function csvField(v: JsonValue | undefined): string {
  const s = v === null || v === undefined ? '' : typeof v === 'string' ? v : canonicalJson(v)
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s
}

function csvRow(cells: readonly (JsonValue | undefined)[]): string {
  return `${cells.map(csvField).join(',')}\r\n`
}

function createCsvWriter(): ExportWriter {
  const blank = (kind: string, json: string): string => csvRow([kind, ...CSV_COLUMNS.slice(1, -1).map(() => null), json])
  return {
    contentType: EXPORT_CONTENT_TYPES.csv,
    header: (h) => csvRow([...CSV_COLUMNS]) + blank('header', canonicalJson(h)),
    record: (r) => {
      const o = recordObject(r)
      return csvRow(['record', ...CSV_COLUMNS.slice(1).map((c) => o[c])])
    },
    trailer: (t) => blank('trailer', canonicalJson(t)),
  }
}

// --- reading --------------------------------------------------------------------------------------

export type ExportItem =
  | { readonly kind: 'header'; readonly header: ExportHeader }
  /** `fieldProblem` says how the readable fields disagree with the canonical text, if they do. */
  | { readonly kind: 'record'; readonly record: StoredRecord; readonly fieldProblem: string | null }
  | { readonly kind: 'trailer'; readonly trailer: ExportTrailer }

type Source = AsyncIterable<string | Uint8Array> | Iterable<string | Uint8Array>

/** JSON exports start with `{`; CSV exports with the column-name row. */
export function detectExportFormat(start: string): ExportFormat {
  return start.trimStart().startsWith('{') ? 'json' : 'csv'
}

/**
 * Reads an export as a stream of items (header, records, trailer), holding one line or row at a
 * time. Structure errors throw ExportFormatError with the line; content problems (a record that
 * does not verify) are left to verification.
 */
export async function* readExport(source: Source, format?: ExportFormat): AsyncGenerator<ExportItem> {
  const chunks = decodeChunks(source)
  let fmt = format
  let stream: AsyncGenerator<string> = chunks
  if (fmt === undefined) {
    const first = await chunks.next()
    if (first.done) throw new ExportFormatError('the file is empty', 1)
    fmt = detectExportFormat(first.value)
    stream = prepend(first.value, chunks)
  }
  yield* fmt === 'json' ? readJson(stream) : readCsv(stream)
}

async function* prepend(first: string, rest: AsyncGenerator<string>): AsyncGenerator<string> {
  yield first
  yield* rest
}

async function* decodeChunks(source: Source): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true })
  for await (const chunk of source as AsyncIterable<string | Uint8Array>) {
    if (typeof chunk === 'string') yield chunk
    else {
      let text: string
      try {
        text = decoder.decode(chunk, { stream: true })
      } catch {
        throw new ExportFormatError('the file is not valid UTF-8', 0)
      }
      if (text.length > 0) yield text
    }
  }
  const tail = decoder.decode()
  if (tail.length > 0) yield tail
}

async function* splitLines(chunks: AsyncIterable<string>): AsyncGenerator<string> {
  let buffered = ''
  for await (const chunk of chunks) {
    buffered += chunk
    let nl = buffered.indexOf('\n')
    while (nl >= 0) {
      yield buffered.slice(0, nl).replace(/\r$/, '')
      buffered = buffered.slice(nl + 1)
      nl = buffered.indexOf('\n')
    }
  }
  if (buffered.length > 0) yield buffered.replace(/\r$/, '')
}

function strict(text: string, line: number): JsonValue {
  try {
    return parseStrictJson(text, { maxDepth: 128 })
  } catch (err) {
    if (err instanceof StrictJsonError) throw new ExportFormatError(err.message, line)
    throw err
  }
}

async function* readJson(chunks: AsyncIterable<string>): AsyncGenerator<ExportItem> {
  let line = 0
  let state: 'header' | 'records' | 'done' = 'header'
  let records = 0
  for await (const text of splitLines(chunks)) {
    line++
    if (state === 'done') {
      if (text.length > 0) throw new ExportFormatError('unexpected content after the trailer', line)
      continue
    }
    if (state === 'header') {
      if (!text.startsWith('{"format":') || !text.endsWith('"records":[')) {
        throw new ExportFormatError(
          `not a ${EXPORT_FORMAT_ID} JSON export (the first line must open the document and the records array)`,
          line,
        )
      }
      const doc = strict(`${text}]}`, line) as { format?: unknown; header?: unknown; records?: unknown }
      if (doc.format !== EXPORT_FORMAT_ID) throw new ExportFormatError(`unknown export format ${JSON.stringify(doc.format)}`, line)
      yield { kind: 'header', header: checkHeader(doc.header, line) }
      state = 'records'
      continue
    }
    if (text.startsWith('],"trailer":')) {
      const doc = strict(`{"records":[${text}`, line) as { trailer?: unknown }
      yield { kind: 'trailer', trailer: checkTrailer(doc.trailer, line) }
      state = 'done'
      continue
    }
    const body = records === 0 ? text : text.startsWith(',') ? text.slice(1) : null
    if (body === null || (records === 0 && text.startsWith(','))) {
      throw new ExportFormatError('records after the first must start with "," and the first must not', line)
    }
    records++
    yield recordItem(strict(body, line), line)
  }
  if (state !== 'done') throw new ExportFormatError('the file ends before the trailer (truncated export?)', line)
}

async function* readCsv(chunks: AsyncIterable<string>): AsyncGenerator<ExportItem> {
  let row = 0
  let state: 'columns' | 'header' | 'records' | 'done' = 'columns'
  for await (const cells of csvRows(chunks)) {
    row++
    if (state === 'columns') {
      if (cells.join(',') !== CSV_COLUMNS.join(','))
        throw new ExportFormatError(`the first row must name the columns ${CSV_COLUMNS.join(',')}`, row)
      state = 'header'
      continue
    }
    if (cells.length !== CSV_COLUMNS.length) throw new ExportFormatError(`expected ${CSV_COLUMNS.length} columns, got ${cells.length}`, row)
    const kind = cells[0]
    const json = cells[CSV_COLUMNS.length - 1]!
    if (state === 'done') throw new ExportFormatError('unexpected row after the trailer', row)
    if (state === 'header') {
      if (kind !== 'header') throw new ExportFormatError('the second row must be the header row', row)
      const h = strict(json, row) as { format?: unknown }
      if (h.format !== EXPORT_FORMAT_ID) throw new ExportFormatError(`unknown export format ${JSON.stringify(h.format)}`, row)
      yield { kind: 'header', header: checkHeader(h, row) }
      state = 'records'
      continue
    }
    if (kind === 'trailer') {
      yield { kind: 'trailer', trailer: checkTrailer(strict(json, row), row) }
      state = 'done'
      continue
    }
    if (kind !== 'record') throw new ExportFormatError(`unknown row kind ${JSON.stringify(kind)}`, row)
    const o: Record<string, JsonValue> = {}
    CSV_COLUMNS.forEach((c, i) => {
      if (i > 0) o[c] = cells[i]!
    })
    yield recordItem(o, row, true)
  }
  if (state !== 'done') throw new ExportFormatError('the file ends before the trailer row (truncated export?)', row)
}

/** What a person can fix, for the CSV syntax errors an edited or damaged export shows. */
const CSV_PROBLEMS: Partial<Record<CsvErrorCode, string>> = {
  INVALID_OPENING_QUOTE: 'a quote inside an unquoted field',
  CSV_INVALID_CLOSING_QUOTE: 'a closing quote must be followed by "," or the end of the row',
  CSV_QUOTE_NOT_CLOSED: 'the file ends inside a quoted field',
}

/**
 * The rows of an RFC 4180 file (csv-parse): quoted fields may hold commas, quotes ("") and line
 * breaks; rows end with CRLF or LF. Column counts are checked by readCsv, with its own message.
 */
async function* csvRows(chunks: AsyncIterable<string>): AsyncGenerator<string[]> {
  const parser = parseCsv({ record_delimiter: ['\r\n', '\n'], relax_column_count: true })
  // An error on either side (bad UTF-8 in the source, bad CSV in the parser) surfaces in the loop below.
  pipeline(Readable.from(chunks), parser, () => {})
  try {
    for await (const cells of parser) yield cells as string[]
  } catch (error) {
    if (!(error instanceof CsvError)) throw error
    throw new ExportFormatError(CSV_PROBLEMS[error.code] ?? error.message, Number(error['records'] ?? 0) + 1)
  }
}

function isHex32(v: unknown): v is string {
  return typeof v === 'string' && /^[0-9a-f]{64}$/.test(v)
}

function checkHeader(v: unknown, line: number): ExportHeader {
  const bad = (why: string): never => {
    throw new ExportFormatError(`bad header: ${why}`, line)
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('not an object')
  const h = v as Record<string, unknown>
  for (const k of ['workspaceId', 'containerId', 'origin', 'algorithm', 'exportedAt'])
    if (typeof h[k] !== 'string') bad(`${k} must be a string`)
  if (h.algorithm !== RECORD_TAG) bad(`unsupported algorithm ${JSON.stringify(h.algorithm)} (this reader knows ${RECORD_TAG})`)
  if (!isHex32(h.genesis)) bad('genesis must be 64 lowercase hex digits')
  const rid = (x: unknown): boolean => typeof x === 'string' && parseRecordId(x).ok
  const first = h.first as Record<string, unknown> | null
  const last = h.last as Record<string, unknown> | null
  if ((first === null) !== (last === null)) bad('first and last must both be null or both be set')
  if (first !== null && (typeof first !== 'object' || !rid(first.RecordID) || !isHex32(first.previousDigest)))
    bad('first must be {RecordID, previousDigest}')
  if (last !== null && (typeof last !== 'object' || !rid(last.RecordID) || !isHex32(last.digest))) bad('last must be {RecordID, digest}')
  const prefix = h.prefix as Record<string, unknown> | null
  if (
    prefix !== null &&
    (typeof prefix !== 'object' || !Number.isSafeInteger(prefix.size) || !Array.isArray(prefix.peaks) || !prefix.peaks.every(isHex32))
  ) {
    bad('prefix must be {size, peaks: [hex]}')
  }
  if (h.ScopeKey !== null && typeof h.ScopeKey !== 'string') bad('ScopeKey must be a string or null')
  if (typeof h.filter !== 'object' || h.filter === null || Array.isArray(h.filter)) bad('filter must be an object')
  if (h.format !== undefined && h.format !== EXPORT_FORMAT_ID) bad('format mismatch')
  return { ...(h as unknown as ExportHeader), format: EXPORT_FORMAT_ID }
}

function checkTrailer(v: unknown, line: number): ExportTrailer {
  const bad = (why: string): never => {
    throw new ExportFormatError(`bad trailer: ${why}`, line)
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('not an object')
  const t = v as Record<string, unknown>
  if (!Number.isSafeInteger(t.recordCount)) bad('recordCount must be an integer')
  if (!Array.isArray(t.checkpoints)) bad('checkpoints must be an array')
  for (const c of t.checkpoints as unknown[]) {
    const cp = c as Record<string, unknown>
    if (
      typeof cp !== 'object' ||
      cp === null ||
      typeof cp.note !== 'string' ||
      !Array.isArray(cp.consistencyProof) ||
      !cp.consistencyProof.every(isHex32)
    ) {
      bad('each checkpoint must be {note, consistencyProof: [hex]}')
    }
  }
  if (!Array.isArray(t.verifierKeys) || !t.verifierKeys.every((k) => typeof k === 'string')) bad('verifierKeys must be strings')
  if (t.seal !== undefined && typeof t.seal !== 'string') bad('seal must be a signed note')
  if (t.latestCheckpoint !== undefined && t.latestCheckpoint !== null && typeof t.latestCheckpoint !== 'string')
    bad('latestCheckpoint must be a signed note or null')
  if (t.proofProblem !== undefined && typeof t.proofProblem !== 'string') bad('proofProblem must be a string')
  return t as unknown as ExportTrailer
}

function recordItem(v: JsonValue, line: number, fromCsv = false): ExportItem {
  const bad = (why: string): never => {
    throw new ExportFormatError(`bad record: ${why}`, line)
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) bad('not an object')
  const o = v as Record<string, JsonValue>
  const keys = Object.keys(o)
  if (keys.length !== RECORD_KEYS.length || !RECORD_KEYS.every((k) => k in o)) bad(`expected exactly the fields ${RECORD_KEYS.join(', ')}`)
  for (const k of ['RecordID', 'timestamp', 'userId', 'canonical']) if (typeof o[k] !== 'string') bad(`${k} must be a string`)
  const parsed = parseRecordId(o.RecordID)
  if (!parsed.ok) bad(parsed.reason)
  if (!isHex32(o.previousDigest) || !isHex32(o.digest)) bad('previousDigest and digest must be 64 lowercase hex digits')
  const record: StoredRecord = {
    seq: (parsed as { seq: number }).seq,
    recordId: o.RecordID as string,
    prevDigest: Buffer.from(o.previousDigest as string, 'hex'),
    timestamp: o.timestamp as string,
    userId: o.userId as string,
    canonical: o.canonical as string,
    digest: Buffer.from(o.digest as string, 'hex'),
  }
  return { kind: 'record', record, fieldProblem: compareDisplay(o, record.canonical, fromCsv) }
}

/** How the readable copies disagree with the canonical text, or null when they agree. */
function compareDisplay(o: Record<string, JsonValue>, canonical: string, fromCsv: boolean): string | null {
  let body: Record<string, JsonValue>
  try {
    body = JSON.parse(canonical) as Record<string, JsonValue>
    if (typeof body !== 'object' || body === null || Array.isArray(body)) return null
  } catch {
    return null // a body that does not parse fails its digest or canonical-form check anyway
  }
  const differs: string[] = []
  for (const k of ['ScopeKey', 'entityType', 'entityId', 'actionType']) {
    const want = body[k] ?? null
    const got = o[k] ?? null
    // CSV cannot tell null from "": an empty cell matches either.
    const same = fromCsv ? (got === '' ? want === null || want === '' : got === want) : got === want
    if (!same) differs.push(k)
  }
  const wantDetails = body.details === undefined ? null : canonicalJson(body.details)
  let gotDetails: string | null
  if (fromCsv) gotDetails = o.details === '' ? null : (o.details as string)
  else gotDetails = o.details === null ? null : canonicalJson(o.details)
  if (gotDetails !== wantDetails) differs.push('details')
  return differs.length === 0
    ? null
    : `the displayed ${differs.join(', ')} differ${differs.length === 1 ? 's' : ''} from the canonical text`
}

// --- verification ---------------------------------------------------------------------------------

export interface VerifyExportOptions {
  /** Keys whose checkpoint signatures count. Prefer keys you obtained from the service, not the file. */
  readonly trustedKeys?: readonly NoteVerifierKey[]
  /** Also trust the verifier keys written in the file's trailer (proves only self-consistency). */
  readonly trustEmbeddedKeys?: boolean
  /** A checkpoint the auditor kept from earlier (compared like the service's TrustedCheckpoint). */
  readonly trustedCheckpoint?: string | null
  readonly format?: ExportFormat
  /**
   * Records past every checkpoint the file carries are a failure (UNCOVERED), because the service
   * signs every batch it commits (default true; false for files of writers that do not).
   */
  readonly requireCoverage?: boolean
}

export interface VerifyExportResult {
  readonly result: VerifyResult
  readonly header: ExportHeader
  readonly trailer: ExportTrailer
  /** Records in the file, and whether that equals the trailer's count. */
  readonly recordsRead: number
  readonly recordCountMatches: boolean
  /** The seal over header and record count: valid, missing, invalid (altered), or untrusted (no trusted key signed it). */
  readonly seal: { readonly status: ExportSealStatus; readonly message: string }
}

/**
 * Verifies an export offline: the same verdict the service gives for that range, from the file and
 * the keys you trust. Structure errors throw ExportFormatError.
 */
export async function verifyExport(source: Source, options: VerifyExportOptions = {}): Promise<VerifyExportResult> {
  const items = readExport(source, options.format)
  const first = await items.next()
  if (first.done || first.value.kind !== 'header') throw new ExportFormatError('the export has no header', 1)
  const header = first.value.header
  const container = { workspaceId: header.workspaceId, containerId: header.containerId }
  const startSeq = header.first === null ? 1 : seqOf(header.first.RecordID)
  const lastSeq = header.last === null ? 0 : seqOf(header.last.RecordID)
  if (genesisDigest(header.workspaceId, header.containerId).toString('hex') !== header.genesis) {
    throw new ExportFormatError("the header's genesis digest does not belong to its workspace and container", 1)
  }
  let prefix: CompactRange | null = null
  if (header.prefix !== null) {
    try {
      prefix = deserializeCompactRange(header.prefix.size, Buffer.from(header.prefix.peaks.join(''), 'hex'))
    } catch (err) {
      throw new ExportFormatError(`bad header prefix: ${(err as Error).message}`, 1)
    }
  }
  const verifier = createChainVerifier({
    container,
    origin: header.origin,
    // The header's last record plays the head row's part: the file claims to end there.
    head: header.last === null ? null : { seq: lastSeq, digest: Buffer.from(header.last.digest, 'hex') },
    trustedKeys: options.trustedKeys ?? [],
    trustedCheckpoint: options.trustedCheckpoint ?? null,
    start:
      header.first === null
        ? undefined
        : { seq: startSeq, prevDigest: Buffer.from(header.first.previousDigest, 'hex'), range: startSeq === 1 ? null : prefix },
    rangeEnd: header.last === null ? undefined : lastSeq,
    lateCheckpoints: true,
    requireCoverage: options.requireCoverage ?? true,
  })
  let trailer: ExportTrailer | null = null
  let recordsRead = 0
  for await (const item of items) {
    if (item.kind === 'header') throw new ExportFormatError('a second header', 0)
    if (item.kind === 'trailer') {
      trailer = item.trailer
      continue
    }
    recordsRead++
    if (!verifier.rejected) verifier.add(item.record, item.fieldProblem ?? undefined)
  }
  if (trailer === null) throw new ExportFormatError('the export has no trailer', 0)
  // The file's own keys count only when the caller says so: they prove self-consistency, not origin.
  const embedded = options.trustEmbeddedKeys ? trailer.verifierKeys.map((k) => parseVerifierKey(k)) : []
  for (const cp of trailer.checkpoints) {
    verifier.addLateCheckpoint(
      cp.note,
      cp.consistencyProof.map((h) => Buffer.from(h, 'hex')),
      embedded,
    )
  }
  // The newest stored checkpoint is checked too: without a proof it fails unless it is the file's own
  // size. In an empty file it relates to no record: it then only attests a size, which a whole-log
  // export (no date bounds) must reach (else TRUNCATED); an empty date range says nothing about it.
  const latest = trailer.latestCheckpoint
  if (typeof latest === 'string' && !trailer.checkpoints.some((cp) => cp.note === latest)) {
    if (header.last !== null) verifier.addLateCheckpoint(latest, undefined, embedded)
    else if (header.filter['startDate'] === undefined && header.filter['endDate'] === undefined)
      verifier.addLateCheckpoint(latest, [], embedded)
  }
  const sealKeys = [...(options.trustedKeys ?? []), ...embedded]
  return {
    result: verifier.finish(),
    header,
    trailer,
    recordsRead,
    recordCountMatches: recordsRead === trailer.recordCount,
    seal: checkSeal(header, trailer, recordsRead, sealKeys),
  }
}

/**
 * Whether an export verified as a whole: the chain, the seal, the record count, and every
 * checkpoint in it (one that no longer verifies was altered). What `provenant verify-export`
 * exits 0 on.
 */
export function isExportValid(r: VerifyExportResult): boolean {
  return (
    r.result.kind === 'verdict' &&
    r.result.verdict.ChainValid &&
    r.seal.status === 'valid' &&
    r.recordCountMatches &&
    r.result.facts.checkpointsIgnored.length === 0 &&
    r.trailer.proofProblem === undefined
  )
}

function checkSeal(
  header: ExportHeader,
  trailer: ExportTrailer,
  recordsRead: number,
  keys: readonly NoteVerifierKey[],
): { status: ExportSealStatus; message: string } {
  const seal = trailer.seal
  if (seal === undefined) return { status: 'missing', message: 'the export carries no seal' }
  let text: string
  try {
    const opened = openNote(
      seal,
      keys.filter((k) => k.type === SIG_TYPE_ED25519),
    )
    text = opened.text
  } catch (err) {
    if (err instanceof NoteError && err.code === 'no-known-signature')
      return { status: 'untrusted', message: 'no trusted key signed the seal' }
    if (err instanceof NoteError) return { status: 'invalid', message: `the seal does not verify: ${err.message}` }
    throw err
  }
  if (text !== exportSealText(header, trailer, recordsRead)) {
    return {
      status: 'invalid',
      message: 'the header, the trailer or the number of records differs from what the seal signed: the file was altered',
    }
  }
  return { status: 'valid', message: 'the seal verifies: header and record count are as exported' }
}

function seqOf(recordId: string): number {
  const p = parseRecordId(recordId)
  if (!p.ok) throw new ExportFormatError(p.reason, 1)
  return p.seq
}

function hex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex')
}
