/**
 * SigV4 against the worked examples AWS publishes (no S3 service is reachable from the test
 * machine, so these known answers are what pins the signer): the S3 documentation's
 * "Signature Calculations for the Authorization Header: Transferring Payload in a Single Chunk"
 * (GET Object with Range, PUT Object, GET Bucket Lifecycle, GET Bucket list), "Authenticating
 * Requests: Using Query Parameters" (the presigned GET URL), and the signing-key derivation of the
 * general SigV4 documentation. All use AWS's published example credentials.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { amzDate, canonicalQuery, EMPTY_SHA256, presignUrl, sha256Hex, signHeaders, signingKey, uriEncode } from './sigv4.js'

const credentials = { accessKeyId: 'AKIAIOSFODNN7EXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' }
const time = Date.parse('2013-05-24T00:00:00Z')
const scope = { credentials, region: 'us-east-1', service: 's3', time }
const host = 'examplebucket.s3.amazonaws.com'

describe('SigV4 (AWS documentation vectors)', () => {
  it('derives the signing key of the SigV4 documentation example', () => {
    assert.equal(
      signingKey('wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', '20120215', 'us-east-1', 'iam').toString('hex'),
      'f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d',
    )
  })

  it('GET Object with a Range header', () => {
    const signed = signHeaders({
      ...scope,
      method: 'GET',
      canonicalPath: '/test.txt',
      headers: { Host: host, Range: 'bytes=0-9' },
      payloadHash: EMPTY_SHA256,
    })
    assert.equal(
      signed.canonicalRequest,
      [
        'GET',
        '/test.txt',
        '',
        `host:${host}`,
        'range:bytes=0-9',
        `x-amz-content-sha256:${EMPTY_SHA256}`,
        'x-amz-date:20130524T000000Z',
        '',
        'host;range;x-amz-content-sha256;x-amz-date',
        EMPTY_SHA256,
      ].join('\n'),
    )
    assert.equal(sha256Hex(signed.canonicalRequest), '7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972')
    assert.equal(signed.signature, 'f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41')
    assert.equal(
      signed.headers['authorization'],
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    )
  })

  it('PUT Object with a body, a Date header and a key that needs encoding', () => {
    const body = 'Welcome to Amazon S3.'
    assert.equal(sha256Hex(body), '44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072')
    const signed = signHeaders({
      ...scope,
      method: 'PUT',
      canonicalPath: `/${uriEncode('test$file.text', true)}`,
      headers: { Host: host, Date: 'Fri, 24 May 2013 00:00:00 GMT', 'x-amz-storage-class': 'REDUCED_REDUNDANCY' },
      payloadHash: sha256Hex(body),
    })
    assert.equal(sha256Hex(signed.canonicalRequest), '9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d')
    assert.equal(signed.signature, '98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd')
    assert.match(signed.headers['authorization']!, /SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,/)
  })

  it('GET Bucket Lifecycle (a query parameter without a value)', () => {
    const signed = signHeaders({
      ...scope,
      method: 'GET',
      canonicalPath: '/',
      query: [['lifecycle', '']],
      headers: { host },
      payloadHash: EMPTY_SHA256,
    })
    assert.equal(signed.signature, 'fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543')
  })

  it('GET Bucket (list objects, query parameters sorted)', () => {
    const signed = signHeaders({
      ...scope,
      method: 'GET',
      canonicalPath: '/',
      query: [
        ['prefix', 'J'],
        ['max-keys', '2'],
      ],
      headers: { host },
      payloadHash: EMPTY_SHA256,
    })
    assert.equal(signed.signature, '34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7')
  })

  it('presigned GET URL (query-string authentication)', () => {
    const url = presignUrl({ ...scope, method: 'GET', origin: `https://${host}`, canonicalPath: '/test.txt', expiresSeconds: 86_400 })
    assert.equal(
      url,
      `https://${host}/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404`,
    )
  })
})

describe('SigV4 building blocks', () => {
  it('encodes as RFC 3986 wants, keeping slashes only in paths', () => {
    assert.equal(uriEncode('a b/c~_.-*+=ü'), 'a%20b%2Fc~_.-%2A%2B%3D%C3%BC')
    assert.equal(uriEncode('ws/exp_1.csv', true), 'ws/exp_1.csv')
    assert.equal(
      canonicalQuery([
        ['b', '2'],
        ['a', 'x y'],
        ['A', '1'],
      ]),
      'A=1&a=x%20y&b=2',
    )
    assert.equal(amzDate(Date.parse('2026-03-04T05:06:07.891Z')), '20260304T050607Z')
  })

  it('signs extra query parameters and a session token into a presigned URL; any change alters the signature', () => {
    const base = {
      ...scope,
      credentials: { ...credentials, sessionToken: 'token/with+chars' },
      method: 'GET',
      origin: 'http://127.0.0.1:9000',
      canonicalPath: '/bucket/ws/exp_1.csv',
      expiresSeconds: 900,
    }
    const url = new URL(presignUrl({ ...base, query: [['response-content-disposition', 'attachment; filename="a.csv"']] }))
    assert.equal(url.searchParams.get('X-Amz-Security-Token'), 'token/with+chars')
    assert.equal(url.searchParams.get('response-content-disposition'), 'attachment; filename="a.csv"')
    assert.equal(url.searchParams.get('X-Amz-Expires'), '900')
    const other = new URL(presignUrl({ ...base, query: [['response-content-disposition', 'attachment; filename="b.csv"']] }))
    assert.notEqual(url.searchParams.get('X-Amz-Signature'), other.searchParams.get('X-Amz-Signature'))
    assert.throws(() => presignUrl({ ...base, expiresSeconds: 604_801 }), /604800/)
  })
})
