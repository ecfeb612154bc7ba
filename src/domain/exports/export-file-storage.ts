/**
 * @module
 * Where export files live and how a client reaches them: a directory shared by every process
 * (downloads through our signed URL) or an S3-compatible bucket (downloads through the bucket's own
 * presigned URL). Both are written as a stream, never built whole in memory.
 */
import type { Readable } from 'node:stream'
import type { ExportFileRecord, ExportStorageKind } from './export-store.js'

export interface ExportFileWriter {
  /** Appends text; resolves when the storage can take more (backpressure). */
  write(text: string): Promise<void>
  /** Makes the file complete and durable in its storage; returns its size and SHA-256 (hex). */
  finish(): Promise<{ readonly sizeBytes: number; readonly sha256: string }>
  /** Discards an unfinished file (idempotent; never throws). */
  abort(): Promise<void>
}

export interface DownloadLink {
  readonly url: string
  /** When the URL stops working, ms since the epoch (at most 15 minutes after issue). */
  readonly expiresAt: number
}

/** A file opened for download: its size is known before the first byte is sent. */
export interface OpenedFile {
  readonly sizeBytes: number
  /** Bytes `start` to `end` inclusive (the whole file without a range); the stream closes the file. */
  stream(range?: { readonly start: number; readonly end: number }): Readable
  /** Closes the file when no stream is made (e.g. an unsatisfiable range). */
  close(): Promise<void>
}

/** A file in storage, found by scanning it, that may have no record. */
export interface StrayFile {
  readonly fileId: string
  /** False for an unfinished part: never served, always deletable once old. */
  readonly finished: boolean
  remove(): Promise<void>
}

export interface ExportFileStorage {
  readonly kind: ExportStorageKind
  /** Starts writing a new file under `objectKey`. */
  create(objectKey: string, contentType: string): Promise<ExportFileWriter>
  /** A download URL for a completed file, issued at `issuedAt`. */
  link(file: ExportFileRecord, contentType: string, issuedAt: number): DownloadLink
  /**
   * Directory storage: opens the file for a download through our own URL; undefined when it is
   * gone. Bucket storage never serves through us and returns undefined.
   */
  open(file: ExportFileRecord): Promise<OpenedFile | undefined>
  /** Deletes the file (and any unfinished part of it); a file already gone is not an error. */
  remove(file: ExportFileRecord): Promise<void>
  /** Files and parts in local storage last modified before `before` (ms, file-system clock). */
  strays(before: number): Promise<readonly StrayFile[]>
}
