/**
 * @module
 * `provenant workspace create NAME | list`.
 */
import { type Command, configFrom, parse, table, UsageError, withServices } from '../cli-support.js'

export const workspaceCommand: Command = {
  name: 'workspace',
  summary: 'create and list workspaces',
  usage: `provenant workspace create NAME
provenant workspace list

  NAME   lower-case letters, digits and dashes (e.g. plant-a)`,
  async run(argv) {
    const { values, positionals } = parse(argv, {})
    const [action, name] = positionals
    await withServices(configFrom(values), async (services) => {
      if (action === 'create') {
        if (!name) throw new UsageError('workspace create needs a NAME')
        const workspace = await services.admin.createWorkspace(name)
        console.log(`created workspace ${workspace.name} (${workspace.id})`)
      } else if (action === 'list') {
        const all = await services.admin.listWorkspaces()
        console.log(
          table(
            ['NAME', 'ID', 'CREATED'],
            all.map((w) => [w.name, w.id, new Date(w.createdAt).toISOString()]),
          ),
        )
      } else {
        throw new UsageError(`unknown action "${action ?? ''}"; use create or list`)
      }
    })
  },
}
