/**
 * @module
 * Picks where export files go: the configured S3-compatible bucket, or the export directory (with
 * the HMAC key of our own download URLs).
 */
import { join } from 'node:path'
import type { Config } from '../../config/config.js'
import { createDownloadSigner, type DownloadSigner } from '../../domain/exports/download-signature.js'
import type { ExportFileStorage } from '../../domain/exports/export-file-storage.js'
import type { Clock } from '../../shared/clock.js'
import { loadDownloadUrlKey } from '../keys/download-url-key.js'
import { createDirectoryFileStorage } from './directory-file-storage.js'
import { createS3FileStorage } from './s3-file-storage.js'

export interface ExportStorage {
  readonly files: ExportFileStorage
  /** Undefined with a bucket: the bucket signs its own URLs. */
  readonly signer: DownloadSigner | undefined
}

export function openExportStorage(
  config: Pick<Config, 'exportDir' | 'exportBucket' | 'downloadUrlKey' | 'publicUrl'>,
  clock: Clock,
): ExportStorage {
  const bucket = config.exportBucket
  if (bucket) {
    return {
      files: createS3FileStorage({
        bucket: {
          bucket: bucket.bucket,
          region: bucket.region,
          endpoint: bucket.endpoint,
          pathStyle: bucket.pathStyle,
          prefix: bucket.prefix,
          credentials: { accessKeyId: bucket.accessKeyId, secretAccessKey: bucket.secretAccessKey, sessionToken: bucket.sessionToken },
        },
        stagingDir: join(config.exportDir, 'staging'),
        clock,
      }),
      signer: undefined,
    }
  }
  const signer = createDownloadSigner(loadDownloadUrlKey(config.exportDir, config.downloadUrlKey))
  return { files: createDirectoryFileStorage({ dir: config.exportDir, publicUrl: config.publicUrl, signer }), signer }
}
