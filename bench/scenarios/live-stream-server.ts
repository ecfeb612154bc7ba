/**
 * @module
 * The server process of the live-stream benchmark (forked by live-stream.ts, so its CPU and RSS
 * are its own): the real runtime on SQLite with one push connection; answers `rss` over IPC.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pino from 'pino'
import { applyAsAdmin, createBenchRuntime, issueBenchToken, sensorConnection } from '../bench-server.js'

const dir = mkdtempSync(join(tmpdir(), 'provenant-bench-live-'))
const runtime = await createBenchRuntime(dir, pino({ level: 'silent' }))
const base = await runtime.app.listen({ port: 0, host: '127.0.0.1' })
const { services } = runtime
const workspace = await services.admin.createWorkspace('bench')
const admin = await services.admin.addAccount({ name: 'bench-admin', role: 'admin', workspaceId: workspace.id })
const viewer = await services.admin.addAccount({ name: 'bench-viewer', role: 'viewer', workspaceId: workspace.id })
const editor = await services.admin.addAccount({ name: 'bench-editor', role: 'editor', workspaceId: workspace.id })
await applyAsAdmin(services, workspace.id, admin, {
  connections: [sensorConnection('line', 'Line')],
  surfaces: [{ lookup: 'plant', connections: ['line'] }],
})
const tokenOf = (account: { id: string; name: string }) => issueBenchToken(services, workspace.id, account)

let peakRss = process.memoryUsage().rss
setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss)
}, 250).unref()

process.on('message', (message: unknown) => {
  if (message === 'rss') {
    peakRss = Math.max(peakRss, process.memoryUsage().rss)
    process.send!({ rss: process.memoryUsage().rss, peakRss, cpu: process.cpuUsage() })
  } else if (message === 'stop') {
    void runtime.close().finally(() => {
      rmSync(dir, { recursive: true, force: true })
      process.exit(0)
    })
  }
})
process.send!({ base, viewerToken: await tokenOf(viewer), ingestToken: await tokenOf(editor), rss: process.memoryUsage().rss })
