/**
 * The secret-planting test (issue 6 item 1, design §11): a unique random secret is planted as
 * connection credentials through the CLI (stdin) and through the service, and a pull connector
 * fails with them against a source that refuses it. Then every operation of the OpenAPI
 * description, the description itself, the activity log's export in both shapes, a data export,
 * error paths, every portal page an administrator reaches and the CLI status commands are
 * exercised, and every response body, every log line, the export files and the raw database
 * (SQLite: the db, -wal and -shm files; PostgreSQL: every table's rows as text) are searched for
 * the secrets and their base64, base64url, hex and URL-encoded forms. Zero hits.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { platformContainer } from '../../src/domain/ledger/ledger-service.js'
import { signedIn } from '../portal/portal-client.js'
import { BACKENDS } from '../support/backends.js'
import { runCli, runCliInProcess } from '../support/cli.js'
import { eventually } from '../support/eventually.js'
import { applyAsAdmin, pushRows, sensorConfig, sensorRows } from '../support/fixtures.js'
import { sendRaw } from '../support/raw-http.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

/** A secret and the forms it could leak in. */
function formsOf(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8')
  return [
    secret,
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    bytes.toString('hex'),
    encodeURIComponent(secret),
  ]
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return []
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? filesUnder(full) : [full]
  })
}

/** A pull connection whose source refuses every attempt (port 1): its connector fails and retries. */
const FAILING_SOURCE = {
  lookup: 'plant-db',
  kind: 'postgres',
  table: 'PlantDb',
  columns: [
    { name: 'timestamp', type: 'datetime' },
    { name: 'value', type: 'real' },
  ],
  settings: {
    host: '127.0.0.1',
    port: 1,
    database: 'src',
    user: 'svc-reader',
    query: 'SELECT now() AS "timestamp", 1.0 AS value',
    cursorColumn: 'timestamp',
    intervalSeconds: 0.1,
  },
}

/**
 * "A failing connector": waits until the connector of `lookup` has failed at least twice since
 * `since` (so it has run with the planted credentials, which it reads from the vault on every
 * attempt), and returns what it shows: its status as admins see it (service and CLI) and its
 * activity-log decisions.
 */
async function exerciseFailingConnector(server: TestServer, lookup: string, since: number): Promise<string[]> {
  const status = await eventually(
    () => server.services.connectors.status(server.workspace.id),
    (all) => {
      const one = all.find((c) => c.lookup === lookup)
      return one?.state === 'backoff' && (one.lastErrorAt ?? 0) > since
    },
    'the failing connector',
  )
  const again = await eventually(
    () => server.services.connectors.status(server.workspace.id),
    (all) => (all.find((c) => c.lookup === lookup)?.lastErrorAt ?? 0) > (status.find((c) => c.lookup === lookup)!.lastErrorAt ?? 0),
    'a second failed attempt',
  )
  const failing = again.find((c) => c.lookup === lookup)!
  assert.match(failing.lastError ?? '', /ECONNREFUSED|connect/i)
  const store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
  const cli = await runCliInProcess(['connection', 'status', '--json', ...store])
  assert.equal(cli.code, 0, cli.stderr)
  assert.match(cli.stdout, /"state": "backoff"/)
  const { records } = await server.services.ledger.query(
    platformContainer(server.workspace.id),
    { entityType: 'data-connection' },
    { limit: 1000, offset: 0, order: 'asc' },
  )
  assert.ok(
    records.some((r) => r.actionType === 'connector-failed' && r.entityId === lookup),
    'the failure is recorded',
  )
  return [JSON.stringify(again), cli.stdout, cli.stderr, JSON.stringify(records)]
}

for (const backend of BACKENDS) {
  describe(`${backend}: a planted secret appears nowhere (design §11)`, () => {
    let server: TestServer
    let token: string
    const viaCli = `cli-S3cr3t-${randomBytes(18).toString('base64url')}`
    const viaService = `svc-S3cr3t-${randomBytes(18).toString('base64url')}`
    const needles = [...formsOf(viaCli), ...formsOf(viaService)]
    const texts: { where: string; text: string }[] = []
    const collect = (where: string, text: string) => texts.push({ where, text })
    let plantedAt = 0

    before(async () => {
      server = await startTestServer(backend, { connectors: { backoff: { initialMs: 100, maxMs: 300 }, leaseRetryMs: 200 } })
      const config = sensorConfig() as { connections: unknown[] }
      await applyAsAdmin(server, { ...config, connections: [...config.connections, FAILING_SOURCE] })
      await pushRows(server, 'sensors', sensorRows(10))
      token = await server.token('admin')
      const store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
      plantedAt = Date.now()
      const planted = await runCli(['connection', 'set-credentials', 'plant-db', ...store], {
        stdin: JSON.stringify({
          user: 'svc-reader',
          password: viaCli,
          connectionString: `postgres://svc-reader:${encodeURIComponent(viaCli)}@127.0.0.1:1/src`,
        }),
      })
      assert.equal(planted.code, 0, planted.stderr)
      collect('CLI set-credentials', planted.stdout + planted.stderr)
      await server.services.credentials.set(
        { id: server.accounts.admin.id, name: server.accounts.admin.name, via: 'portal' },
        server.workspace.id,
        'meters',
        { username: 'meter', password: viaService },
      )
    })
    after(() => server.stop())

    it('plants both secrets (the vault opens them) and runs a connector that fails with them', async () => {
      assert.equal((await server.runtime.credentialVault.reveal(server.workspace.id, 'plant-db'))?.['password'], viaCli)
      assert.equal((await server.runtime.credentialVault.reveal(server.workspace.id, 'meters'))?.['password'], viaService)
      for (const text of await exerciseFailingConnector(server, 'plant-db', plantedAt)) collect('failing connector', text)
    })

    it('calls every operation of the OpenAPI description, the exports in both shapes, a data export, error paths, the portal pages and the CLI status', async () => {
      const description = await sendRaw(server.baseUrl, 'GET', '/oi-api/openapi', { authorization: `Bearer ${token}` }, undefined, {
        eventStreamMs: 700,
      })
      assert.equal(description.status, 200)
      collect('GET /oi-api/openapi', description.text)
      const doc = JSON.parse(description.text) as { paths: Record<string, Record<string, unknown>> }
      const fill = (path: string) =>
        path
          .replace(/\{lookup\}|\{connection\}/g, 'sensors')
          .replace(/\{surface\}/g, 'hall')
          .replace(/\{[^}]+\}/g, 'x')
          .replace('/warm-queries/*', '/warm-queries/plant/hall/avg')
      let operations = 0
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const method of Object.keys(methods).map((m) => m.toUpperCase())) {
          const headers: Record<string, string> = { authorization: `Bearer ${token}`, accept: 'application/json, text/event-stream' }
          let body: string | undefined
          if (method !== 'GET' && method !== 'HEAD') {
            headers['content-type'] = 'application/json'
            body = path.endsWith('/mcp') ? JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) : '{}'
          }
          const target = fill(path)
          const response = await sendRaw(
            server.baseUrl,
            method,
            target,
            path.includes('eac-changes') ? { ...headers, 'last-event-id': '0' } : headers,
            body,
            { eventStreamMs: 700 },
          )
          assert.ok(response.status < 500, `${method} ${target}: ${response.status} ${response.text.slice(0, 200)}`)
          collect(`${method} ${target}`, response.text)
          operations++
        }
      }
      assert.ok(operations >= 20, `${operations} operations called`)

      // the activity log (where the credential decisions are), in both shapes and formats
      await server.api('POST', '/oi-api/provenance/events', {
        token,
        body: { ScopeKey: 'x', entityType: 'note', entityId: 'n1', actionType: 'noted' },
        unchecked: true,
      })
      for (const path of [
        '/oi-api/provenance/events/export?format=json',
        '/oi-api/provenance/events/export?format=csv',
        '/oi-api/provenance/events/export?scopeKey=x&format=csv',
        '/oi-api/audit-logs/x/events/export?format=json',
        '/oi-api/audit-logs/x/events/export?format=csv',
      ]) {
        const response = await sendRaw(server.baseUrl, 'GET', path, { authorization: `Bearer ${token}` }, undefined, { eventStreamMs: 700 })
        assert.equal(response.status, 200, `${path}: ${response.text.slice(0, 200)}`)
        collect(`GET ${path}`, response.text)
      }
      const platform = texts.find((t) => t.where === 'GET /oi-api/provenance/events/export?format=json')!.text
      assert.match(platform, /credentials-set/, 'the credential decisions are in the exported activity log')

      // a data export in both formats, downloaded
      for (const format of ['csv', 'jsonl']) {
        const created = await server.api('POST', '/oi-api/downloads/data-connections/sensors', {
          token,
          body: { format, from: '2025-01-01T00:00:00Z', to: '2027-01-01T00:00:00Z' },
        })
        assert.equal(created.status, 200, created.text)
        const url = new URL((created.body as { downloadUrl: string }).downloadUrl)
        const file = await sendRaw(server.baseUrl, 'GET', `${url.pathname}${url.search}`, {}, undefined, { eventStreamMs: 700 })
        assert.equal(file.status, 200)
        collect(`export ${format}`, file.text)
      }

      // error paths: no token, a bad token, unknown connection, a broken query
      for (const [method, path, headers, body] of [
        ['GET', '/oi-api/openapi', {}, undefined],
        ['GET', '/oi-api/openapi', { authorization: `Bearer ${token}x` }, undefined],
        [
          'POST',
          '/oi-api/ingest/data-connections/nope',
          { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          '[{"timestamp":"2026-01-01T00:00:00Z"}]',
        ],
        [
          'POST',
          '/oi-api/warm-queries',
          { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          '{"Query":"Sensors | where"}',
        ],
        ['GET', '/oi-api/no-such-route', { authorization: `Bearer ${token}` }, undefined],
      ] as const) {
        const response = await sendRaw(server.baseUrl, method, path, headers, body, { eventStreamMs: 700 })
        assert.ok(response.status >= 400 && response.status < 500, `${method} ${path}: ${response.status}`)
        collect(`error ${method} ${path}`, response.text)
      }

      // every portal page an administrator can reach by following links (GET only)
      const portal = await signedIn(server, 'admin')
      const seen = new Set<string>()
      const queue = ['/portal/']
      while (queue.length && seen.size < 60) {
        const path = queue.shift()!
        if (seen.has(path)) continue
        seen.add(path)
        const page = await portal.get(path)
        assert.ok(page.status < 500, `${path}: ${page.status}`)
        collect(`portal ${path}`, page.text)
        for (const [, href] of page.text.matchAll(/href="(\/portal\/[^"#]*)"/g)) {
          const link = href!.replace(/&amp;/g, '&')
          if (!seen.has(link) && !/sign-out/.test(link)) queue.push(link)
        }
      }
      assert.ok(seen.size >= 3, `${seen.size} portal pages`)

      // the CLI's status command
      const store = ['--data', server.config.dataDir, ...(server.config.databaseUrl ? ['--database-url', server.config.databaseUrl] : [])]
      const status = await runCliInProcess(['connection', 'credentials', ...store])
      assert.equal(status.code, 0, status.stderr)
      assert.match(status.stdout, /plant-db\s+set\s+connectionString,password,user/)
      collect('CLI credentials', status.stdout + status.stderr)
    })

    it('finds none of the secrets in any response, log line, export file or raw database file', async () => {
      for (const [i, line] of server.logLines.entries()) collect(`log line ${i}`, line)
      for (const file of filesUnder(server.config.exportDir)) collect(`export file ${file}`, readFileSync(file, 'latin1'))
      const raw: { where: string; bytes: Buffer }[] = []
      if (backend === 'sqlite') {
        for (const suffix of ['', '-wal', '-shm']) {
          const file = join(server.config.dataDir, `provenant.db${suffix}`)
          if (existsSync(file)) raw.push({ where: file, bytes: readFileSync(file) })
        }
        assert.ok(raw.length >= 1)
      } else {
        const client = new pg.Client({ connectionString: server.config.databaseUrl })
        await client.connect()
        try {
          const tables = (
            await client.query<{ schemaname: string; tablename: string }>(
              "SELECT schemaname, tablename FROM pg_tables WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
            )
          ).rows
          assert.ok(tables.some((t) => t.tablename === 'connection_credentials'))
          for (const t of tables) {
            const rows = await client.query<{ row: string }>(`SELECT t::text AS row FROM "${t.schemaname}"."${t.tablename}" t`)
            raw.push({ where: `table ${t.tablename}`, bytes: Buffer.from(rows.rows.map((r) => r.row).join('\n')) })
          }
        } finally {
          await client.end()
        }
      }
      const hits: string[] = []
      for (const { where, text } of texts)
        for (const needle of needles) if (text.includes(needle)) hits.push(`${where}: ${needle.slice(0, 12)}…`)
      for (const { where, bytes } of raw)
        for (const needle of needles) if (bytes.includes(Buffer.from(needle))) hits.push(`${where}: ${needle.slice(0, 12)}…`)
      assert.deepEqual(hits, [])
      // the search is real: it searched a good deal, and it finds a planted value where one is
      assert.ok(texts.length > 40, `${texts.length} texts searched`)
      assert.ok(server.logLines.length > 10)
      assert.ok(raw.reduce((n, r) => n + r.bytes.length, 0) > 10_000)
      const control = server.accounts.admin.name
      assert.ok(
        raw.some((r) => r.bytes.includes(Buffer.from(control))),
        `the raw search finds ${control}, which is stored in clear`,
      )
      assert.ok(
        texts.some((t) => t.text.includes('"password"') || t.text.includes('password,')),
        'the key names (not secret) do show up',
      )
    })

    it('an error message or log line that quotes a revealed secret is scrubbed (value-based redaction)', async () => {
      // What a connector's driver error does: quote the secret in its message. Here a 404 that names
      // the unknown connection from the path carries it.
      const response = await sendRaw(
        server.baseUrl,
        'POST',
        `/oi-api/ingest/data-connections/${viaCli}`,
        { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        '[]',
        { eventStreamMs: 700 },
      )
      assert.equal(response.status, 404)
      assert.match(response.text, /\[REDACTED\]/)
      assert.equal(response.text.includes(viaCli), false, response.text)
      server.runtime.app.log.error(
        { err: new Error(`connect ECONNREFUSED postgres://svc-reader:${viaCli}@127.0.0.1:1/src`) },
        `connector sensors failed with ${viaService}`,
      )
      const last = server.logLines.at(-1)!
      assert.match(last, /connector sensors failed with \[REDACTED\]/)
      assert.equal(last.includes(viaCli) || last.includes(viaService), false, last)
    })
  })
}
