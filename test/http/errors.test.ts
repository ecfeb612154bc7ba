/**
 * Spec 7 (errors): every error path answers in the envelope with only the spec's status codes.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: error envelope (spec 2.11, 7)`, () => {
    let server: TestServer
    let token: string
    before(async () => {
      server = await startTestServer(backend)
      token = await server.token('admin')
    })
    after(() => server.stop())

    it('404 for an unknown route, with the envelope and a request id', async () => {
      const response = await server.api('GET', '/oi-api/no-such-thing', { token })
      assert.equal(response.status, 404)
      assert.match(errorMessage(response), /no route GET \/oi-api\/no-such-thing/)
      assert.ok(response.headers.get('x-request-id'))
    })

    it('404 naming the accepted methods for a wrong method', async () => {
      const response = await server.api('DELETE', '/oi-api/provenance/reason-categories', { token })
      assert.equal(response.status, 404)
      assert.match(errorMessage(response), /this path accepts GET/)
    })

    it('echoes a sane X-Request-Id and replaces an unsafe one', async () => {
      const echoed = await server.api('GET', '/oi-api/provenance/reason-categories', { token, headers: { 'x-request-id': 'trace-42.abc' } })
      assert.equal(echoed.headers.get('x-request-id'), 'trace-42.abc')
      const replaced = await server.api('GET', '/oi-api/provenance/reason-categories', {
        token,
        headers: { 'x-request-id': 'a'.repeat(300) },
      })
      assert.notEqual(replaced.headers.get('x-request-id'), 'a'.repeat(300))
    })

    it('401 is an envelope too, with a Bearer challenge', async () => {
      const response = await server.api('GET', '/oi-api/openapi')
      assert.equal(response.status, 401)
      errorMessage(response)
      assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="oi-api"')
    })

    it('responses are not cacheable and not sniffable', async () => {
      const response = await server.api('GET', '/oi-api/provenance/reason-categories', { token })
      assert.equal(response.headers.get('cache-control'), 'no-store')
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff')
      assert.equal(response.headers.get('x-powered-by'), null)
    })

    it('500 with a generic message and a correlation id when storage fails; details only in the log', async () => {
      const broken = await startTestServer(backend)
      const brokenToken = await broken.token('admin')
      await broken.stores.close()
      const response = await fetch(`${broken.baseUrl}/oi-api/provenance/reason-categories`, {
        headers: { authorization: `Bearer ${brokenToken}`, 'x-request-id': 'corr-500-test' },
      })
      const body = (await response.json()) as { HasError: boolean; Messages: { Error: string } }
      assert.equal(response.status, 500)
      assert.equal(body.HasError, true)
      assert.match(body.Messages.Error, /correlation id corr-500-test/)
      assert.doesNotMatch(body.Messages.Error, /database|sqlite|pool|stack|at /i)
      assert.ok(broken.logLines.some((line) => line.includes('corr-500-test') && line.includes('unhandled error')))
      await broken.stop()
    })
  })
}
