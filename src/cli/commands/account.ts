/**
 * @module
 * `provenant account add|list|set-password|set-role|disable|enable`.
 */
import { ROLES } from '../../domain/access/index.js'
import { type Command, configFrom, parse, readStdin, resolveWorkspace, table, UsageError, withServices } from '../cli-support.js'

export const accountCommand: Command = {
  name: 'account',
  summary: 'manage accounts and their roles',
  usage: `provenant account add NAME --role ROLE [--workspace W] [--display-name TEXT] [--password-stdin]
provenant account list [--workspace W]
provenant account set-password NAME          (reads the new password from stdin)
provenant account set-role NAME ROLE [--workspace W]
provenant account disable NAME | enable NAME

  ROLE   one of ${ROLES.join(', ')}
  Passwords are read from standard input, never from the command line.`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      role: { type: 'string' },
      workspace: { type: 'string' },
      'display-name': { type: 'string' },
      'password-stdin': { type: 'boolean' },
    })
    const [action, name, extra] = positionals
    await withServices(configFrom(values), async (services) => {
      switch (action) {
        case 'add': {
          if (!name) throw new UsageError('account add needs a NAME')
          if (!values.role) throw new UsageError(`account add needs --role (${ROLES.join(', ')})`)
          const workspace = await resolveWorkspace(services, values.workspace)
          const password = values['password-stdin'] ? (await readStdin()).replace(/\r?\n$/, '') : undefined
          const account = await services.admin.addAccount({
            name,
            role: values.role,
            workspaceId: workspace.id,
            ...(values['display-name'] ? { displayName: values['display-name'] } : {}),
            ...(password !== undefined ? { password } : {}),
          })
          console.log(`added account ${account.name} (${account.id}) as ${values.role} in ${workspace.name}`)
          return
        }
        case 'list': {
          const workspace = await resolveWorkspace(services, values.workspace)
          const members = await services.admin.listMembers(workspace.id)
          console.log(
            table(
              ['NAME', 'ROLE', 'DISPLAY NAME', 'STATUS', 'ID'],
              members.map(({ account, role }) => [
                account.name,
                role,
                account.displayName,
                account.disabled ? 'disabled' : 'active',
                account.id,
              ]),
            ),
          )
          return
        }
        case 'set-password': {
          if (!name) throw new UsageError('account set-password needs a NAME')
          const password = (await readStdin()).replace(/\r?\n$/, '')
          await services.admin.setPassword(name, password)
          console.log(`password of ${name} set`)
          return
        }
        case 'set-role': {
          if (!name || !extra) throw new UsageError('account set-role needs NAME and ROLE')
          const workspace = await resolveWorkspace(services, values.workspace)
          await services.admin.setRole(workspace.id, name, extra)
          console.log(`${name} is now ${extra} in ${workspace.name}`)
          return
        }
        case 'disable':
        case 'enable': {
          if (!name) throw new UsageError(`account ${action} needs a NAME`)
          await services.admin.setDisabled(name, action === 'disable')
          console.log(`${name} ${action}d`)
          return
        }
        default:
          throw new UsageError(`unknown action "${action ?? ''}"; use add, list, set-password, set-role, disable or enable`)
      }
    })
  },
}
