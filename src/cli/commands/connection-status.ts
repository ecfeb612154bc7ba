/**
 * @module
 * `provenant connection status [--workspace NAME] [--json]`: the pull connectors' state per
 * connection (issue 6, item 2), read from the database the servers write it to.
 */
import type { ConnectionStatusView } from '../../domain/connectors/index.js'
import { configFrom, parse, resolveWorkspace, table, withServices } from '../cli-support.js'

export const CONNECTION_STATUS_USAGE = `provenant connection status [--workspace NAME] [--json]

  Shows every postgres and mqtt connection: state (starting, running, backoff, failed, stopped),
  last run, last success, rows ingested and rejected, and the last error (secrets removed).`

const iso = (ms: number | undefined) => (ms === undefined ? '-' : new Date(ms).toISOString().replace('.000Z', 'Z'))

export async function connectionStatus(argv: string[]): Promise<void> {
  const { values } = parse(argv, { workspace: { type: 'string' }, json: { type: 'boolean' } })
  await withServices(configFrom(values), async (services) => {
    const workspace = await resolveWorkspace(services, values.workspace)
    const statuses: ConnectionStatusView[] = await services.connectors.status(workspace.id)
    if (values.json) {
      console.log(
        JSON.stringify(
          statuses.map((s) => ({
            ...s,
            lastRunAt: iso(s.lastRunAt),
            lastSuccessAt: iso(s.lastSuccessAt),
            lastErrorAt: iso(s.lastErrorAt),
            updatedAt: iso(s.updatedAt),
          })),
          null,
          2,
        ),
      )
      return
    }
    if (statuses.length === 0) {
      console.log(`workspace ${workspace.name} has no postgres or mqtt connections`)
      return
    }
    console.log(
      table(
        ['CONNECTION', 'KIND', 'STATE', 'LAST RUN', 'LAST SUCCESS', 'ROWS', 'REJECTED', 'LAST ERROR'],
        statuses.map((s) => [
          s.lookup,
          s.kind,
          s.enabled ? s.state : `${s.state} (switched off)`,
          iso(s.lastRunAt),
          iso(s.lastSuccessAt),
          String(s.rowsIngested),
          String(s.rowsRejected),
          s.lastError ?? '-',
        ]),
      ),
    )
  })
}
