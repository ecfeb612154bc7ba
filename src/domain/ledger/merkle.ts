/**
 * @module
 * RFC 9162 (Certificate Transparency v2, §2.1) Merkle tree hashing over a container's records,
 * with inclusion and consistency proofs (generate and verify) and a compact range, so a checkpoint
 * per append batch costs O(log n) hashes instead of a rescan (design §8, ledger note §3.7).
 *
 *     leaf hash   = SHA-256(0x00 ‖ leaf data)
 *     node hash   = SHA-256(0x01 ‖ left ‖ right)
 *     MTH({})     = SHA-256("")
 *
 * The ledger's leaves are its record digests themselves: digest.ts starts every record preimage
 * with the 0x00 leaf prefix, so a record digest IS the leaf hash of that record. leafHash() is for
 * other leaf data (and the RFC 6962 test vectors).
 *
 * Sizes and indexes are JS numbers (a container holds at most 999,999,999,999 records, far below
 * 2^53); all bit arithmetic is done with division, never with 32-bit bitwise operators.
 * A "node" (level L, index i) is the perfect subtree over leaves [i·2^L, (i+1)·2^L): exactly the
 * rows a `merkle_nodes(container, level, idx, hash)` table would hold.
 */
import { createHash, hash } from 'node:crypto'

export const HASH_BYTES = 32

/** MTH of the empty tree: SHA-256 of nothing. */
export const EMPTY_ROOT: Buffer = createHash('sha256').digest()

// One-shot hashing over reused scratch buffers: several times cheaper than a Hash object with
// three update() calls, and these run once or twice per record in append and verify.
const leafScratch = Buffer.alloc(1 + HASH_BYTES)
const nodeScratch = Buffer.alloc(1 + 2 * HASH_BYTES)
nodeScratch[0] = 0x01

/** RFC 9162 leaf hash of arbitrary leaf data (for the ledger: a record digest). */
export function leafHash(data: Uint8Array): Buffer {
  if (data.length !== HASH_BYTES)
    return createHash('sha256')
      .update(Buffer.from([0x00]))
      .update(data)
      .digest()
  leafScratch.set(data, 1)
  return hash('sha256', leafScratch, 'buffer')
}

/** RFC 9162 interior node hash. */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (left.length !== HASH_BYTES || right.length !== HASH_BYTES) {
    return createHash('sha256')
      .update(Buffer.from([0x01]))
      .update(left)
      .update(right)
      .digest()
  }
  nodeScratch.set(left, 1)
  nodeScratch.set(right, 1 + HASH_BYTES)
  return hash('sha256', nodeScratch, 'buffer')
}

/** MTH over already-hashed leaves (the reference definition, O(n); tests and small trees). */
export function rootFromLeafHashes(leafHashes: readonly Uint8Array[]): Buffer {
  return rangeRoot(arrayNodes(leafHashes), 0, leafHashes.length)
}

// --- node sources and proof generation ------------------------------------------------------------

/**
 * Read access to perfect-subtree hashes. `node(level, index)` MUST return the hash of the complete
 * subtree over leaves [index·2^level, (index+1)·2^level); level 0 is the leaf hashes. Proof
 * generation only asks for nodes that lie entirely inside the tree size it was given.
 */
export interface NodeSource {
  node(level: number, index: number): Uint8Array
}

/** A NodeSource over an in-memory list of leaf hashes, memoising interior nodes. */
export function arrayNodes(leafHashes: readonly Uint8Array[]): NodeSource {
  const memo = new Map<string, Uint8Array>()
  const source: NodeSource = {
    node(level, index) {
      if (level === 0) {
        const leaf = leafHashes[index]
        if (leaf === undefined) throw new RangeError(`no leaf ${index}`)
        return leaf
      }
      const key = `${level}/${index}`
      let h = memo.get(key)
      if (h === undefined) {
        h = nodeHash(source.node(level - 1, index * 2), source.node(level - 1, index * 2 + 1))
        memo.set(key, h)
      }
      return h
    },
  }
  return source
}

/** Largest power of two strictly less than n (n >= 2). */
function splitPoint(n: number): number {
  let k = 1
  while (k * 2 < n) k *= 2
  return k
}

function isPowerOfTwo(n: number): boolean {
  return n >= 1 && splitPoint(n + 1) === n
}

function log2Exact(n: number): number {
  let level = 0
  while (n > 1) {
    n /= 2
    level++
  }
  return level
}

/** MTH of leaves [start, start+n); `start` is a multiple of the enclosing power of two. */
function rangeRoot(nodes: NodeSource, start: number, n: number): Buffer {
  if (n === 0) return EMPTY_ROOT
  if (isPowerOfTwo(n) && start % n === 0) return Buffer.from(nodes.node(log2Exact(n), start / n))
  const k = splitPoint(n)
  return nodeHash(rangeRoot(nodes, start, k), rangeRoot(nodes, start + k, n - k))
}

/** The root of the first `size` leaves. */
export function treeRoot(nodes: NodeSource, size: number): Buffer {
  checkSize(size)
  return rangeRoot(nodes, 0, size)
}

function checkSize(n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`tree size must be a non-negative integer, got ${n}`)
}

/** RFC 9162 §2.1.3.1 PATH(index, D[size]): the audit path for leaf `index` (0-based) in a tree of `size`. */
export function inclusionProof(nodes: NodeSource, index: number, size: number): Buffer[] {
  checkSize(size)
  if (!Number.isSafeInteger(index) || index < 0 || index >= size) {
    throw new RangeError(`leaf index ${index} is outside a tree of size ${size}`)
  }
  const out: Buffer[] = []
  path(nodes, index, 0, size, out)
  return out
}

function path(nodes: NodeSource, m: number, start: number, n: number, out: Buffer[]): void {
  if (n <= 1) return
  const k = splitPoint(n)
  if (m < k) {
    path(nodes, m, start, k, out)
    out.push(rangeRoot(nodes, start + k, n - k))
  } else {
    path(nodes, m - k, start + k, n - k, out)
    out.push(rangeRoot(nodes, start, k))
  }
}

/** RFC 9162 §2.1.4.1 PROOF(first, D[second]). Empty for first = 0 or first = second. */
export function consistencyProof(nodes: NodeSource, first: number, second: number): Buffer[] {
  checkSize(first)
  checkSize(second)
  if (first > second) throw new RangeError(`first size ${first} is larger than second size ${second}`)
  const out: Buffer[] = []
  if (first === 0 || first === second) return out
  subproof(nodes, first, 0, second, true, out)
  return out
}

function subproof(nodes: NodeSource, m: number, start: number, n: number, complete: boolean, out: Buffer[]): void {
  if (m === n) {
    if (!complete) out.push(rangeRoot(nodes, start, n))
    return
  }
  const k = splitPoint(n)
  if (m <= k) {
    subproof(nodes, m, start, k, complete, out)
    out.push(rangeRoot(nodes, start + k, n - k))
  } else {
    subproof(nodes, m - k, start + k, n - k, false, out)
    out.push(rangeRoot(nodes, start, k))
  }
}

// --- proof verification ---------------------------------------------------------------------------

function isHash(h: Uint8Array | undefined): h is Uint8Array {
  return h !== undefined && h.length === HASH_BYTES
}

/**
 * Raw-byte equality of two hashes (never hex text; see Rekor's case-folding regression). Tree
 * hashes are public values, so a plain memcmp is fine; no constant-time comparison is needed.
 */
export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === HASH_BYTES && b.length === HASH_BYTES && Buffer.compare(a, b) === 0
}

const odd = (x: number): boolean => x % 2 === 1
const half = (x: number): number => Math.floor(x / 2)

/**
 * RFC 9162 §2.1.3.2: the root implied by an inclusion proof, or null if the proof cannot be for
 * leaf `index` of a tree of `size` (wrong length, wrong element size, index out of range).
 */
export function rootFromInclusionProof(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[]): Buffer | null {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return null
  if (!isHash(leaf)) return null
  let fn = index
  let sn = size - 1
  let r: Buffer = Buffer.from(leaf)
  for (const p of proof) {
    if (!isHash(p) || sn === 0) return null
    if (odd(fn) || fn === sn) {
      r = nodeHash(p, r)
      while (!odd(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else {
      r = nodeHash(r, p)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 ? r : null
}

/** True when `proof` shows that `leaf` (a leaf hash) is leaf `index` of the tree with `root`. */
export function verifyInclusion(index: number, size: number, leaf: Uint8Array, proof: readonly Uint8Array[], root: Uint8Array): boolean {
  const got = rootFromInclusionProof(index, size, leaf, proof)
  return got !== null && isHash(root) && hashesEqual(got, root)
}

/**
 * RFC 9162 §2.1.4.2: true when `proof` shows the tree of size `second` with `secondRoot` extends
 * the tree of size `first` with `firstRoot`. Equal sizes need equal roots and an empty proof; from
 * the empty tree (first = 0) every tree is consistent, with an empty proof.
 */
export function verifyConsistency(
  first: number,
  second: number,
  firstRoot: Uint8Array,
  secondRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isSafeInteger(first) || !Number.isSafeInteger(second) || first < 0 || first > second) return false
  if (first === second) return proof.length === 0 && isHash(firstRoot) && isHash(secondRoot) && hashesEqual(firstRoot, secondRoot)
  if (first === 0) return proof.length === 0
  if (proof.length === 0 || !isHash(firstRoot) || !isHash(secondRoot)) return false
  for (const p of proof) if (!isHash(p)) return false
  const path = isPowerOfTwo(first) ? [firstRoot, ...proof] : [...proof]
  let fn = first - 1
  let sn = second - 1
  while (odd(fn)) {
    fn = half(fn)
    sn = half(sn)
  }
  let fr: Buffer = Buffer.from(path[0]!)
  let sr: Buffer = Buffer.from(path[0]!)
  for (let i = 1; i < path.length; i++) {
    const c = path[i]!
    if (sn === 0) return false
    if (odd(fn) || fn === sn) {
      fr = nodeHash(c, fr)
      sr = nodeHash(c, sr)
      while (!odd(fn) && fn !== 0) {
        fn = half(fn)
        sn = half(sn)
      }
    } else {
      sr = nodeHash(sr, c)
    }
    fn = half(fn)
    sn = half(sn)
  }
  return sn === 0 && hashesEqual(fr, firstRoot) && hashesEqual(sr, secondRoot)
}

// --- compact range --------------------------------------------------------------------------------

/** A perfect subtree completed by an append: what a node table would insert. */
export interface CompletedNode {
  readonly level: number
  readonly index: number
  readonly hash: Buffer
}

/**
 * The right edge of a tree: one perfect-subtree hash ("peak") per set bit of `size`, largest
 * first. Appending a leaf costs amortised O(1) hashes (at most log2 n); the root costs O(log n).
 * It serialises to `size` plus popcount(size) × 32 bytes, small enough for the heads row.
 */
export interface CompactRange {
  readonly size: number
  /** Peaks, largest subtree first. */
  peaks(): readonly Buffer[]
  /** Appends one leaf hash; returns the perfect subtrees this completed (level 0 first). */
  append(leafHash: Uint8Array): CompletedNode[]
  /** Appends one leaf hash without reporting nodes or copying it (the verifier's hot path; do not mutate the leaf afterwards). */
  push(leafHash: Uint8Array): void
  /** MTH of the leaves appended so far. */
  root(): Buffer
  /** Peaks concatenated, for storage next to `size`. */
  serialize(): Buffer
  clone(): CompactRange
}

export function createCompactRange(size = 0, peaks: readonly Uint8Array[] = []): CompactRange {
  checkSize(size)
  if (peaks.length !== popcount(size)) {
    throw new RangeError(`a compact range of size ${size} has ${popcount(size)} peaks, got ${peaks.length}`)
  }
  for (const p of peaks) if (!isHash(p)) throw new RangeError('every peak must be a 32-byte hash')
  const stack: Buffer[] = peaks.map((p) => Buffer.from(p))
  let n = size
  return {
    get size() {
      return n
    },
    peaks: () => stack.slice(),
    append(leaf) {
      if (!isHash(leaf)) throw new RangeError('a leaf hash must be 32 bytes')
      let h: Buffer = Buffer.from(leaf)
      let index = n
      let level = 0
      const done: CompletedNode[] = [{ level: 0, index, hash: h }]
      // Each trailing 1-bit of n is a peak of that level that the new leaf completes.
      let bits = n
      while (odd(bits)) {
        h = nodeHash(stack.pop()!, h)
        level++
        index = half(index)
        done.push({ level, index, hash: h })
        bits = half(bits)
      }
      stack.push(h)
      n++
      return done
    },
    push(leaf) {
      if (!isHash(leaf)) throw new RangeError('a leaf hash must be 32 bytes')
      let h: Buffer = Buffer.isBuffer(leaf) ? leaf : Buffer.from(leaf)
      let bits = n
      while (odd(bits)) {
        h = nodeHash(stack.pop()!, h)
        bits = half(bits)
      }
      stack.push(h)
      n++
    },
    root() {
      if (stack.length === 0) return EMPTY_ROOT
      let r = stack[stack.length - 1]!
      for (let i = stack.length - 2; i >= 0; i--) r = nodeHash(stack[i]!, r)
      return r
    },
    serialize: () => Buffer.concat(stack),
    clone: () => createCompactRange(n, stack),
  }
}

/** Rebuilds a compact range from its stored form (size and concatenated peaks). */
export function deserializeCompactRange(size: number, peaks: Uint8Array): CompactRange {
  if (peaks.length % HASH_BYTES !== 0) throw new RangeError('stored peaks are not a whole number of hashes')
  const list: Uint8Array[] = []
  for (let off = 0; off < peaks.length; off += HASH_BYTES) list.push(peaks.subarray(off, off + HASH_BYTES))
  return createCompactRange(size, list)
}

function popcount(n: number): number {
  let c = 0
  while (n > 0) {
    if (odd(n)) c++
    n = half(n)
  }
  return c
}
