/**
 * @module
 * Connector leases on PostgreSQL: a session-level advisory lock per (workspace, connection), held on
 * a dedicated client for as long as the connector runs. When the holding process dies its session
 * ends, the lock goes with it, and another process's next try takes the connector over.
 */
import { createHash } from 'node:crypto'
import pg from 'pg'
import type { ConnectorLease, ConnectorLeases } from '../../domain/connectors/connector-supervisor.js'

/** The advisory-lock key of one connection: 64 bits of a digest, as a decimal string (int8). */
export function connectorLockKey(workspaceId: string, lookup: string): string {
  return createHash('sha256').update(`provenant-connector\n${workspaceId}\n${lookup}`).digest().readBigInt64BE(0).toString()
}

export function createPostgresConnectorLeases(databaseUrl: string, options: { keepAliveMs?: number } = {}): ConnectorLeases {
  const keepAliveMs = options.keepAliveMs ?? 10_000
  return {
    async tryAcquire(workspaceId, lookup): Promise<ConnectorLease | undefined> {
      const client = new pg.Client({
        connectionString: databaseUrl,
        application_name: 'provenant-connector-lease',
        keepAlive: true,
        connectionTimeoutMillis: 10_000,
      })
      let signalLost: () => void = () => {}
      const lost = new Promise<void>((resolve) => {
        signalLost = resolve
      })
      client.on('error', () => signalLost())
      client.on('end', () => signalLost())
      await client.connect()
      const key = connectorLockKey(workspaceId, lookup)
      let held = false
      try {
        held = (await client.query<{ held: boolean }>('SELECT pg_try_advisory_lock($1::bigint) AS held', [key])).rows[0]?.held === true
      } finally {
        if (!held) await client.end().catch(() => {})
      }
      if (!held) return undefined
      // A periodic round trip notices a dead session even when the socket stays silent.
      const ping = setInterval(() => {
        client.query('SELECT 1').catch(() => signalLost())
      }, keepAliveMs)
      ping.unref()
      let released = false
      return {
        lost,
        async release() {
          if (released) return
          released = true
          clearInterval(ping)
          await client.query('SELECT pg_advisory_unlock($1::bigint)', [key]).catch(() => {})
          await client.end().catch(() => {})
        },
      }
    },
  }
}
