/**
 * @module
 * Signed download URLs for export files kept in the export directory (spec 2.5, design §5). The
 * URL carries the file id, its expiry (ms since the epoch) and an HMAC-SHA256 over both, so it
 * needs no bearer token and cannot be altered: any change to the id, the expiry or the signature
 * fails verification, which compares in constant time. Expiry is checked when a request starts.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** Where our signed download URLs point: `<public URL>/oi-api/downloads/files/<file id>?expires=…&signature=…`. */
export const DOWNLOAD_PATH_PREFIX = '/oi-api/downloads/files/'

export type DownloadCheck = 'valid' | 'altered' | 'expired'

export interface DownloadSigner {
  /** base64url HMAC-SHA256 over the file id and the expiry. */
  sign(fileId: string, expiresAt: number): string
  /**
   * 'altered' unless `signature` is the signature of exactly this id and expiry text (the expiry
   * must be the canonical decimal form, so `0900` or `9e2` cannot reuse a signature); 'expired'
   * when it is authentic but `now` is at or past the expiry.
   */
  verify(fileId: string, expiresText: unknown, signature: unknown, now: number): DownloadCheck
}

const EXPIRES_RE = /^[1-9][0-9]{0,15}$/
const SIGNATURE_RE = /^[A-Za-z0-9_-]{43}$/

/** The key must be at least 32 random bytes. */
export function createDownloadSigner(key: Uint8Array): DownloadSigner {
  if (key.length < 32) throw new Error('the download URL key must be at least 32 bytes')
  const mac = (fileId: string, expires: string): Buffer =>
    createHmac('sha256', key).update(`provenant-download-v1\n${fileId}\n${expires}`).digest()
  return {
    sign: (fileId, expiresAt) => mac(fileId, String(expiresAt)).toString('base64url'),
    verify(fileId, expiresText, signature, now) {
      if (typeof expiresText !== 'string' || typeof signature !== 'string') return 'altered'
      if (!EXPIRES_RE.test(expiresText) || !SIGNATURE_RE.test(signature)) return 'altered'
      // Compared as text, not decoded bytes: the last of 43 base64url characters carries two
      // unused bits, so several spellings decode to the same bytes; only the canonical one passes.
      const expected = Buffer.from(mac(fileId, expiresText).toString('base64url'), 'ascii')
      if (!timingSafeEqual(Buffer.from(signature, 'ascii'), expected)) return 'altered'
      return now >= Number(expiresText) ? 'expired' : 'valid'
    },
  }
}
