/**
 * @module
 * Export files in an S3-compatible bucket (AWS S3, MinIO, Ceph, R2, …). A file is staged on local
 * disk as it is written (hashed as it goes), uploaded with one signed PUT (SigV4, payload hash
 * signed), and the client downloads it from the bucket through a presigned GET URL that expires
 * with the same 15-minute lifetime; the bucket serves Range requests itself and refuses the URL
 * once expired or altered (S3's own 403). The sweeper deletes expired objects with a signed DELETE.
 */
import { createReadStream } from 'node:fs'
import { mkdir, rm } from 'node:fs/promises'
import http from 'node:http'
import https from 'node:https'
import { basename, join } from 'node:path'
import type { ExportFileStorage } from '../../domain/exports/export-file-storage.js'
import { DOWNLOAD_URL_LIFETIME_MS } from '../../domain/exports/export-request.js'
import type { Clock } from '../../shared/clock.js'
import { findStrays } from './directory-file-storage.js'
import { createPartFile } from './part-file.js'
import { type AwsCredentials, EMPTY_SHA256, presignUrl, signHeaders, uriEncode } from './sigv4.js'

export interface S3BucketConfig {
  readonly bucket: string
  readonly region: string
  /** scheme://host[:port] of an S3-compatible service; AWS's regional endpoint when absent. */
  readonly endpoint: string | undefined
  /** Bucket in the path (`endpoint/bucket/key`) instead of the host name (`bucket.host/key`). */
  readonly pathStyle: boolean
  /** Prefix of every object key, e.g. `provenant/exports/`. */
  readonly prefix: string
  readonly credentials: AwsCredentials
}

export interface S3FileStorageOptions {
  readonly bucket: S3BucketConfig
  /** Local directory for staging files before upload. */
  readonly stagingDir: string
  readonly clock: Clock
}

interface S3Response {
  readonly status: number
  readonly body: string
}

function request(url: URL, method: string, headers: Record<string, string>, body?: () => NodeJS.ReadableStream): Promise<S3Response> {
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    const req = client.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => {
        if (chunks.length < 64) chunks.push(chunk)
      })
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.setTimeout(60_000, () => req.destroy(new Error(`S3 ${method} timed out`)))
    if (body) body().on('error', reject).pipe(req)
    else req.end()
  })
}

/** S3's error code from its XML body, for a message an operator can act on. */
function s3Error(action: string, response: S3Response): Error {
  const code = /<Code>([^<]*)<\/Code>/.exec(response.body)?.[1]
  const message = /<Message>([^<]*)<\/Message>/.exec(response.body)?.[1]
  return new Error(`the export bucket refused ${action}: HTTP ${response.status}${code ? ` ${code}` : ''}${message ? ` (${message})` : ''}`)
}

export function createS3FileStorage(options: S3FileStorageOptions): ExportFileStorage {
  const { bucket, clock } = options
  const endpoint = new URL(bucket.endpoint ?? `https://s3.${bucket.region}.amazonaws.com`)
  const origin = bucket.pathStyle ? endpoint.origin : `${endpoint.protocol}//${bucket.bucket}.${endpoint.host}`
  const pathOf = (objectKey: string) =>
    `${bucket.pathStyle ? `/${uriEncode(bucket.bucket)}` : ''}/${uriEncode(bucket.prefix + objectKey, true)}`
  const scope = (time: number) => ({ credentials: bucket.credentials, region: bucket.region, service: 's3', time })

  async function signedRequest(
    method: string,
    objectKey: string,
    headers: Record<string, string>,
    payloadHash: string,
    body?: () => NodeJS.ReadableStream,
  ): Promise<S3Response> {
    const path = pathOf(objectKey)
    const signed = signHeaders({
      ...scope(clock.now()),
      method,
      canonicalPath: path,
      headers: { host: new URL(origin).host, ...headers },
      payloadHash,
    })
    return request(new URL(`${origin}${path}`), method, signed.headers, body)
  }

  return {
    kind: 's3',
    async create(objectKey, contentType) {
      await mkdir(options.stagingDir, { recursive: true, mode: 0o700 })
      const staged = join(options.stagingDir, `${basename(objectKey)}.part`)
      const part = await createPartFile(staged)
      return {
        write: (text) => part.write(text),
        async finish() {
          try {
            const facts = await part.finish()
            const response = await signedRequest(
              'PUT',
              objectKey,
              { 'content-length': String(facts.sizeBytes), 'content-type': contentType },
              facts.sha256,
              () => createReadStream(staged),
            )
            if (response.status !== 200) throw s3Error(`the upload of ${objectKey}`, response)
            return facts
          } finally {
            await rm(staged, { force: true })
          }
        },
        abort: () => part.abort(),
      }
    },
    link(file, contentType, issuedAt) {
      // SigV4 dates have whole seconds; the URL expires at the signing second + 15 minutes.
      const time = Math.floor(issuedAt / 1000) * 1000
      const url = presignUrl({
        ...scope(time),
        method: 'GET',
        origin,
        canonicalPath: pathOf(file.objectKey),
        expiresSeconds: DOWNLOAD_URL_LIFETIME_MS / 1000,
        query: [
          ['response-content-disposition', `attachment; filename="${file.fileName}"`],
          ['response-content-type', contentType],
        ],
      })
      return { url, expiresAt: time + DOWNLOAD_URL_LIFETIME_MS }
    },
    open: async () => undefined,
    // Only unfinished local parts: an object uploaded by a process that stopped before recording it
    // stays in the bucket (a lifecycle rule on the prefix removes such rare leftovers).
    strays: (before) => findStrays(options.stagingDir, before, false),
    async remove(file) {
      const response = await signedRequest('DELETE', file.objectKey, {}, EMPTY_SHA256)
      if (response.status !== 204 && response.status !== 200 && response.status !== 404)
        throw s3Error(`the deletion of ${file.objectKey}`, response)
    },
  }
}
