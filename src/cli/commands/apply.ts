/**
 * @module
 * `provenant apply FILE`: validate a configuration document (YAML or JSON), show what changes, and
 * commit it (design §4). Nothing is half-applied: a bad file or a data-losing change is refused whole.
 */
import { readFileSync } from 'node:fs'
import { parseDocument } from 'yaml'
import { InvalidInputError } from '../../domain/errors.js'
import { describeChanges } from '../../domain/workspace-config/index.js'
import { type Command, configFrom, parse, resolveWorkspace, UsageError, withServices } from '../cli-support.js'

/** Parses YAML or JSON text (JSON is YAML); duplicate keys and syntax errors name the line. */
export function parseConfigText(text: string, source: string): unknown {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true })
  if (document.errors.length > 0) {
    throw new InvalidInputError(`${source} is not valid YAML/JSON:\n  ${document.errors.map((e) => e.message.split('\n')[0]).join('\n  ')}`)
  }
  return document.toJS({ maxAliasCount: 100 })
}

export const applyCommand: Command = {
  name: 'apply',
  summary: 'validate and commit a workspace configuration document',
  usage: `provenant apply FILE --account NAME [--message TEXT] [--dry-run] [--workspace W]

  FILE       YAML or JSON: connections, surfaces, warmQueries, reasonCategories, settings
             (see docs/configuration.md)
  --account  the account the commit is recorded for (editor, approver or admin; warm query
             changes need an approver or admin, who becomes their approver)
  --dry-run  validate and show the changes without committing`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      account: { type: 'string' },
      message: { type: 'string', short: 'm' },
      'dry-run': { type: 'boolean' },
      workspace: { type: 'string' },
    })
    const file = positionals[0]
    if (!file) throw new UsageError('apply needs a FILE')
    if (!values.account) throw new UsageError('apply needs --account NAME (the author of the commit)')
    let text: string
    try {
      text = readFileSync(file, 'utf8')
    } catch (error) {
      throw new UsageError(`cannot read ${file}: ${(error as Error).message}`)
    }
    const document = parseConfigText(text, file)
    await withServices(configFrom(values), async (services) => {
      const workspace = await resolveWorkspace(services, values.workspace)
      const account = await services.admin.accountByName(values.account!)
      const membership = await services.admin.membership(workspace.id, account.id)
      if (!membership) throw new UsageError(`${account.name} is not a member of workspace ${workspace.name}`)
      const result = await services.config.apply(
        workspace.id,
        { accountId: account.id, accountName: account.name, role: membership.role },
        document,
        {
          ...(values.message ? { message: values.message } : {}),
          dryRun: values['dry-run'] ?? false,
          workspaceName: workspace.name,
          via: 'cli',
        },
      )
      if (result.changes.length === 0) {
        console.log('no changes: the configuration is already in force')
        return
      }
      console.log(describeChanges(result.changes).join('\n'))
      if (result.commit) console.log(`committed ${result.commit.id} (#${result.commit.seq}) to ${workspace.name}`)
      else console.log('dry run: nothing committed')
    })
  },
}
