/**
 * @module
 * When the columnar compactor writes a segment and which segments it merges (docs/design/columnar.md,
 * "Compaction policy"). Pure: columnar-service.ts asks, columnar-store.ts does.
 *
 * Writing a row into a segment costs about 1.2 µs of CPU (read as CSV, parsed, sorted, written as
 * zstd Parquet) and every merge that rewrites it about half that again, so the compactor writes
 * full segments when rows come fast (never merged again) and small ones only for a tail that has
 * grown old (a quiet connection), which size-tiered merges then fold into large ones.
 */

/** Segments a merge takes when their rows stay under half a segment. */
export const MERGE_FAN_IN = 8

/** A tail of fewer rows than segmentRows / this is not compacted for its age alone. */
export const AGED_TAIL_DIVISOR = 1_000

export interface TailState {
  /** Rows staged above the watermark. */
  readonly rows: number
  /** The lowest `_ingested_at` among them (ms since the epoch). */
  readonly oldestIngestedAt: number | undefined
}

export interface CompactionSettings {
  readonly segmentRows: number
  readonly tailAgeMs: number
}

/**
 * Why the tail is to be compacted now, or undefined: `full` when it holds segmentRows rows; `age`
 * when its oldest row is tailAgeMs old and it holds at least segmentRows / 1,000 rows (a smaller
 * tail costs a query about a millisecond to read, and would make a segment of a few rows);
 * `forced` for any rows when forced (the CLI, tests).
 */
export function compactionDue(
  tail: TailState,
  settings: CompactionSettings,
  now: number,
  force = false,
): 'full' | 'age' | 'forced' | undefined {
  if (tail.rows >= settings.segmentRows) return 'full'
  if (tail.rows === 0) return undefined
  if (force) return 'forced'
  const aged = tail.oldestIngestedAt !== undefined && now - tail.oldestIngestedAt >= settings.tailAgeMs
  return aged && tail.rows * AGED_TAIL_DIVISOR >= settings.segmentRows ? 'age' : undefined
}

/**
 * The run of adjacent segments to merge next (indices [start, end) of `segments`, in row-id order),
 * or undefined: the first run, oldest first, of segments smaller than segmentRows / 2 each, at most
 * segmentRows rows together, none holding more than half the run's rows, with MERGE_FAN_IN
 * segments or at least segmentRows / 2 rows (the longest such run from its start).
 *
 * Size-tiered, so a row is rewritten few times: a merged segment holds at least twice the rows of
 * any segment it replaced and only segments under segmentRows / 2 are merged, so a row first
 * written in a segment of s rows is rewritten fewer than log2(segmentRows / s) times (runs of
 * similar sizes grow MERGE_FAN_IN-fold: log8). Full segments are never rewritten.
 */
export function chooseMerge(segments: readonly { readonly rowCount: number }[], segmentRows: number): [number, number] | undefined {
  const small = (n: number): boolean => n * 2 < segmentRows
  for (let start = 0; start < segments.length; start++) {
    let rows = 0
    let largest = 0
    let found: [number, number] | undefined
    for (let end = start; end < segments.length; end++) {
      const n = segments[end]!.rowCount
      if (!small(n) || rows + n > segmentRows) break
      rows += n
      largest = Math.max(largest, n)
      const count = end - start + 1
      if (count >= 2 && largest * 2 <= rows && (count >= MERGE_FAN_IN || rows * 2 >= segmentRows)) found = [start, end + 1]
    }
    if (found) return found
  }
  return undefined
}
