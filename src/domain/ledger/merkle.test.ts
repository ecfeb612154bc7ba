import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import {
  arrayNodes,
  consistencyProof,
  createCompactRange,
  deserializeCompactRange,
  EMPTY_ROOT,
  inclusionProof,
  leafHash,
  nodeHash,
  rootFromInclusionProof,
  rootFromLeafHashes,
  treeRoot,
  verifyConsistency,
  verifyInclusion,
} from './merkle.js'

const h = (hex: string): Buffer => Buffer.from(hex, 'hex')
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex')

// RFC 6962 known answers from transparency-dev/merkle testonly/constants.go and proof/verify_test.go.
const LEAF_INPUTS = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(h)
const LEAF_HASHES = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
  '0298d122906dcfc10892cb53a73992fc5b9f493ea4c9badb27b791b4127a7fe7',
  '07506a85fd9dd2f120eb694f86011e5bb4662e5c415a62917033d4a9624487e7',
  'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
  '4271a26be0d8a84f0bd54c8c302e7cb3a3b5d1fa6780a40bcce2873477dab658',
  'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
  '46f6ffadd3d06a09ff3c5860d2755c8b9819db7df44251788c7d8e3180de8eb1',
]
const ROOTS = [
  'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
]
const INCLUSION: [leaf1: number, size: number, proof: string[]][] = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [3, 3, ['fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125']],
  [
    2,
    5,
    [
      '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
]
const CONSISTENCY: [size1: number, size2: number, proof: string[]][] = [
  [1, 1, []],
  [
    1,
    8,
    [
      '96a296d224f285c67bee93c30f8a309157f0daa35dc5b87e410b78630a09cfc7',
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      '6b47aaf29ee3c2af9af889bc1fb9254dabd31177f16232dd6aab035ca39bf6e4',
    ],
  ],
  [
    6,
    8,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'ca854ea128ed050b41b35ffc1b87b8eb2bde461e9e3b5596ece6b9d5975a0ae0',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
  [
    2,
    5,
    [
      '5f083f0a1a33ca076a95279832580db3e0ef4584bdff1f54c8a360f50de3031e',
      'bc1a0643b12e4d2d7c77918f44e0f4f79a838b6cf9ec5b5c283e1f4d88599e6b',
    ],
  ],
  [
    6,
    7,
    [
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
    ],
  ],
]
const SOME_HASH = h('abacaba000000000000000000000000000000000000000000060061e00123456')

const leaves = LEAF_INPUTS.map(leafHash)
const nodes = arrayNodes(leaves)

describe('merkle: RFC 6962 known answers', () => {
  it('leaf hashes', () => {
    assert.deepEqual(leaves.map(hex), LEAF_HASHES)
  })
  it('roots for sizes 0..8 (reference MTH, node source and compact range agree)', () => {
    const cr = createCompactRange()
    assert.equal(hex(cr.root()), ROOTS[0])
    assert.equal(hex(EMPTY_ROOT), ROOTS[0])
    for (let n = 1; n <= 8; n++) {
      cr.append(leaves[n - 1]!)
      assert.equal(hex(rootFromLeafHashes(leaves.slice(0, n))), ROOTS[n], `MTH ${n}`)
      assert.equal(hex(treeRoot(nodes, n)), ROOTS[n], `treeRoot ${n}`)
      assert.equal(hex(cr.root()), ROOTS[n], `compact ${n}`)
    }
  })
  it('compact range peaks match transparency-dev CompactTrees (size 7: nodes [2][0], [1][2], [0][6])', () => {
    const cr = createCompactRange()
    for (const l of leaves.slice(0, 7)) cr.append(l)
    assert.deepEqual(cr.peaks().map(hex), [
      'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
      '0ebc5d3437fbe2db158b9f126a1d118e308181031d0a949f8dededebc558ef6a',
      'b08693ec2e721597130641e8211e7eedccb4c26413963eee6c1e2ed16ffb1a5f',
    ])
  })
  for (const [leaf1, size, proof] of INCLUSION) {
    it(`inclusion proof leaf ${leaf1 - 1} of ${size}: generated exactly and verified`, () => {
      assert.deepEqual(inclusionProof(nodes, leaf1 - 1, size).map(hex), proof)
      assert.ok(verifyInclusion(leaf1 - 1, size, leaves[leaf1 - 1]!, proof.map(h), h(ROOTS[size]!)))
    })
  }
  for (const [size1, size2, proof] of CONSISTENCY) {
    it(`consistency proof ${size1} → ${size2}: generated exactly and verified`, () => {
      assert.deepEqual(consistencyProof(nodes, size1, size2).map(hex), proof)
      assert.ok(verifyConsistency(size1, size2, h(ROOTS[size1]!), h(ROOTS[size2]!), proof.map(h)))
    })
  }
})

describe('merkle: tampered inclusion proofs are rejected (transparency-dev corruptInclusionProof probes)', () => {
  for (const [leaf1, size, proofHex] of INCLUSION.slice(1)) {
    it(`leaf ${leaf1 - 1} of ${size}`, () => {
      const index = leaf1 - 1
      const proof = proofHex.map(h)
      const root = h(ROOTS[size]!)
      const leaf = leaves[index]!
      const probes: [string, number, number, Uint8Array, Uint8Array[], Uint8Array][] = [
        ['index - 1', index - 1, size, leaf, proof, root],
        ['index + 1', index + 1, size, leaf, proof, root],
        ['index ^ 2', index ^ 2, size, leaf, proof, root],
        ['size * 2', index, size * 2, leaf, proof, root],
        ['size / 2', index, Math.floor(size / 2), leaf, proof, root],
        ['wrong leaf', index, size, Buffer.from('WrongLeaf'), proof, root],
        ['wrong leaf (right length)', index, size, SOME_HASH, proof, root],
        ['empty root', index, size, leaf, proof, EMPTY_ROOT],
        ['random root', index, size, leaf, proof, SOME_HASH],
        ['trailing garbage', index, size, leaf, [...proof, Buffer.alloc(0)], root],
        ['trailing root', index, size, leaf, [...proof, root], root],
        ['preceding garbage', index, size, leaf, [Buffer.alloc(0), ...proof], root],
        ['preceding root', index, size, leaf, [root, ...proof], root],
        ['empty proof', index, size, leaf, [], root],
        ['removed component (truncated)', index, size, leaf, proof.slice(0, -1), root],
        ['inserted component', index, size, leaf, [proof[0]!, SOME_HASH, ...proof.slice(1)], root],
        [
          'root with a flipped case-only hex difference is a different hash',
          index,
          size,
          leaf,
          proof,
          h(ROOTS[size]!.replace(/^(.)/, (c) => (c === 'a' ? 'b' : 'a'))),
        ],
      ]
      for (let i = 0; i < proof.length; i++) {
        for (const bit of [0, 3, 7]) {
          const flipped = proof.map((p) => Buffer.from(p))
          flipped[i]![0]! ^= 1 << bit
          probes.push([`proof[${i}] bit ${bit} flipped`, index, size, leaf, flipped, root])
        }
      }
      const wrong = probes.filter(([, i, s, l, p, r]) => verifyInclusion(i, s, l, p, r)).map(([d]) => d)
      assert.deepEqual(wrong, [])
    })
  }
  it('single-entry tree: root = leaf; empty or wrong-size hashes fail; out-of-range probes fail', () => {
    const l = leafHash(Buffer.from('data'))
    assert.ok(verifyInclusion(0, 1, l, [], l))
    assert.ok(!verifyInclusion(0, 1, l, [], Buffer.alloc(0)))
    assert.ok(!verifyInclusion(0, 1, Buffer.alloc(0), [], l))
    for (const [i, s] of [
      [0, 0],
      [1, 0],
      [2, 1],
      [-1, 4],
      [0.5, 4],
    ] as const) {
      assert.ok(!verifyInclusion(i, s, SOME_HASH, [], EMPTY_ROOT))
      assert.equal(rootFromInclusionProof(i, s, SOME_HASH, []), null)
    }
  })
})

describe('merkle: tampered consistency proofs are rejected (transparency-dev corruptConsistencyProof probes)', () => {
  for (const [size1, size2, proofHex] of CONSISTENCY.filter(([, , p]) => p.length > 0)) {
    it(`${size1} → ${size2}`, () => {
      const proof = proofHex.map(h)
      const root1 = h(ROOTS[size1]!)
      const root2 = h(ROOTS[size2]!)
      const probes: [string, number, number, Uint8Array, Uint8Array, Uint8Array[]][] = [
        ['size1 - 1', size1 - 1, size2, root1, root2, proof],
        ['size1 + 1', size1 + 1, size2, root1, root2, proof],
        ['size1 ^ 2', size1 ^ 2, size2, root1, root2, proof],
        ['size2 * 2', size1, size2 * 2, root1, root2, proof],
        ['size2 / 2', size1, Math.floor(size2 / 2), root1, root2, proof],
        ['wrong root1', size1, size2, Buffer.from('WrongRoot'), root2, proof],
        ['wrong root2', size1, size2, root1, Buffer.from('WrongRoot'), proof],
        ['swapped roots', size1, size2, root2, root1, proof],
        ['empty proof', size1, size2, root1, root2, []],
        ['trailing garbage', size1, size2, root1, root2, [...proof, Buffer.alloc(0)]],
        ['trailing root1', size1, size2, root1, root2, [...proof, root1]],
        ['trailing root2', size1, size2, root1, root2, [...proof, root2]],
        ['preceding garbage', size1, size2, root1, root2, [Buffer.alloc(0), ...proof]],
        ['preceding root1', size1, size2, root1, root2, [root1, ...proof]],
        ['preceding root2', size1, size2, root1, root2, [root2, ...proof]],
        ['preceding proof[0]', size1, size2, root1, root2, [proof[0]!, ...proof]],
        ['truncated proof', size1, size2, root1, root2, proof.slice(0, -1)],
      ]
      for (let i = 0; i < proof.length; i++) {
        const flipped = proof.map((p) => Buffer.from(p))
        flipped[i]![0]! ^= 16
        probes.push([`proof[${i}] bit 4 flipped`, size1, size2, root1, root2, flipped])
      }
      const wrong = probes.filter(([, a, b, r1, r2, p]) => verifyConsistency(a, b, r1, r2, p)).map(([d]) => d)
      assert.deepEqual(wrong, [])
    })
  }
  it('edge cases (transparency-dev TestVerifyConsistency)', () => {
    const r1 = Buffer.from("don't care 1")
    const r2 = Buffer.from("don't care 2")
    assert.ok(!verifyConsistency(0, 0, r1, r2, []))
    assert.ok(!verifyConsistency(1, 1, r1, r2, []))
    assert.ok(verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, []))
    assert.ok(verifyConsistency(0, 1, r1, r2, []))
    assert.ok(verifyConsistency(1, 1, h(ROOTS[1]!), h(ROOTS[1]!), []))
    assert.ok(!verifyConsistency(1, 0, r1, r2, [])) // time travel
    assert.ok(!verifyConsistency(2, 1, r1, r2, []))
    assert.ok(!verifyConsistency(1, 2, r1, r2, [])) // empty proof
    assert.ok(!verifyConsistency(0, 0, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT])) // roots match, proof not empty
    assert.ok(!verifyConsistency(0, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]))
    assert.ok(!verifyConsistency(1, 1, EMPTY_ROOT, EMPTY_ROOT, [EMPTY_ROOT]))
  })
})

describe('merkle: properties over random trees', () => {
  const digests = (n: number): Buffer[] => Array.from({ length: n }, (_, i) => leafHash(Buffer.from(`record ${i}`)))

  it('every inclusion and consistency proof of trees up to 40 leaves verifies, and fails against the next root', () => {
    const all = digests(41)
    const src = arrayNodes(all)
    for (let n = 1; n <= 40; n++) {
      const root = treeRoot(src, n)
      const other = treeRoot(src, n + 1)
      for (let i = 0; i < n; i++) {
        const p = inclusionProof(src, i, n)
        assert.ok(verifyInclusion(i, n, all[i]!, p, root), `inclusion ${i}/${n}`)
        assert.ok(!verifyInclusion(i, n, all[i]!, p, other))
      }
      for (let m = 0; m <= n; m++) {
        const p = consistencyProof(src, m, n)
        assert.ok(verifyConsistency(m, n, treeRoot(src, m), root, p), `consistency ${m}→${n}`)
        if (m > 0 && m < n) assert.ok(!verifyConsistency(m, n, treeRoot(src, m), other, p))
      }
    }
  })

  it('a forked history (same size, one leaf changed) is never consistent with the original', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 60 }), fc.nat(), fc.nat(), (n, a, b) => {
        const m = 1 + (a % (n - 1)) // 1..n-1
        const changed = b % m // a leaf inside the old tree
        const honest = digests(n)
        const forked = honest.slice()
        forked[changed] = leafHash(Buffer.from('forged'))
        const p = consistencyProof(arrayNodes(forked), m, n)
        assert.ok(!verifyConsistency(m, n, treeRoot(arrayNodes(honest), m), treeRoot(arrayNodes(forked), n), p))
      }),
      { numRuns: 200 },
    )
  })

  it('compact range: reports completed nodes, round-trips through storage and matches the node source', () => {
    const all = digests(100)
    const src = arrayNodes(all)
    const cr = createCompactRange()
    const seen = new Map<string, string>()
    for (let n = 0; n < all.length; n++) {
      for (const node of cr.append(all[n]!)) seen.set(`${node.level}/${node.index}`, hex(node.hash))
      assert.equal(hex(cr.root()), hex(treeRoot(src, n + 1)))
      const restored = deserializeCompactRange(cr.size, cr.serialize())
      assert.equal(hex(restored.root()), hex(cr.root()))
    }
    assert.equal(seen.size, 100 + 50 + 25 + 12 + 6 + 3 + 1)
    for (const [key, value] of seen) {
      const [level, index] = key.split('/').map(Number) as [number, number]
      assert.equal(value, hex(src.node(level, index)), key)
    }
    const copy = cr.clone()
    copy.append(all[0]!)
    assert.equal(cr.size, 100)
    assert.equal(copy.size, 101)
  })

  it('compact range refuses a stored form whose peak count does not match its size', () => {
    assert.throws(() => createCompactRange(3, [SOME_HASH]), /size 3 has 2 peaks, got 1/)
    assert.throws(() => deserializeCompactRange(1, Buffer.alloc(31)), /whole number of hashes/)
    assert.throws(() => createCompactRange(1, [Buffer.alloc(31)]), /32-byte/)
  })

  it('sizes beyond 2^32 use exact arithmetic (no 32-bit bitwise truncation)', () => {
    // A tree of 2^33 + 5 leaves whose every perfect subtree at a given level has the same hash.
    const levels: Buffer[] = [leafHash(Buffer.from('x'))]
    for (let l = 1; l <= 34; l++) levels.push(nodeHash(levels[l - 1]!, levels[l - 1]!))
    const uniform = { node: (level: number) => levels[level]! }
    const size = 2 ** 33 + 5
    const root = treeRoot(uniform, size)
    const index = 2 ** 33 + 3
    assert.ok(verifyInclusion(index, size, levels[0]!, inclusionProof(uniform, index, size), root))
    assert.ok(verifyConsistency(2 ** 32 + 1, size, treeRoot(uniform, 2 ** 32 + 1), root, consistencyProof(uniform, 2 ** 32 + 1, size)))
    const peaks = [levels[33]!, levels[2]!, levels[0]!]
    assert.equal(hex(createCompactRange(size, peaks).root()), hex(root))
  })

  it('proof generation refuses out-of-range arguments', () => {
    assert.throws(() => inclusionProof(nodes, 8, 8), /outside a tree of size 8/)
    assert.throws(() => consistencyProof(nodes, 5, 4), /larger than second/)
    assert.deepEqual(consistencyProof(nodes, 0, 8), [])
  })
})

describe('compact range push', () => {
  it('push gives the same peaks and roots as append, for every size up to 70', () => {
    const a = createCompactRange()
    const b = createCompactRange()
    for (let i = 0; i < 70; i++) {
      const leaf = createHash('sha256').update(`leaf ${i}`).digest()
      a.append(leaf)
      b.push(leaf)
      assert.equal(b.size, a.size)
      assert.deepEqual(b.peaks(), a.peaks())
      assert.deepEqual(b.root(), a.root())
    }
    assert.throws(() => b.push(new Uint8Array(31)), /32 bytes/)
  })
})
