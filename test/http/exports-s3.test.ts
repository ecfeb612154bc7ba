/**
 * Exports to an S3-compatible bucket (issue 7, item 5). No S3 service is reachable from the test
 * machine, so a small stand-in bucket (below) plays S3's part over real HTTP: it checks what it
 * can independently (the payload hash and length of each upload), verifies each request's SigV4
 * signature the way S3 does (recomputed from the request as received), enforces a presigned URL's
 * expiry, applies `response-content-disposition`, and serves Range. The signer itself is pinned by
 * AWS's published examples in src/adapters/export-files/sigv4.test.ts.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, utimesSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import { presignUrl, signHeaders } from '../../src/adapters/export-files/sigv4.js'
import { manualClock } from '../../src/shared/clock.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const CREDENTIALS = { accessKeyId: 'AKIDTESTEXAMPLE', secretAccessKey: 'test/secret+key' }
const REGION = 'eu-central-1'

interface StoredObject {
  readonly body: Buffer
  readonly contentType: string
}

/** A stand-in for an S3-compatible bucket: path-style, one bucket, the operations exports use. */
class StandInBucket {
  readonly objects = new Map<string, StoredObject>()
  readonly log: string[] = []
  failUploads = false
  #server: Server | undefined

  constructor(
    readonly bucket: string,
    private readonly now: () => number,
  ) {}

  async start(): Promise<string> {
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => this.#fail(res, 500, 'InternalError', String(error)))
    })
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve))
    return `http://127.0.0.1:${(this.#server!.address() as AddressInfo).port}`
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.#server?.close(() => resolve()) ?? resolve())
  }

  #fail(res: ServerResponse, status: number, code: string, message: string): void {
    res
      .writeHead(status, { 'content-type': 'application/xml' })
      .end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>${code}</Code><Message>${message}</Message></Error>`)
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = req.url!
    const [path, search = ''] = raw.split('?') as [string, string?]
    const query = new URLSearchParams(search)
    const key = decodeURIComponent(path.slice(`/${this.bucket}/`.length))
    this.log.push(`${req.method} ${key}`)
    if (!path.startsWith(`/${this.bucket}/`)) return this.#fail(res, 404, 'NoSuchBucket', 'no such bucket')
    const chunks: Buffer[] = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)

    if (query.has('X-Amz-Signature')) {
      // Query-string authentication (presigned GET): recompute as S3 does, then check expiry.
      if (req.method !== 'GET' && req.method !== 'HEAD') return this.#fail(res, 403, 'AccessDenied', 'presigned for GET')
      const date = query.get('X-Amz-Date')!
      const signedAt = Date.parse(
        `${date.slice(0, 4)}-${date.slice(4, 6)}-${date.slice(6, 8)}T${date.slice(9, 11)}:${date.slice(11, 13)}:${date.slice(13, 15)}Z`,
      )
      const extra = [...query].filter(([name]) => !name.startsWith('X-Amz-'))
      const expected = presignUrl({
        credentials: CREDENTIALS,
        region: REGION,
        service: 's3',
        time: signedAt,
        method: 'GET',
        origin: `http://${req.headers.host}`,
        canonicalPath: path,
        expiresSeconds: Number(query.get('X-Amz-Expires')),
        query: extra,
      })
      if (new URL(expected).searchParams.get('X-Amz-Signature') !== query.get('X-Amz-Signature'))
        return this.#fail(res, 403, 'SignatureDoesNotMatch', 'signature mismatch')
      if (this.now() > signedAt + Number(query.get('X-Amz-Expires')) * 1000)
        return this.#fail(res, 403, 'AccessDenied', 'Request has expired')
      const object = this.objects.get(key)
      if (!object) return this.#fail(res, 404, 'NoSuchKey', 'no such key')
      const headers = {
        'content-type': query.get('response-content-type') ?? object.contentType,
        'content-disposition': query.get('response-content-disposition') ?? '',
        'accept-ranges': 'bytes',
      }
      const range = /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '')
      if (range) {
        const [start, end] = [Number(range[1]), Math.min(Number(range[2]), object.body.length - 1)]
        res
          .writeHead(206, { ...headers, 'content-range': `bytes ${start}-${end}/${object.body.length}` })
          .end(object.body.subarray(start, end + 1))
        return
      }
      res.writeHead(200, headers).end(object.body)
      return
    }

    // Header authentication (PUT, DELETE).
    const authorization =
      /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request,SignedHeaders=([^,]+),Signature=([0-9a-f]{64})$/.exec(
        req.headers.authorization ?? '',
      )
    if (!authorization || authorization[1] !== CREDENTIALS.accessKeyId || authorization[3] !== REGION)
      return this.#fail(res, 403, 'AccessDenied', 'bad Authorization')
    const amzDate = String(req.headers['x-amz-date'])
    const payloadHash = String(req.headers['x-amz-content-sha256'])
    const signed: Record<string, string> = {}
    for (const name of authorization[4]!.split(';'))
      if (name !== 'x-amz-date' && name !== 'x-amz-content-sha256') signed[name] = String(req.headers[name])
    const time = Date.parse(
      `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
    )
    const recomputed = signHeaders({
      credentials: CREDENTIALS,
      region: REGION,
      service: 's3',
      time,
      method: req.method!,
      canonicalPath: path,
      headers: signed,
      payloadHash,
    })
    if (recomputed.signature !== authorization[5]) return this.#fail(res, 403, 'SignatureDoesNotMatch', 'signature mismatch')
    if (req.method === 'PUT') {
      if (this.failUploads) return this.#fail(res, 503, 'SlowDown', 'please reduce your request rate')
      // What a stand-in can check independently of our signer: the body is what was hashed and announced.
      if (createHash('sha256').update(body).digest('hex') !== payloadHash)
        return this.#fail(res, 400, 'XAmzContentSHA256Mismatch', 'payload hash mismatch')
      if (Number(req.headers['content-length']) !== body.length) return this.#fail(res, 400, 'IncompleteBody', 'length mismatch')
      this.objects.set(key, { body, contentType: String(req.headers['content-type']) })
      res.writeHead(200, { etag: '"x"' }).end()
      return
    }
    if (req.method === 'DELETE') {
      this.objects.delete(key)
      res.writeHead(204).end()
      return
    }
    this.#fail(res, 405, 'MethodNotAllowed', 'not supported by the stand-in')
  }
}

const WINDOW = { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }

for (const backend of BACKENDS) {
  describe(`${backend}: exports to an S3-compatible bucket`, () => {
    const clock = manualClock(Date.parse('2026-03-01T12:00:00.600Z'))
    const bucket = new StandInBucket('exports', () => clock.now())
    let server: TestServer
    let analyst: string

    before(async () => {
      const endpoint = await bucket.start()
      server = await startTestServer(backend, {
        clock,
        config: {
          exportBucket: {
            bucket: 'exports',
            region: REGION,
            endpoint,
            pathStyle: true,
            prefix: 'provenant/',
            accessKeyId: CREDENTIALS.accessKeyId,
            secretAccessKey: CREDENTIALS.secretAccessKey,
            sessionToken: undefined,
          },
        },
      })
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(6))
      analyst = await server.token('analyst', { expires: '30d' })
    })
    after(async () => {
      await server.stop()
      await bucket.stop()
    })

    it("uploads the file and answers with the bucket's presigned URL, valid for 15 minutes from the signing second", async () => {
      const response = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
        token: analyst,
        body: { format: 'csv', ...WINDOW, pageSize: 4 },
      })
      assert.equal(response.status, 200, response.text)
      const url = new URL(response.body.downloadUrl)
      const fileId = /\/(exp_[a-z2-7]+)\.csv$/.exec(url.pathname)?.[1]
      assert.ok(fileId, url.pathname)
      assert.equal(url.pathname, `/exports/provenant/${server.workspace.id}/${fileId}.csv`)
      assert.equal(url.searchParams.get('X-Amz-Expires'), '900')
      assert.equal(url.searchParams.get('X-Amz-Date'), '20260301T120000Z')
      assert.equal(response.body.expiresAt, '2026-03-01T12:15:00.000Z')
      const file = await fetch(url)
      assert.equal(file.status, 200)
      assert.equal(file.headers.get('content-disposition'), 'attachment; filename="sensors_20260101T000000Z_20260102T000000Z_page-1.csv"')
      assert.equal(file.headers.get('content-type'), 'text/csv; charset=utf-8; header=present')
      assert.equal(
        await file.text(),
        'timestamp,sensor,value\r\n2026-01-01T00:00:00Z,s0,0\r\n2026-01-01T00:01:00Z,s1,1\r\n2026-01-01T00:02:00Z,s2,2\r\n2026-01-01T00:03:00Z,s0,3\r\n',
      )
      const part = await fetch(url, { headers: { range: 'bytes=0-8' } })
      assert.equal(part.status, 206)
      assert.equal(await part.text(), 'timestamp')
      // The local staging copy is gone once uploaded.
      assert.deepEqual(readdirSync(join(server.config.exportDir, 'staging')), [])
      // Our own download route does not serve bucket files.
      const ours = await fetch(`${server.baseUrl}/oi-api/downloads/files/${fileId}?expires=1&signature=${'A'.repeat(43)}`)
      assert.equal(ours.status, 404)
    })

    it('the bucket refuses the URL once expired or altered', async () => {
      const response = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
        token: analyst,
        body: { format: 'jsonl', ...WINDOW },
      })
      const url = new URL(response.body.downloadUrl)
      const altered = new URL(url)
      altered.searchParams.set('response-content-disposition', 'attachment; filename="other.jsonl"')
      assert.equal((await fetch(altered)).status, 403)
      clock.set(Date.parse(response.body.expiresAt) + 1000)
      assert.equal((await fetch(url)).status, 403)
    })

    it('the sweeper deletes expired objects with a signed DELETE', async () => {
      const response = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
        token: analyst,
        body: { format: 'csv', ...WINDOW },
      })
      const key = decodeURIComponent(new URL(response.body.downloadUrl).pathname.slice('/exports/'.length))
      assert.ok(bucket.objects.has(key))
      clock.set(Date.parse(response.body.expiresAt) + 61_000)
      assert.ok((await server.services.exports.sweep()) >= 1)
      assert.ok(!bucket.objects.has(key))
      assert.ok(bucket.log.includes(`DELETE ${key}`))
      // A part staged by a process that stopped mid-export is deleted once an hour old.
      const part = join(server.config.exportDir, 'staging', 'exp_strayparta.csv.part')
      writeFileSync(part, 'left behind')
      const twoHoursAgo = (Date.now() - 7_200_000) / 1000
      utimesSync(part, twoHoursAgo, twoHoursAgo)
      await server.services.exports.sweep()
      assert.ok(!existsSync(part))
    })

    it('a refused upload fails the export with a 500 and leaves nothing behind', async () => {
      bucket.failUploads = true
      try {
        const before = bucket.objects.size
        const response = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
          token: analyst,
          body: { format: 'csv', ...WINDOW },
        })
        assert.equal(response.status, 500)
        assert.match(errorMessage(response), /correlation id/)
        assert.equal(bucket.objects.size, before)
        assert.deepEqual(readdirSync(join(server.config.exportDir, 'staging')), [])
        assert.ok(server.logLines.some((l) => l.includes('the export bucket refused the upload') && l.includes('SlowDown')))
        assert.ok(!server.logLines.some((l) => l.includes(CREDENTIALS.secretAccessKey)), 'the secret key never reaches a log line')
      } finally {
        bucket.failUploads = false
      }
    })
  })
}
