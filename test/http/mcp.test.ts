/**
 * Spec 1, 4.3, design §10 and issue 8, items 3–4: the MCP endpoint with real MCP clients of both
 * protocol eras (v1 SDK client: initialize-based ≤ 2025-11-25; v2 client pinned to 2026-07-28):
 * tools and resources, reading, running and proposing; 401 with the Bearer challenge, 403 without
 * mcp:use, tools the token may not use left out, a foreign Origin refused, GET and DELETE 405 at
 * once, no accepting tool anywhere, and every call recorded as an AI client acting for the owner.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { ResourceNotFoundError } from '@modelcontextprotocol/server'
import Fastify, { type FastifyInstance } from 'fastify'
import { UnauthenticatedError } from '../../src/domain/errors.js'
import { apiServicesOf } from '../../src/domain/services.js'
import { registerErrorEnvelope } from '../../src/http/error-envelope.js'
import type { CallRecord } from '../../src/http/plugins/record-call.js'
import { registerRoutes } from '../../src/http/route-registry.js'
import { mcpRoutes } from '../../src/http/routes/mcp.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { connectMcp, ERAS, type McpTestClient, textOf } from '../support/mcp-clients.js'
import { errorMessage, startTestServer, type TestServer } from '../support/test-server.js'

const ALL_TOOLS = ['list_warm_queries', 'get_warm_query', 'run_warm_query', 'run_kql', 'propose_change', 'get_proposal', 'list_proposals']
const ACCEPTING = /accept|approv|commit|merge|apply|review|decide/i

for (const backend of BACKENDS) {
  describe(`${backend}: MCP endpoint (design §10)`, () => {
    let server: TestServer
    let analyst: string
    let mcpUrl: string
    const clients: McpTestClient[] = []
    const connect = async (
      era: (typeof ERAS)[number],
      token: string,
      headers: Record<string, string> = {},
      url = mcpUrl,
    ): Promise<McpTestClient> => {
      const client = await connectMcp(era, url, { authorization: `Bearer ${token}`, ...headers })
      clients.push(client)
      return client
    }
    const post = (token: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
      fetch(mcpUrl, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...headers,
        },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000),
      })
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'curl', version: '1' } },
    }

    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      await pushRows(server, 'sensors', sensorRows(9))
      analyst = await server.token('analyst')
      mcpUrl = `${server.baseUrl}/oi-api/mcp`
    })
    after(async () => {
      for (const client of clients) await client.close().catch(() => {})
      server.runtime.app.server.closeAllConnections()
      await server.stop()
    })

    for (const era of ERAS) {
      describe(`${era} era`, () => {
        let client: McpTestClient
        before(async () => {
          client = await connect(era, analyst)
        })

        it('negotiates its revision and lists every tool the token may use, none that accepts anything', async () => {
          assert.equal(client.protocolVersion, era === 'modern' ? '2026-07-28' : '2025-11-25')
          const { tools } = await client.listTools()
          assert.deepEqual(
            tools.map((t) => t.name),
            ALL_TOOLS,
          )
          assert.deepEqual(
            tools.filter((t) => ACCEPTING.test(t.name)),
            [],
          )
          for (const tool of tools) {
            assert.ok((tool.description ?? '').length > 80, `${tool.name} has a description written for a model`)
            assert.equal(tool.inputSchema['type'], 'object')
            assert.equal(tool.outputSchema?.['type'], 'object', `${tool.name} declares its structured output`)
          }
          const annotations = Object.fromEntries(tools.map((t) => [t.name, t.annotations?.['readOnlyHint']]))
          assert.deepEqual(annotations, {
            list_warm_queries: true,
            get_warm_query: true,
            run_warm_query: true,
            run_kql: true,
            propose_change: false,
            get_proposal: true,
            list_proposals: true,
          })
          if (era === 'legacy') assert.ok(await client.ping(), 'ping exists up to 2025-11-25 (2026-07-28 removed it)')
        })

        it('lists warm queries with lookup, API path, description, columns, approver and approval time', async () => {
          const current = await server.services.config.current(server.workspace.id)
          const result = await client.callTool({ name: 'list_warm_queries', arguments: {} })
          assert.equal(result.isError, undefined)
          assert.deepEqual(result.structuredContent, {
            warmQueries: [
              {
                lookup: 'avg-by-sensor',
                apiPath: 'plant/hall/avg',
                url: `${server.config.publicUrl}/oi-api/warm-queries/plant/hall/avg`,
                description: 'Average per sensor',
                columns: [
                  { name: 'sensor', type: 'string' },
                  { name: 'avg_value', type: 'real' },
                ],
                approvedBy: server.accounts.admin.name,
                approvedAt: new Date(current.approvals['avg-by-sensor']!.at).toISOString(),
                runnable: true,
              },
              {
                lookup: 'no-text',
                apiPath: null,
                url: `${server.config.publicUrl}/oi-api/warm-queries/no-text`,
                description: 'A warm query whose text was never saved',
                columns: [],
                approvedBy: server.accounts.admin.name,
                approvedAt: new Date(current.approvals['no-text']!.at).toISOString(),
                runnable: false,
                problem: 'it has no saved KQL text',
              },
            ],
          })
          assert.match(
            textOf(result),
            /^2 warm queries:\n- avg-by-sensor \(API path plant\/hall\/avg\): Average per sensor\n {2}columns: sensor:string, avg_value:real; approved by admin@/,
          )
          const filtered = await client.callTool({ name: 'list_warm_queries', arguments: { search: 'NEVER saved' } })
          assert.deepEqual(
            filtered.structuredContent!['warmQueries'].map((q: { lookup: string }) => q.lookup),
            ['no-text'],
          )
        })

        it('reads a warm query, as a tool and as a resource', async () => {
          const result = await client.callTool({ name: 'get_warm_query', arguments: { lookup: 'plant/hall/avg' } })
          assert.equal(result.structuredContent!['query'], 'Sensors | summarize avg_value = avg(value) by sensor | order by sensor asc')
          assert.equal(result.structuredContent!['lookup'], 'avg-by-sensor')
          assert.match(textOf(result), /KQL:\nSensors \| summarize avg_value/)
          const { resources } = await client.listResources()
          assert.deepEqual(
            resources.map((r) => [r.uri, r.name, r.mimeType]),
            [
              ['provenant://warm-queries/avg-by-sensor', 'avg-by-sensor', 'text/x-kql'],
              ['provenant://warm-queries/no-text', 'no-text', 'text/x-kql'],
            ],
          )
          const read = await client.readResource({ uri: 'provenant://warm-queries/avg-by-sensor' })
          assert.equal(read.contents.length, 1)
          assert.equal(read.contents[0]!.mimeType, 'text/x-kql')
          assert.match(
            read.contents[0]!.text!,
            /^\/\/ warm query avg-by-sensor, API path plant\/hall\/avg; approved by admin@\S+ at \S+Z\n\/\/ Average per sensor\nSensors \| summarize/,
          )

          // An unknown warm query is the SDK's "resource not found" for the revision, never an internal error (-32603).
          await assert.rejects(
            client.readResource({ uri: 'provenant://warm-queries/no-such-query' }),
            (error: { code?: number; message?: string }) => {
              assert.equal(error.code, new ResourceNotFoundError('provenant://warm-queries/no-such-query').code)
              assert.notEqual(error.code, -32603)
              assert.match(error.message ?? '', /no-such-query/)
              return true
            },
          )
        })

        it('runs a warm query: rows as structured content and a text table, with approver and approval time', async () => {
          const approval = (await server.services.config.current(server.workspace.id)).approvals['avg-by-sensor']!
          const result = await client.callTool({ name: 'run_warm_query', arguments: { lookup: 'avg-by-sensor' } })
          assert.deepEqual(result.structuredContent, {
            lookup: 'avg-by-sensor',
            columns: [
              { name: 'sensor', type: 'string' },
              { name: 'avg_value', type: 'real' },
            ],
            rows: [
              { sensor: 's0', avg_value: 3 },
              { sensor: 's1', avg_value: 4 },
              { sensor: 's2', avg_value: 5 },
            ],
            rowCount: 3,
            truncated: false,
            approvedBy: server.accounts.admin.name,
            approvedAt: new Date(approval.at).toISOString(),
          })
          assert.ok(textOf(result).includes('| sensor | avg_value |\n| ------ | --------- |\n| s0     | 3         |'))
          assert.match(textOf(result), /3 rows; complete\.$/)
        })

        it('caps rows at 100 by default and 1,000 at most, and says when it truncated', async () => {
          const byDefault = await client.callTool({ name: 'run_kql', arguments: { query: 'range x from 1 to 150 step 1' } })
          assert.equal(byDefault.structuredContent!['rowCount'], 100)
          assert.equal(byDefault.structuredContent!['truncated'], true)
          assert.match(textOf(byDefault), /100 rows shown; the result was TRUNCATED/)
          const two = await client.callTool({ name: 'run_warm_query', arguments: { lookup: 'avg-by-sensor', maxRows: 2 } })
          assert.deepEqual([two.structuredContent!['rowCount'], two.structuredContent!['truncated']], [2, true])
          const most = await client.callTool({ name: 'run_kql', arguments: { query: 'range x from 1 to 1200 step 1', maxRows: 1000 } })
          assert.deepEqual([most.structuredContent!['rowCount'], most.structuredContent!['truncated']], [1000, true])
          const complete = await client.callTool({ name: 'run_kql', arguments: { query: 'range x from 1 to 1000 step 1', maxRows: 1000 } })
          assert.deepEqual([complete.structuredContent!['rowCount'], complete.structuredContent!['truncated']], [1000, false])
          const tooMany = await client.callTool({ name: 'run_kql', arguments: { query: 'print 1', maxRows: 1001 } })
          assert.equal(tooMany.isError, true)
          assert.match(textOf(tooMany), /maxRows/)
        })

        it('tool errors come back as isError results the model can act on', async () => {
          const unknown = await client.callTool({ name: 'run_warm_query', arguments: { lookup: 'plant/nowhere' } })
          assert.equal(unknown.isError, true)
          assert.equal(textOf(unknown), 'Not found: no warm query has the lookup or API path "plant/nowhere"')
          const noText = await client.callTool({ name: 'run_warm_query', arguments: { lookup: 'no-text' } })
          assert.equal(textOf(noText), 'Invalid input: warm query "no-text" has no saved query text, so it cannot run')
          const badKql = await client.callTool({ name: 'run_kql', arguments: { query: 'Sensors\n| where value >' } })
          assert.equal(badKql.isError, true)
          assert.match(textOf(badKql), /^Invalid input: KQL error: .*line 2, column \d+/)
          const missing = await client.callTool({ name: 'run_warm_query', arguments: {} })
          assert.equal(missing.isError, true)
          assert.match(textOf(missing), /lookup/)
        })

        it('files a proposal that appears as open, says acceptance happens in the portal, and follows it', async () => {
          const lookup = `peak-${era}`
          const result = await client.callTool({
            name: 'propose_change',
            arguments: {
              rationale: 'Operators want the peak per sensor.',
              changes: [
                {
                  entity: 'warmQuery',
                  action: 'create',
                  lookup,
                  query: 'Sensors | summarize peak = max(value) by sensor',
                  description: 'Peak per sensor',
                },
              ],
            },
          })
          assert.equal(result.isError, undefined, textOf(result))
          const proposalId = result.structuredContent!['proposalId'] as string
          assert.match(proposalId, /^prop_/)
          assert.equal(result.structuredContent!['status'], 'open')
          assert.equal(
            result.structuredContent!['diff'],
            `+ warm query ${lookup}\n+   description: Peak per sensor\n+   query: Sensors | summarize peak = max(value) by sensor`,
          )
          assert.match(
            result.structuredContent!['message'],
            /is open\. It is not applied: a person with review rights .* must accept it in the portal/,
          )
          // the review link points at this proposal on the Proposals page (issue 18 item 5)
          assert.ok((result.structuredContent!['reviewUrl'] as string).endsWith(`/portal/proposals?proposal=${proposalId}#${proposalId}`))
          assert.ok((result.structuredContent!['message'] as string).includes(`/portal/proposals?proposal=${proposalId}#${proposalId}`))
          const stored = await server.services.proposals.get(server.workspace.id, proposalId)
          assert.equal(stored.status, 'open')
          assert.equal(stored.via, 'mcp')
          assert.equal(stored.author.name, server.accounts.analyst.name)
          assert.equal(
            (await server.services.config.current(server.workspace.id)).document.warmQueries.some((q) => q.lookup === lookup),
            false,
            'nothing is applied',
          )
          const open = await client.callTool({ name: 'list_proposals', arguments: { status: 'open', mine: true } })
          assert.ok(open.structuredContent!['proposals'].some((p: { proposalId: string }) => p.proposalId === proposalId))
          await server.services.proposalReview.accept(
            { accountId: server.accounts.approver.id, accountName: server.accounts.approver.name, role: 'approver' },
            server.workspace.id,
            proposalId,
          )
          const followed = await client.callTool({ name: 'get_proposal', arguments: { proposalId } })
          assert.equal(followed.structuredContent!['status'], 'accepted')
          assert.equal(followed.structuredContent!['decidedBy'], server.accounts.approver.name)
          const run = await client.callTool({ name: 'run_warm_query', arguments: { lookup } })
          assert.equal(run.structuredContent!['approvedBy'], server.accounts.approver.name)
          await applyAsAdmin(server, sensorConfig())
        })

        it('refuses an invalid proposal with a clear message', async () => {
          const bad = await client.callTool({
            name: 'propose_change',
            arguments: { rationale: 'x', changes: [{ entity: 'warmQuery', action: 'create', lookup: 'x', query: 'Sensors | where' }] },
          })
          assert.equal(bad.isError, true)
          assert.match(textOf(bad), /^Invalid input: changes\[0\]\.query: KQL error:/)
          const approve = await client.callTool({
            name: 'propose_change',
            arguments: { rationale: 'x', changes: [{ entity: 'warmQuery', action: 'approve', lookup: 'avg-by-sensor' }] },
          })
          assert.equal(approve.isError, true)
        })

        it("a token without a tool's right does not see it, and cannot call it by name", async () => {
          const readOnly = await connect(era, await server.token('analyst', { rights: ['mcp:use', 'warm-queries:read'] }))
          assert.deepEqual(
            (await readOnly.listTools()).tools.map((t) => t.name),
            ['list_warm_queries', 'get_warm_query', 'run_warm_query'],
          )
          const hidden = await readOnly
            .callTool({ name: 'run_kql', arguments: { query: 'print 1' } })
            .catch((error: Error) => ({ content: [{ type: 'text', text: error.message }], isError: true }))
          assert.equal(hidden.isError, true)
          assert.match(textOf(hidden), /run_kql/)
          const proposeOnly = await connect(era, await server.token('analyst', { rights: ['mcp:use', 'proposals:create'] }))
          assert.deepEqual(
            (await proposeOnly.listTools()).tools.map((t) => t.name),
            ['propose_change', 'get_proposal', 'list_proposals'],
          )
          // Without warm-queries:read no resources exist (the capability is not even declared).
          const listed = await proposeOnly.listResources().catch((error: Error) => ({ resources: [], error }))
          assert.deepEqual(listed.resources, [])
        })
      })
    }

    it('401 with the Bearer challenge without a valid token (raw requests and both clients)', async () => {
      for (const token of [undefined, 'not-a-jwt', `${analyst.slice(0, -4)}AAAA`]) {
        const response = await post(token, initialize)
        assert.equal(response.status, 401)
        assert.equal(response.headers.get('www-authenticate'), 'Bearer realm="oi-api"')
        assert.ok(!response.headers.get('www-authenticate')!.includes('resource_metadata'), 'no OAuth metadata is advertised')
      }
      const revoked = await server.services.access.createToken({
        workspaceId: server.workspace.id,
        accountId: server.accounts.analyst.id,
        name: 'gone',
        expires: '1h',
        createdBy: { id: server.accounts.analyst.id, name: server.accounts.analyst.name },
      })
      await server.services.access.revokeToken(server.workspace.id, revoked.record.id, {
        id: server.accounts.analyst.id,
        name: server.accounts.analyst.name,
        canRevokeOthers: false,
      })
      assert.equal((await post(revoked.token, initialize)).status, 401)
      for (const era of ERAS) {
        await assert.rejects(
          connectMcp(era, mcpUrl, { authorization: 'Bearer nope' }),
          (error: { code?: unknown; status?: unknown }) => error.status === 401 || error.code === 401,
          era,
        )
      }
    })

    it('a plain 403 without mcp:use, and 503 when MCP is switched off', async () => {
      const noMcp = await post(await server.token('analyst', { rights: ['warm-queries:read', 'queries:run'] }), initialize)
      assert.equal(noMcp.status, 403)
      assert.equal(noMcp.headers.get('www-authenticate'), null, 'no insufficient_scope challenge: no OAuth step-up exists')
      assert.match(errorMessage({ status: 403, headers: noMcp.headers, text: '', body: await noMcp.json() }), /lacks the right mcp:use/)
      assert.equal((await post(await server.token('viewer'), initialize)).status, 403, 'viewers have no MCP right')
      await applyAsAdmin(server, sensorConfig({ settings: { capabilities: { mcp: false } } }))
      try {
        const off = await post(analyst, initialize)
        assert.equal(off.status, 503)
        assert.match(((await off.json()) as { Messages: { Error: string } }).Messages.Error, /MCP is switched off/)
      } finally {
        await applyAsAdmin(server, sensorConfig())
      }
    })

    it('GET and DELETE are answered 405 at once, never with a hanging stream', async () => {
      for (const method of ['GET', 'DELETE']) {
        const response = await fetch(mcpUrl, {
          method,
          headers: { authorization: `Bearer ${analyst}`, accept: 'text/event-stream' },
          signal: AbortSignal.timeout(2000),
        })
        assert.equal(response.status, 405)
        assert.equal(response.headers.get('allow'), 'POST')
        assert.match(((await response.json()) as { Messages: { Error: string } }).Messages.Error, /takes POST only/)
      }
    })

    it('answers JSON in both eras, never an event stream, and mints no session id', async () => {
      const legacy = await post(analyst, initialize)
      assert.equal(legacy.status, 200)
      assert.match(legacy.headers.get('content-type')!, /^application\/json/)
      assert.equal(legacy.headers.get('mcp-session-id'), null)
      const meta = {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'curl', version: '1' },
      }
      const modern = await post(
        analyst,
        { jsonrpc: '2.0', id: 2, method: 'server/discover', params: { _meta: meta } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'server/discover' },
      )
      assert.equal(modern.status, 200)
      assert.match(modern.headers.get('content-type')!, /^application\/json/)
      const discovered = (await modern.json()) as { result: { supportedVersions?: string[]; serverInfo?: { name: string } } }
      assert.ok(JSON.stringify(discovered.result).includes('2026-07-28'), JSON.stringify(discovered))
      const mismatch = await post(
        analyst,
        { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'run_kql', arguments: { query: 'print 1' }, _meta: meta } },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'list_warm_queries' },
      )
      assert.equal(mismatch.status, 400, 'an Mcp-Name header that does not match the body is refused')
    })

    it('no API route or hidden path reaches proposal review', async () => {
      const document = (await server.api('GET', '/oi-api/openapi', { token: await server.token('admin') })).body as {
        paths: Record<string, unknown>
      }
      assert.deepEqual(
        Object.keys(document.paths).filter((p) => /proposal/i.test(p)),
        [],
      )
      for (const [method, path] of [
        ['POST', '/oi-api/proposals/x/accept'],
        ['POST', '/oi-api/mcp/accept'],
        ['PUT', '/oi-api/proposals/x'],
        ['POST', '/oi-api/proposals/x/reject'],
      ]) {
        const response = await server.api(method!, path!, { token: await server.token('admin'), body: {} })
        assert.equal(response.status, 404, `${method} ${path}`)
      }
    })

    describe('Origin allow-list and call records (the route on its own app, with a recording call recorder)', () => {
      let app: FastifyInstance
      let url: string
      const calls: CallRecord[] = []
      before(async () => {
        app = Fastify()
        registerErrorEnvelope(app)
        app.addHook('onRequest', async (request, reply) => {
          try {
            request.caller = await server.services.access.authenticate(request.headers.authorization)
          } catch (error) {
            if (error instanceof UnauthenticatedError) return reply.code(401).send({ HasError: true, Messages: { Error: error.message } })
            throw error
          }
          request.callRecorder = {
            record: async (_workspaceId, call) => {
              calls.push(call)
            },
          }
        })
        registerRoutes(
          app,
          mcpRoutes(apiServicesOf(server.services), {
            publicUrl: 'https://provenant.example.com',
            allowedOrigins: ['https://portal.example.com', 'not a url'],
          }),
        )
        url = `${await app.listen({ port: 0, host: '127.0.0.1' })}/mcp`
      })
      after(async () => {
        app.server.closeAllConnections()
        await app.close()
      })

      it('accepts requests without Origin and from allowed origins; refuses others with 403', async () => {
        for (const origin of [undefined, 'https://provenant.example.com', 'https://PORTAL.example.com']) {
          const client = await connect('legacy', analyst, origin ? { origin } : {}, url)
          assert.ok((await client.listTools()).tools.length > 0, String(origin))
        }
        for (const origin of [
          'https://evil.example.com',
          'http://portal.example.com',
          'https://portal.example.com:8443',
          'null',
          'not a url',
        ]) {
          const response = await fetch(url, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${analyst}`,
              origin,
              'content-type': 'application/json',
              accept: 'application/json, text/event-stream',
            },
            body: JSON.stringify(initialize),
          })
          assert.equal(response.status, 403, origin)
          assert.match(((await response.json()) as { Messages: { Error: string } }).Messages.Error, /not allowed on the MCP endpoint/)
        }
        for (const era of ERAS) {
          await assert.rejects(
            connect(era, analyst, { origin: 'https://evil.example.com' }, url),
            (error: { code?: unknown; status?: unknown }) => error.status === 403 || error.code === 403,
            era,
          )
        }
      })

      it("records every call, naming the tool and that an AI client acted for the token's owner", async () => {
        calls.length = 0
        const client = await connect('modern', analyst, {}, url)
        await client.callTool({ name: 'run_warm_query', arguments: { lookup: 'avg-by-sensor' } })
        await client.callTool({ name: 'list_warm_queries', arguments: {} })
        const toolCalls = calls.filter((c) => c.via?.tool !== undefined)
        assert.deepEqual(
          toolCalls.map((c) => [c.method, c.route, c.status, c.via, c.accountId]),
          [
            ['POST', '/mcp', 200, { kind: 'mcp', tool: 'run_warm_query' }, server.accounts.analyst.id],
            ['POST', '/mcp', 200, { kind: 'mcp', tool: 'list_warm_queries' }, server.accounts.analyst.id],
          ],
        )
        assert.ok(calls.every((c) => c.via?.kind === 'mcp' && c.tokenId !== undefined))
      })
    })
  })
}
