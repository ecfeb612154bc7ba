/**
 * Security review (docs/security.md §4): signed download URLs across workspaces and servers. The
 * signature covers the file id and the expiry (never the workspace, which the id already pins), so a
 * signature of one workspace's file opens no file of another workspace, and a URL signed by another
 * server's key opens nothing here. Tampering with each part, expiry and the absence of a bearer
 * token are in test/http/exports.test.ts and test/fuzz/transport.fuzz.test.ts.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { BACKENDS } from '../support/backends.js'
import { pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

const WINDOW = { format: 'csv', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' }

interface Link {
  id: string
  expires: string
  signature: string
}

function linkOf(downloadUrl: string): Link {
  const url = new URL(downloadUrl)
  return { id: url.pathname.split('/').pop()!, expires: url.searchParams.get('expires')!, signature: url.searchParams.get('signature')! }
}

for (const backend of BACKENDS) {
  describe(`${backend}: download URLs across workspaces and servers (security review)`, () => {
    let server: TestServer
    let other: TestServer
    let mine: Link
    let theirs: Link
    let foreign: Link
    /** Fetches a link and reads its body (an unread body would keep the connection busy at shutdown). */
    const open = async (target: TestServer, link: Link) => {
      const response = await fetch(
        `${target.baseUrl}/oi-api/downloads/files/${link.id}?expires=${link.expires}&signature=${link.signature}`,
      )
      const text = await response.text()
      return { status: response.status, text: async () => text, json: async () => JSON.parse(text) as unknown }
    }

    before(async () => {
      server = await startTestServer(backend)
      other = await startTestServer('sqlite', { workspaceName: 'elsewhere' })
      const neighbour = await server.services.admin.createWorkspace(`neighbour-${backend}`)
      const owner = await server.services.admin.addAccount({ name: `owner-${backend}`, role: 'admin', workspaceId: neighbour.id })
      for (const [target, workspaceId, account] of [
        [server, server.workspace.id, server.accounts.admin],
        [server, neighbour.id, owner],
        [other, other.workspace.id, other.accounts.admin],
      ] as const) {
        await target.services.config.apply(workspaceId, { accountId: account.id, accountName: account.name, role: 'admin' }, sensorConfig())
        const { result, problems } = await target.services.ingest.importRows(workspaceId, 'sensors', sensorRows(3))
        assert.ok(result, JSON.stringify(problems))
      }
      await pushRows(server, 'sensors', sensorRows(1, Date.parse('2026-01-01T12:00:00Z')))
      const exportWith = async (target: TestServer, token: string) => {
        const response = await target.api('POST', '/oi-api/downloads/data-connections/sensors', { token, body: WINDOW })
        assert.equal(response.status, 200, response.text)
        return linkOf(response.body.downloadUrl as string)
      }
      mine = await exportWith(server, await server.token('admin'))
      theirs = await exportWith(server, await server.token(owner, { workspaceId: neighbour.id }))
      foreign = await exportWith(other, await other.token('admin'))
    })
    after(async () => {
      await server.stop()
      await other.stop()
    })

    it('each issued URL opens its own file, without a token', async () => {
      const a = await open(server, mine)
      const b = await open(server, theirs)
      assert.equal(a.status, 200)
      assert.equal(b.status, 200)
      assert.notEqual(await a.text(), await b.text(), 'two workspaces, two files')
    })

    it("a signature of one workspace's file opens no file of another (ids, expiries and signatures swapped)", async () => {
      for (const swapped of [
        { ...theirs, signature: mine.signature },
        { ...theirs, expires: mine.expires, signature: mine.signature },
        { ...mine, id: theirs.id },
        { ...mine, signature: theirs.signature },
      ]) {
        const response = await open(server, swapped)
        assert.equal(response.status, 403, JSON.stringify(swapped))
        assert.deepEqual(await response.json(), {
          HasError: true,
          Messages: { Error: 'this download link is not valid: it was altered or not issued by this server; export again for a new link' },
        })
      }
    })

    it("a URL signed by another server's key opens nothing here, and this server's opens nothing there", async () => {
      assert.equal((await open(server, foreign)).status, 403)
      assert.equal((await open(server, { ...foreign, id: mine.id })).status, 403)
      assert.equal((await open(other, mine)).status, 403)
      assert.equal((await open(other, foreign)).status, 200)
    })
  })
}
