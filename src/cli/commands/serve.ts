/**
 * @module
 * `provenant serve`: run the server. With --demo, a demo workspace is seeded on first start.
 */
import { loadConfig } from '../../config/config.js'
import { seedDemo } from '../../demo/seed-demo.js'
import { createRuntime } from '../../main.js'
import { type Command, parse } from '../cli-support.js'

/** How long in-flight requests may take to finish after SIGTERM/SIGINT before they are cut off. */
export const SHUTDOWN_GRACE_MS = Number(process.env['PROVENANT_SHUTDOWN_GRACE_MS'] ?? 10_000)
/** How long the activity log flush and store close may take after that. */
const SHUTDOWN_FLUSH_MS = 20_000

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the API server and the portal',
  usage: `provenant serve [--port N] [--host H] [--public-url URL] [--demo] [--data DIR] [--database-url URL]

  --demo   on first start, create a demo workspace with accounts, connections, warm queries
           and synthetic data, and print how to sign in and mint a token; the sign-ins are
           kept in DATA/demo-sign-ins.txt (0600), which every later --demo start names`,
  async run(argv) {
    const { values } = parse(
      argv,
      {
        port: { type: 'string' },
        host: { type: 'string' },
        'public-url': { type: 'string' },
        demo: { type: 'boolean' },
      },
      false,
    )
    const config = loadConfig({
      ...(values.data ? { data: values.data } : {}),
      ...(values['database-url'] ? { databaseUrl: values['database-url'] } : {}),
      ...(values.port ? { port: values.port } : {}),
      ...(values.host ? { host: values.host } : {}),
      ...(values['public-url'] ? { publicUrl: values['public-url'] } : {}),
      ...(values.demo ? { demo: true } : {}),
    })
    const runtime = await createRuntime(config)
    const cliArgs = `${values.data ? ` --data ${values.data}` : ''}${values['database-url'] ? ' --database-url "$DATABASE_URL"' : ''}`
    const seeded = config.demo
      ? await seedDemo(runtime.services, { publicUrl: config.publicUrl, cliArgs, dataDir: config.dataDir })
      : undefined
    const address = await runtime.app.listen({ port: config.port, host: config.host })
    const store = config.databaseUrl ? 'PostgreSQL' : `SQLite in ${config.dataDir}`
    const lines = [
      '',
      `Provenant is running at ${address} (${store})`,
      `  API:     ${config.publicUrl}/oi-api/   (OpenAPI: ${config.publicUrl}/oi-api/openapi)`,
      `  Portal:  ${config.publicUrl}/portal/`,
      `  Health:  ${config.publicUrl}/healthz`,
    ]
    if (seeded) lines.push('', ...seeded.instructions)
    console.log(lines.join('\n'))

    // Graceful shutdown (decisions.md, "Runs at scale"): stop accepting (new requests on kept-alive
    // connections get a 503 with Connection: close), let in-flight requests finish for at most
    // SHUTDOWN_GRACE_MS, end SSE streams with a reason (change-stream.ts), then cut what is left;
    // then the group-commit queue is flushed and the stores are closed.
    let stopping = false
    const stop = (signal: string) => {
      if (stopping) return
      stopping = true
      runtime.app.log.warn({ signal, graceMs: SHUTDOWN_GRACE_MS }, 'shutting down: finishing in-flight requests')
      const force = setTimeout(() => {
        runtime.app.log.warn('shutdown: requests still open after the grace period are cut off')
        runtime.app.server.closeAllConnections()
      }, SHUTDOWN_GRACE_MS)
      force.unref()
      // A last resort when something cannot be closed at all (the exit code then says so).
      const hard = setTimeout(() => {
        runtime.app.log.error('shutdown did not complete; exiting')
        process.exit(1)
      }, SHUTDOWN_GRACE_MS + SHUTDOWN_FLUSH_MS)
      hard.unref()
      runtime.close().then(
        () => {
          clearTimeout(force)
          process.exit(0)
        },
        (error: unknown) => {
          runtime.app.log.error({ err: error }, 'error during shutdown')
          process.exit(1)
        },
      )
    }
    process.once('SIGTERM', () => stop('SIGTERM'))
    process.once('SIGINT', () => stop('SIGINT'))
  },
}
