import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parse as parseCsv } from 'csv-parse/sync'
import { testKey } from '../../../test/support/ledger-fixture.js'
import { type AppendEntry, appendBatch, genesisTip } from './append-batch.js'
import { checkpointOrigin, signCheckpoint } from './checkpoint.js'
import { containerIdForScope, createRecordHasher } from './digest.js'
import {
  buildExportHeader,
  CSV_COLUMNS,
  createExportWriter,
  type ExportFormat,
  ExportFormatError,
  type ExportTrailer,
  exportSealText,
  isExportValid,
  readExport,
  verifyExport,
} from './export-format.js'
import type { StoredRecord } from './ledger-types.js'
import { arrayNodes, type CompactRange, consistencyProof, createCompactRange } from './merkle.js'
import { formatRecordId } from './record-id.js'
import { signNote } from './signed-note.js'
import type { VerifyResult } from './verify-chain.js'

const R = formatRecordId
const SCOPE = 'plant 7, "line" 1\nnorth' // a comma, quotes and a line break: CSV has to quote it
const container = { workspaceId: 'wks_export', containerId: containerIdForScope(SCOPE) }
const hasher = createRecordHasher(container.workspaceId, container.containerId)
const origin = checkpointOrigin('provenant.test', container)
const signing = testKey()
const T0 = Date.parse('2026-03-01T08:00:00.000Z')

/** A container of `n` records with varied bodies, built through the real append path. */
function buildChain(n: number, note = 'Entrée'): { records: StoredRecord[]; ranges: CompactRange[] } {
  const records: StoredRecord[] = []
  const ranges: CompactRange[] = [createCompactRange()]
  let tip = genesisTip(hasher)
  let range = createCompactRange()
  for (let i = 1; i <= n; i++) {
    const entry: AppendEntry = {
      userId: i % 3 === 0 ? 'acc_bob' : 'acc_alice',
      body: {
        ScopeKey: SCOPE,
        entityType: i % 2 === 0 ? 'batch' : null,
        entityId: `B-${i}`,
        actionType: 'update',
        details: { n: i, note: i === 4 ? '' : `${note} ${i} — ✓ "q", 😀`, nested: { list: [i, i / 4, true, null] } },
      },
    }
    const r = appendBatch(hasher, tip, range, [entry], T0 + i * 1000)
    records.push(...r.records)
    tip = r.tip
    range = r.range
    ranges.push(range)
  }
  return { records, ranges }
}

/** Writes an export of records[from-1 .. to-1] with checkpoints at the given sizes. */
function writeExport(
  format: ExportFormat,
  chain: ReturnType<typeof buildChain>,
  opts: {
    from?: number
    to?: number
    checkpointSizes?: number[]
    seal?: boolean
    latest?: number
    proofProblem?: string
    filter?: Record<string, string>
  } = {},
): string {
  const from = opts.from ?? 1
  const to = opts.to ?? chain.records.length
  const slice = chain.records.slice(from - 1, to)
  const w = createExportWriter(format)
  const header = buildExportHeader({
    container,
    scopeKey: SCOPE,
    origin,
    genesis: hasher.genesis,
    exportedAt: '2026-03-02T00:00:00.000Z',
    filter: opts.filter ?? { startDate: '2026-03-01T00:00:00Z' },
    first: slice[0] ?? null,
    last: slice[slice.length - 1] ?? null,
    prefix: from > 1 ? chain.ranges[from - 1]! : null,
  })
  const nodes = arrayNodes(chain.records.map((r) => r.digest))
  const trailer: ExportTrailer = {
    recordCount: slice.length,
    checkpoints: (opts.checkpointSizes ?? [to]).map((size) => ({
      note: signCheckpoint({ origin, size, root: chain.ranges[size]!.root() }, signing.signer, signing.key, 1_772_400_000),
      consistencyProof: (size < to ? consistencyProof(nodes, size, to) : size > to ? consistencyProof(nodes, to, size) : []).map((b) =>
        b.toString('hex'),
      ),
    })),
    verifierKeys: [signing.signer.vkey],
    ...(opts.latest !== undefined
      ? {
          latestCheckpoint: signCheckpoint(
            { origin, size: opts.latest, root: chain.ranges[opts.latest]!.root() },
            signing.signer,
            signing.key,
            1_772_400_000,
          ),
        }
      : {}),
    ...(opts.proofProblem !== undefined ? { proofProblem: opts.proofProblem } : {}),
  }
  const sealed = opts.seal ? { ...trailer, seal: signNote(exportSealText(header, trailer, slice.length), [signing.signer]) } : trailer
  let out = w.header(header)
  for (const r of slice) out += w.record(r)
  return out + w.trailer(sealed)
}

async function verdictOf(
  text: string,
  opts: Parameters<typeof verifyExport>[1] = { trustedKeys: [signing.verifier] },
): Promise<Extract<VerifyResult, { kind: 'verdict' }>> {
  const { result } = await verifyExport([text], opts)
  assert.equal(result.kind, 'verdict', JSON.stringify(result))
  return result as Extract<VerifyResult, { kind: 'verdict' }>
}

for (const format of ['json', 'csv'] as const) {
  describe(`export format: ${format}`, () => {
    const chain = buildChain(10)
    const text = writeExport(format, chain)

    it('export → parse gives back every record exactly as stored', async () => {
      const got: StoredRecord[] = []
      const kinds: string[] = []
      for await (const item of readExport([text])) {
        kinds.push(item.kind)
        if (item.kind === 'record') {
          assert.equal(item.fieldProblem, null)
          got.push(item.record)
        }
      }
      assert.deepEqual(kinds, ['header', ...chain.records.map(() => 'record'), 'trailer'])
      assert.deepEqual(got.map(plain), chain.records.map(plain))
    })

    it("export → parse → verify passes, covered by the trailer's checkpoint", async () => {
      const v = await verdictOf(text)
      assert.deepEqual([v.verdict.ChainValid, v.verdict.BrokenAt, v.verdict.ForkDetected, v.verdict.Empty], [true, null, false, false])
      assert.equal(
        v.verdict.Reason,
        'OK: 10 records verified (000000000001 to 000000000010); all records are covered by a signed checkpoint (size 10)',
      )
    })

    it('reads the same from any chunking, including split multi-byte characters', async () => {
      const bytes = Buffer.from(text, 'utf8')
      for (const size of [1, 7, 4096]) {
        const chunks: Uint8Array[] = []
        for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size))
        const { result } = await verifyExport(chunks, { trustedKeys: [signing.verifier] })
        assert.ok(result.kind === 'verdict' && result.verdict.ChainValid, `chunk size ${size}`)
      }
    })

    it('any single-character edit of any field of record 5 fails with BrokenAt 000000000005', async () => {
      const fields = CSV_COLUMNS.slice(1)
      let edits = 0
      for (const field of fields) {
        const original = fieldText(chain.records[4]!, field)
        for (let i = 0; i < original.length; i++) {
          const changed = flip(original[i]!, field)
          if (changed === null) continue
          const edited = original.slice(0, i) + changed + original.slice(i + 1)
          if (field === 'details' && !isJson(edited)) continue // e.g. true -> True: not a field edit but a syntax error
          const tampered = replaceField(format, text, 5, field, edited)
          edits++
          let v: Extract<VerifyResult, { kind: 'verdict' }>
          try {
            v = await verdictOf(tampered)
          } catch (err) {
            // A RecordID edited into something that is not a RecordID is refused as malformed.
            assert.ok(err instanceof ExportFormatError && field === 'RecordID', `${field}[${i}]: ${String(err)}`)
            continue
          }
          assert.equal(v.verdict.ChainValid, false, `${field}[${i}] ${edited}`)
          if (field === 'RecordID') {
            // A copy of #4 (000000000004) is reported as two records claiming 000000000004.
            assert.ok(
              v.verdict.BrokenAt === R(5) || (edited === R(4) && v.verdict.BrokenAt === R(4)),
              `${field}[${i}] ${edited}: ${v.verdict.Reason}`,
            )
          } else {
            assert.equal(v.verdict.BrokenAt, R(5), `${field}[${i}] ${edited}: ${v.verdict.Reason}`)
          }
        }
      }
      assert.ok(edits > 300, `only ${edits} edits tried`)
    })

    it('a deleted record line is MISSING; a dropped tail is TRUNCATED against the header', async () => {
      const lines = splitRecords(format, text)
      const withoutFive = lines
        .filter((l) => l.seq !== 5)
        .map((l) => l.text)
        .join('')
      const v1 = await verdictOf(fixFirstComma(format, withoutFive))
      assert.deepEqual([v1.verdict.BrokenAt, v1.facts.code], [R(5), 'MISSING'])
      const withoutTail = lines
        .filter((l) => l.seq === 0 || l.seq < 9 || l.seq === Infinity)
        .map((l) => l.text)
        .join('')
      const v2 = await verdictOf(withoutTail)
      assert.deepEqual([v2.verdict.BrokenAt, v2.facts.code], [R(9), 'TRUNCATED'])
    })

    it('a file cut before its trailer is refused as truncated', async () => {
      const cut = text.slice(0, text.lastIndexOf(format === 'json' ? '],"trailer"' : 'trailer,'))
      await assert.rejects(verifyExport([cut], { trustedKeys: [signing.verifier] }), /ends before the trailer/)
    })

    it("the file's own verifier key counts only when the caller opts in", async () => {
      const plain = await verdictOf(text, {})
      // No checkpoint it can check: the records are not covered by anything the server signed.
      assert.deepEqual([plain.verdict.ChainValid, plain.verdict.BrokenAt, plain.facts.coveredSize], [false, '000000000001', 0])
      assert.match(
        plain.verdict.Reason,
        /^UNCOVERED: records 000000000001 to 000000000010 are not covered by any checkpoint this server signed.*; 1 checkpoint ignored \(note has no verifiable signatures/,
      )
      const embedded = await verdictOf(text, { trustEmbeddedKeys: true })
      assert.equal(embedded.facts.coveredSize, 10)
    })

    it("a kept checkpoint past the file: truncation when the file's newest checkpoint is smaller, split view when it disagrees, unverifiable in between (issue 14 item 2)", async () => {
      const cpAt = (c: ReturnType<typeof buildChain>, size: number) =>
        signCheckpoint({ origin, size, root: c.ranges[size]!.root() }, signing.signer, signing.key, 1_772_400_000)
      // The whole container once had 10 records; the file ends at 7 (tail deleted, head fixed).
      const truncated = writeExport(format, chain, { to: 7, checkpointSizes: [7] })
      const t = await verdictOf(truncated, { trustedKeys: [signing.verifier], trustedCheckpoint: cpAt(chain, 10) })
      assert.deepEqual([t.verdict.ChainValid, t.verdict.BrokenAt, t.facts.code], [false, '000000000008', 'TRUNCATED'], t.verdict.Reason)
      assert.match(
        t.verdict.Reason,
        /^TRUNCATED: the export ends at 000000000007 and its newest checkpoint has size 7, but 000000000010 was attested by the trusted checkpoint/,
      )
      assert.doesNotMatch(t.verdict.Reason, /all records are covered/)
      // A partial export whose newest checkpoint is the kept one: fine.
      const partial = writeExport(format, chain, { from: 4, to: 8, checkpointSizes: [10] })
      const ok = await verdictOf(partial, { trustedKeys: [signing.verifier], trustedCheckpoint: cpAt(chain, 10) })
      assert.equal(ok.verdict.ChainValid, true, ok.verdict.Reason)
      // …one that contradicts it: split view.
      const other = buildChain(10, 'another history')
      const s = await verdictOf(partial, { trustedKeys: [signing.verifier], trustedCheckpoint: cpAt(other, 10) })
      assert.deepEqual([s.verdict.ChainValid, s.verdict.ForkDetected, s.facts.code], [false, true, 'SPLIT_VIEW'], s.verdict.Reason)
      // …and one between the range's end and the file's newest checkpoint cannot be checked from this file.
      const u = await verdictOf(partial, { trustedKeys: [signing.verifier], trustedCheckpoint: cpAt(chain, 9) })
      assert.deepEqual([u.verdict.ChainValid, u.facts.code], [false, 'UNVERIFIABLE_CHECKPOINT'], u.verdict.Reason)
    })

    it('the newest checkpoint comes without a proof: the trailer says so and the file does not verify (issue 14 item 2)', async () => {
      // Sealed by the server: only the missing proof is wrong.
      const noProof = writeExport(format, chain, {
        from: 4,
        to: 8,
        checkpointSizes: [],
        latest: 10,
        seal: true,
        proofProblem: 'a node is missing',
      })
      const checked = await verifyExport([noProof], { trustedKeys: [signing.verifier] })
      assert.equal(checked.seal.status, 'valid')
      assert.equal(isExportValid(checked), false)
      assert.ok(checked.result.kind === 'verdict')
      assert.match(JSON.stringify(checked.result.facts.checkpointsIgnored), /without the consistency proof/)
      // The same file with the proof verifies.
      const withProof = writeExport(format, chain, { from: 4, to: 8, checkpointSizes: [10], latest: 10, seal: true })
      assert.equal(isExportValid(await verifyExport([withProof], { trustedKeys: [signing.verifier] })), true)
    })

    it('an empty whole-log export whose newest checkpoint says 10 is TRUNCATED; an empty date range is Empty', async () => {
      const gone = writeExport(format, chain, { from: 1, to: 0, checkpointSizes: [], latest: 10, seal: true, filter: { format } })
      const t = await verifyExport([gone], { trustedKeys: [signing.verifier] })
      assert.ok(t.result.kind === 'verdict')
      assert.deepEqual([t.result.verdict.ChainValid, t.result.verdict.Empty, t.result.verdict.BrokenAt], [false, false, '000000000001'])
      assert.equal(isExportValid(t), false)
      const dated = writeExport(format, chain, { from: 1, to: 0, checkpointSizes: [], latest: 10, seal: true })
      const d = await verifyExport([dated], { trustedKeys: [signing.verifier] })
      assert.ok(d.result.kind === 'verdict' && d.result.verdict.Empty, JSON.stringify(d.result))
      assert.equal(isExportValid(d), true)
    })

    it("a partial range verifies on top of the header's prefix, against a checkpoint at its end and an older one by proof", async () => {
      const partial = writeExport(format, chain, { from: 4, to: 8, checkpointSizes: [6, 8, 10] })
      const v = await verdictOf(partial)
      assert.deepEqual([v.verdict.ChainValid, v.verdict.BrokenAt, v.facts.coveredSize], [true, null, 8])
      assert.match(
        v.verdict.Reason,
        /^OK: 5 records verified \(000000000004 to 000000000008\); all records are covered by a signed checkpoint \(size 8\)$/,
      )
      // A forged prefix no longer reproduces the signed root.
      const forgedPrefix = partial.replace(/"peaks":\["([0-9a-f])/, (_m, c: string) => `"peaks":["${c === '0' ? '1' : '0'}`)
      const f = await verdictOf(
        format === 'csv'
          ? forgedPrefix.replace(/""peaks"":\[""([0-9a-f])/, (_m, c: string) => `""peaks"":[""${c === '0' ? '1' : '0'}`)
          : forgedPrefix,
      )
      assert.deepEqual([f.verdict.ChainValid, f.verdict.ForkDetected, f.facts.code], [false, true, 'SPLIT_VIEW'])
    })

    it("a checkpoint past the range covers it through a consistency proof from the range's end; a wrong proof is a split view", async () => {
      const partial = writeExport(format, chain, { from: 4, to: 8, checkpointSizes: [10] })
      const v = await verdictOf(partial)
      assert.deepEqual([v.verdict.ChainValid, v.verdict.BrokenAt, v.facts.coveredSize, v.facts.attestedSize], [true, null, 8, 8])
      assert.match(v.verdict.Reason, /all records are covered by a signed checkpoint \(size 8\)$/)
      const other = buildChain(10, 'another body')
      const nodes = arrayNodes(other.records.map((r) => r.digest))
      const wrong = consistencyProof(nodes, 8, 10).map((b) => b.toString('hex'))
      const tampered =
        format === 'json'
          ? partial.replace(/"consistencyProof":\[[^\]]*\]/, `"consistencyProof":${JSON.stringify(wrong)}`)
          : partial.replace(/""consistencyProof"":\[[^\]]*\]/, `""consistencyProof"":${JSON.stringify(wrong).replace(/"/g, '""')}`)
      assert.notEqual(tampered, partial)
      const f = await verdictOf(tampered)
      assert.deepEqual([f.verdict.ChainValid, f.verdict.ForkDetected, f.facts.code], [false, true, 'SPLIT_VIEW'])
    })

    it('an empty container exports and verifies as Empty', async () => {
      const empty = writeExport(format, { records: [], ranges: [createCompactRange()] }, { checkpointSizes: [] })
      const v = await verdictOf(empty)
      assert.deepEqual([v.verdict.Empty, v.verdict.ChainValid, v.verdict.BrokenAt], [true, true, null])
    })
  })
}

describe('export format: structure errors', () => {
  it('refuses files that are not exports, naming the line', async () => {
    await assert.rejects(verifyExport(['{"hello":1}\n']), /line 1: not a provenant\/activity-log-export\/v1 JSON export/)
    await assert.rejects(verifyExport(['a,b,c\r\n']), /line 1: the first row must name the columns/)
    await assert.rejects(verifyExport([]), /the file is empty/)
    await assert.rejects(verifyExport([Buffer.from([0x7b, 0xff])]), /not valid UTF-8/)
  })
  it('refuses a header whose genesis does not belong to its workspace and container', async () => {
    const chain = buildChain(2)
    const text = writeExport('json', chain).replace('"workspaceId":"wks_export"', '"workspaceId":"wks_other"')
    await assert.rejects(verifyExport([text]), /genesis digest does not belong/)
  })
  it('refuses a duplicate key or an inexact number in a record line (strict parsing)', async () => {
    const chain = buildChain(2)
    const text = writeExport('json', chain)
    const dup = text.replace('\n,{"RecordID":"000000000002",', '\n,{"RecordID":"000000000002","RecordID":"000000000002",')
    await assert.rejects(verifyExport([dup]), /line 3: duplicate key "RecordID"/)
  })
  it('records must be separated exactly as written', async () => {
    const chain = buildChain(2)
    const text = writeExport('json', chain).replace('\n,{"RecordID":"000000000002"', '\n{"RecordID":"000000000002"')
    await assert.rejects(verifyExport([text]), /must start with ","/)
  })
  it('CSV: a stray quote or an unterminated quoted field is refused', async () => {
    const chain = buildChain(2)
    const text = writeExport('csv', chain)
    await assert.rejects(verifyExport([text.replace('record,000000000002', 'record,0000"00000002')]), /quote inside an unquoted field/)
    await assert.rejects(verifyExport([text.slice(0, text.indexOf('Entrée') + 3)]), /ends inside a quoted field/)
  })
})

// --- helpers --------------------------------------------------------------------------------------

function isJson(t: string): boolean {
  try {
    JSON.parse(t)
    return true
  } catch {
    return false
  }
}

function plain(r: StoredRecord): object {
  return { ...r, prevDigest: Buffer.from(r.prevDigest).toString('hex'), digest: Buffer.from(r.digest).toString('hex') }
}

/** The text a field of a record shows in the export (details as canonical JSON). */
function fieldText(r: StoredRecord, field: string): string {
  const body = JSON.parse(r.canonical) as Record<string, unknown>
  switch (field) {
    case 'RecordID':
      return r.recordId
    case 'timestamp':
      return r.timestamp
    case 'userId':
      return r.userId
    case 'previousDigest':
      return Buffer.from(r.prevDigest).toString('hex')
    case 'digest':
      return Buffer.from(r.digest).toString('hex')
    case 'canonical':
      return r.canonical
    case 'details':
      return JSON.stringify(body.details)
    default:
      return body[field] === null ? '' : String(body[field])
  }
}

/** A different character of the same kind (so the file stays well-formed), or null to skip. */
function flip(c: string, field: string): string | null {
  if (field === 'previousDigest' || field === 'digest') return '0123456789abcdef'[('0123456789abcdef'.indexOf(c) + 1) % 16]!
  if (/[0-9]/.test(c)) return String((Number(c) + 1) % 10)
  if (/[a-z]/.test(c)) return c.toUpperCase()
  if (/[A-Z]/.test(c)) return c.toLowerCase()
  return null
}

interface RecordLine {
  seq: number
  text: string
}

/** Splits an export into its header part (seq 0), record lines/rows (seq), and trailer (Infinity). */
function splitRecords(format: ExportFormat, text: string): RecordLine[] {
  if (format === 'json') {
    const lines = text.split('\n').filter((l) => l.length > 0)
    return lines.map((l, i) => ({
      seq: i === 0 ? 0 : l.startsWith('],') ? Infinity : Number(/"RecordID":"(\d{12})"/.exec(l)![1]),
      text: `${l}\n`,
    }))
  }
  const out: RecordLine[] = []
  const re = /(^|\r\n)(record,(\d{12}),|header,|trailer,|kind,)/g
  const starts: { at: number; seq: number }[] = []
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    const at = m.index + m[1]!.length
    starts.push({ at, seq: m[3] ? Number(m[3]) : m[2]!.startsWith('trailer') ? Infinity : 0 })
  }
  for (const [i, s] of starts.entries()) out.push({ seq: s.seq, text: text.slice(s.at, starts[i + 1]?.at ?? text.length) })
  return out
}

function fixFirstComma(format: ExportFormat, text: string): string {
  return format === 'json' ? text.replace('"records":[\n,', '"records":[\n') : text
}

/** Re-serialises record `seq`'s line/row with one field's displayed text replaced. */
function replaceField(format: ExportFormat, text: string, seq: number, field: string, value: string): string {
  const parts = splitRecords(format, text)
  return parts
    .map((p) => {
      if (p.seq !== seq) return p.text
      if (format === 'json') {
        const lead = p.text.startsWith(',') ? ',' : ''
        const o = JSON.parse(p.text.slice(lead.length)) as Record<string, unknown>
        o[field] = field === 'details' ? JSON.parse(value) : field === 'entityType' && value === '' ? null : value
        return `${lead}${JSON.stringify(o)}\n`
      }
      const cells = (parseCsv(p.text) as string[][])[0]!
      cells[CSV_COLUMNS.indexOf(field as (typeof CSV_COLUMNS)[number])] = value
      return `${cells.map((c) => (/[",\r\n]/.test(c) ? `"${c.replace(/"/g, '""')}"` : c)).join(',')}\r\n`
    })
    .join('')
}

describe('export seal', () => {
  const chain = buildChain(6)
  for (const format of ['json', 'csv'] as const) {
    it(`${format}: a sealed export is valid as a whole; any edit of header, trailer or seal makes it invalid`, async () => {
      const text = writeExport(format, chain, { seal: true })
      const good = await verifyExport([text], { trustedKeys: [signing.verifier] })
      assert.deepEqual([good.seal.status, isExportValid(good)], ['valid', true])
      const q = format === 'csv' ? '""' : '"'
      const edits: [string, string][] = [
        [`${q}exportedAt${q}:${q}2026`, `${q}exportedAt${q}:${q}2027`],
        [`${q}filter${q}:{${q}startDate${q}:${q}2026`, `${q}filter${q}:{${q}startDate${q}:${q}2025`],
        [`${q}verifierKeys${q}:[${q}provenant.test`, `${q}verifierKeys${q}:[${q}xprovenant.test`],
        [`${q}recordCount${q}:6`, `${q}recordCount${q}:7`],
      ]
      for (const [from, to] of edits) {
        assert.ok(text.includes(from), from)
        const r = await verifyExport([text.replace(from, to)], { trustedKeys: [signing.verifier] })
        assert.equal(isExportValid(r), false, from)
        assert.notEqual(r.seal.status, 'valid', from)
      }
      const unsealed = await verifyExport([writeExport(format, chain)], { trustedKeys: [signing.verifier] })
      assert.deepEqual([unsealed.seal.status, isExportValid(unsealed)], ['missing', false])
      const otherKey = await verifyExport([text], { trustedKeys: [testKey('another server').verifier] })
      assert.equal(otherKey.seal.status, 'untrusted')
      assert.equal(isExportValid(otherKey), false)
      const embedded = await verifyExport([text], { trustEmbeddedKeys: true })
      assert.equal(embedded.seal.status, 'valid')
    })
  }
})
