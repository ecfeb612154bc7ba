/**
 * @module
 * `provenant connection …`: data connections' operational commands.
 */
import { type Command, UsageError } from '../cli-support.js'
import { CONNECTION_STATUS_USAGE, connectionStatus } from './connection-status.js'

export const connectionCommand: Command = {
  name: 'connection',
  summary: 'pull connectors\' status per data connection',
  usage: CONNECTION_STATUS_USAGE,
  async run(argv) {
    const [action, ...rest] = argv
    if (action === 'status') return connectionStatus(rest)
    throw new UsageError(`unknown action "${action ?? ''}"; use status`)
  },
}
