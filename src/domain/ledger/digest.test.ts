import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  canonicalRecordBody,
  containerIdForScope,
  createRecordHasher,
  type DigestInput,
  digestsEqual,
  genesisDigest,
  nextLedgerTimestamp,
  PLATFORM_CONTAINER_ID,
  recordDigest,
  recordPreimage,
} from './digest.js'

/** An independent re-implementation of the documented layout (docs/design/ledger.md §2). */
function lp(s: string | Uint8Array): Buffer {
  const b = typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s)
  const len = Buffer.alloc(8)
  len.writeBigUInt64BE(BigInt(b.length))
  return Buffer.concat([len, b])
}
function referencePreimage(i: DigestInput): Buffer {
  return Buffer.concat([
    Buffer.from([0x00]),
    lp('provenant/activity-log/v1/record'),
    lp(i.workspaceId),
    lp(i.containerId),
    Buffer.from(i.recordId, 'ascii'),
    Buffer.from(i.prevDigest),
    lp(i.timestamp),
    lp(i.userId),
    lp(i.canonical),
  ])
}
const sha256 = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex')

// Known answers, also printed in docs/design/ledger.md (checked at the end of this file) and
// cross-checked with a Python hashlib implementation of the same layout when they were frozen.
const KAT = {
  workspaceId: 'wks_demo',
  containerId: 'scope:plant-7/line-1',
  genesis: 'e8f129abd50e8268a859c46b6d6aa6a2070dece88e40e288ff47ab52941c2c3f',
  records: [
    {
      recordId: '000000000001',
      timestamp: '2026-01-01T00:00:01.000Z',
      userId: 'acc_alice',
      body: { ScopeKey: 'plant-7/line-1', entityType: 'batch', entityId: 'B-1001', actionType: 'create', details: { qty: 12, unit: 'kg' } },
      canonical:
        '{"ScopeKey":"plant-7/line-1","actionType":"create","details":{"qty":12,"unit":"kg"},"entityId":"B-1001","entityType":"batch"}',
      preimageBytes: 311,
      digest: 'f39ab0efa31f4c9e11d76fc41dff10b8c93c340c4af37379f30a64f2aebce1e8',
    },
    {
      recordId: '000000000002',
      timestamp: '2026-01-01T00:00:02.500Z',
      userId: 'acc_bob',
      body: { ScopeKey: 'plant-7/line-1', entityType: 'batch', entityId: 'B-1001', actionType: 'release', details: { note: 'QA ok ✓' } },
      canonical:
        '{"ScopeKey":"plant-7/line-1","actionType":"release","details":{"note":"QA ok ✓"},"entityId":"B-1001","entityType":"batch"}',
      preimageBytes: 308,
      digest: '52e61920b020819e31c704f4c848f6d58df10e4ed249693c52b225cfdd546086',
    },
    {
      recordId: '000000000003',
      timestamp: '2026-01-01T00:00:02.500Z',
      userId: 'acc_alice',
      body: { ScopeKey: 'plant-7/line-1', entityType: 'batch', entityId: 'B-1001', actionType: 'hold' },
      canonical: '{"ScopeKey":"plant-7/line-1","actionType":"hold","details":{},"entityId":"B-1001","entityType":"batch"}',
      preimageBytes: 289,
      digest: '025bbb410a05dbc78ba2a70f924d777dd9f9c3b0ad6ccacf063d5f8e911d5226',
    },
  ],
} as const

describe('record digest: known answers', () => {
  it('container ids', () => {
    assert.equal(containerIdForScope('plant-7/line-1'), KAT.containerId)
    assert.equal(PLATFORM_CONTAINER_ID, 'platform')
    assert.notEqual(containerIdForScope('platform'), PLATFORM_CONTAINER_ID)
  })

  it('genesis', () => {
    assert.equal(genesisDigest(KAT.workspaceId, KAT.containerId).toString('hex'), KAT.genesis)
    const reference = sha256(Buffer.concat([lp('provenant/activity-log/v1/genesis'), lp(KAT.workspaceId), lp(KAT.containerId)]))
    assert.equal(reference, KAT.genesis)
  })

  it('three chained records: canonical text, preimage layout and digest', () => {
    const hasher = createRecordHasher(KAT.workspaceId, KAT.containerId)
    let prev: Uint8Array = Buffer.from(KAT.genesis, 'hex')
    for (const r of KAT.records) {
      const canonical = canonicalRecordBody(r.body)
      assert.equal(canonical, r.canonical)
      const input: DigestInput = {
        workspaceId: KAT.workspaceId,
        containerId: KAT.containerId,
        recordId: r.recordId,
        prevDigest: prev,
        timestamp: r.timestamp,
        userId: r.userId,
        canonical,
      }
      const pre = recordPreimage(input)
      assert.deepEqual(pre, referencePreimage(input))
      assert.equal(pre.length, r.preimageBytes)
      assert.equal(sha256(pre), r.digest)
      assert.equal(recordDigest(input).toString('hex'), r.digest)
      assert.equal(hasher.digest(r.recordId, prev, r.timestamp, r.userId, canonical).toString('hex'), r.digest)
      prev = Buffer.from(r.digest, 'hex')
    }
  })
})

describe('record digest: binding', () => {
  const base: DigestInput = {
    workspaceId: 'w',
    containerId: 'c',
    recordId: '000000000005',
    prevDigest: Buffer.alloc(32, 7),
    timestamp: '2026-01-01T00:00:05.000Z',
    userId: 'acc_u',
    canonical: '{"a":1}',
  }
  const d0 = recordDigest(base).toString('hex')

  it('every field changes the digest, including a single byte or bit', () => {
    const variants: Partial<DigestInput>[] = [
      { workspaceId: 'W' },
      { containerId: 'c2' },
      { recordId: '000000000006' },
      { prevDigest: Buffer.from(Buffer.alloc(32, 7)).fill(6, 31) },
      { timestamp: '2026-01-01T00:00:05.001Z' },
      { userId: 'acc_v' },
      { canonical: '{"a":2}' },
      { canonical: '{"a":1 }' },
    ]
    for (const v of variants) assert.notEqual(recordDigest({ ...base, ...v }).toString('hex'), d0, JSON.stringify(Object.keys(v)))
  })

  it('length prefixes make the encoding injective (moving bytes between fields changes the digest)', () => {
    assert.notEqual(recordDigest({ ...base, userId: 'acc_u{', canonical: '"a":1}' }).toString('hex'), d0)
    assert.notEqual(
      recordDigest({ ...base, workspaceId: 'wc', containerId: '' }).toString('hex'),
      recordDigest({ ...base, workspaceId: 'w', containerId: 'c' }).toString('hex'),
    )
    assert.notEqual(genesisDigest('ab', 'c').toString('hex'), genesisDigest('a', 'bc').toString('hex'))
  })

  it('property: any two different inputs give different preimages', () => {
    const str = fc.string({ maxLength: 6 })
    fc.assert(
      fc.property(str, str, str, str, str, str, str, str, (w1, c1, u1, b1, w2, c2, u2, b2) => {
        const a = { ...base, workspaceId: w1, containerId: c1, userId: u1, canonical: b1 }
        const b = { ...base, workspaceId: w2, containerId: c2, userId: u2, canonical: b2 }
        const same = w1 === w2 && c1 === c2 && u1 === u2 && b1 === b2
        assert.equal(recordPreimage(a).equals(recordPreimage(b)), same)
      }),
      { numRuns: 500 },
    )
  })

  it('genesis is bound to workspace and container and differs from any record digest input', () => {
    assert.notEqual(genesisDigest('w', 'c').toString('hex'), genesisDigest('w2', 'c').toString('hex'))
    assert.notEqual(genesisDigest('w', 'c').toString('hex'), genesisDigest('w', 'c2').toString('hex'))
  })

  it('refuses a malformed RecordID or a predecessor of the wrong length', () => {
    assert.throws(() => recordDigest({ ...base, recordId: '5' }), /not a RecordID/)
    assert.throws(() => recordDigest({ ...base, recordId: '٠٠٠٠٠٠٠٠٠٠٠٥' }), /not a RecordID/)
    assert.throws(() => recordDigest({ ...base, prevDigest: Buffer.alloc(31) }), /32 bytes, got 31/)
  })

  it('a reused hasher gives the same digests as one-off calls when records grow and shrink', () => {
    const h = createRecordHasher('w', 'c')
    const sizes = [10, 5000, 3, 200_000, 17, 70_000]
    for (const n of sizes) {
      const input = { ...base, canonical: JSON.stringify({ x: 'é'.repeat(n) }), userId: 'u'.repeat(n % 97) }
      assert.equal(
        h.digest(input.recordId, input.prevDigest, input.timestamp, input.userId, input.canonical).toString('hex'),
        recordDigest(input).toString('hex'),
      )
      assert.deepEqual(
        Buffer.from(h.preimage(input.recordId, input.prevDigest, input.timestamp, input.userId, input.canonical)),
        referencePreimage(input),
      )
    }
  })
})

describe('canonicalRecordBody', () => {
  it('always has the five members; absent ones are null and absent details is {}', () => {
    assert.equal(
      canonicalRecordBody({ ScopeKey: 'k' }),
      '{"ScopeKey":"k","actionType":null,"details":{},"entityId":null,"entityType":null}',
    )
  })
  it('refuses fields of the wrong type and details that are not an object of plain JSON', () => {
    assert.throws(() => canonicalRecordBody({ ScopeKey: 5 as unknown as string }), /ScopeKey must be a string or null, got number/)
    assert.throws(
      () => canonicalRecordBody({ ScopeKey: 'k', details: [] as unknown as Record<string, never> }),
      /details must be a JSON object/,
    )
    assert.throws(
      () => canonicalRecordBody({ ScopeKey: 'k', details: { d: new Date() } as unknown as Record<string, never> }),
      /Date is not plain JSON data at \/details\/d/,
    )
    assert.throws(() => canonicalRecordBody({ ScopeKey: 'k', details: { n: NaN } }), /NaN is not a JSON number/)
  })
})

describe('timestamps and digest comparison', () => {
  it('nextLedgerTimestamp never goes backwards', () => {
    assert.equal(nextLedgerTimestamp(Date.parse('2026-01-01T00:00:00Z'), null), '2026-01-01T00:00:00.000Z')
    assert.equal(nextLedgerTimestamp(Date.parse('2026-01-01T00:00:00Z'), '2026-01-01T00:00:05.250Z'), '2026-01-01T00:00:05.250Z')
    assert.equal(nextLedgerTimestamp(Date.parse('2026-01-01T00:00:09Z'), '2026-01-01T00:00:05.250Z'), '2026-01-01T00:00:09.000Z')
    assert.throws(() => nextLedgerTimestamp(0, '2026-01-01 00:00:05+00'), /not in the stored form/)
  })
  it('digestsEqual compares raw bytes', () => {
    const a = Buffer.from('ab'.repeat(32), 'hex')
    assert.equal(digestsEqual(a, Buffer.from(a)), true)
    assert.equal(digestsEqual(a, Buffer.from('AB'.repeat(32), 'hex')), true) // same bytes, whatever the hex case was
    assert.equal(digestsEqual(a, Buffer.from('ab'.repeat(31) + 'aa', 'hex')), false)
    assert.equal(digestsEqual(a, a.subarray(0, 31)), false)
    assert.equal(digestsEqual(new Uint8Array(0), new Uint8Array(0)), false)
  })
})

describe('docs/design/ledger.md carries these known answers', () => {
  it('every frozen digest and the genesis appear in the design page', async () => {
    const { readFile } = await import('node:fs/promises')
    const doc = await readFile(new URL('../../../docs/design/ledger.md', import.meta.url), 'utf8')
    for (const v of [
      KAT.genesis,
      ...KAT.records.map((r) => r.digest),
      ...KAT.records.map((r) => r.canonical),
      ...KAT.records.map((r) => `${r.preimageBytes} bytes`),
    ]) {
      assert.ok(doc.includes(v), `docs/design/ledger.md lacks ${v}`)
    }
  })
})
