/**
 * @module
 * `provenant token create|list|revoke`: the operator's way to mint and revoke tokens (the API has
 * no token endpoint; people use the portal's API Keys page).
 */
import type { TokenScopes } from '../../domain/access/caller.js'
import { API_RIGHTS } from '../../domain/access/rights.js'
import { type Command, configFrom, parse, resolveWorkspace, table, UsageError, withServices } from '../cli-support.js'

/** `scopeKeys=a,b;connections=c` → { scopeKeys: ['a','b'], connections: ['c'] } */
export function parseScopes(texts: readonly string[]): TokenScopes {
  const scopes: Record<string, string[]> = {}
  for (const part of texts
    .flatMap((t) => t.split(';'))
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [dimension, list] = part.split('=', 2)
    if (!list || !['scopeKeys', 'connections', 'surfaces'].includes(dimension!)) {
      throw new UsageError(`bad --scopes "${part}"; use scopeKeys=a,b or connections=x or surfaces=y (separate with ;)`)
    }
    scopes[dimension!] = [
      ...(scopes[dimension!] ?? []),
      ...list
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ]
  }
  return scopes
}

export const tokenCommand: Command = {
  name: 'token',
  summary: 'create, list and revoke API tokens',
  usage: `provenant token create --account NAME --expires DURATION [--rights a,b] [--scopes SPEC] [--name LABEL] [--workspace W]
provenant token list [--account NAME] [--workspace W]
provenant token revoke ID [--workspace W]

  DURATION  15m, 1h, 8h, 24h, 7d, 30d or a custom duration from 15m to 30d (e.g. 90m, 2d12h)
  --rights  a subset of the account's rights (default: all of them); rights are
            ${API_RIGHTS.join(', ')}
  --scopes  restrict the token: scopeKeys=a,b;connections=x,y;surfaces=z
  token create prints only the token on standard output (it is shown once and not stored).`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      account: { type: 'string' },
      expires: { type: 'string' },
      rights: { type: 'string' },
      scopes: { type: 'string', multiple: true },
      name: { type: 'string' },
      workspace: { type: 'string' },
    })
    const [action, id] = positionals
    await withServices(configFrom(values), async (services) => {
      const workspace = await resolveWorkspace(services, values.workspace)
      if (action === 'create') {
        if (!values.account) throw new UsageError('token create needs --account NAME')
        if (!values.expires) throw new UsageError('token create needs --expires (15m, 1h, 8h, 24h, 7d, 30d or a custom duration)')
        const account = await services.admin.accountByName(values.account)
        const { token } = await services.access.createToken({
          workspaceId: workspace.id,
          accountId: account.id,
          name: values.name ?? `cli token for ${account.name}`,
          expires: values.expires,
          ...(values.rights !== undefined
            ? {
                rights: values.rights
                  .split(',')
                  .map((r) => r.trim())
                  .filter(Boolean),
              }
            : {}),
          ...(values.scopes ? { scopes: parseScopes(values.scopes) } : {}),
          createdBy: { id: 'cli', name: 'provenant CLI' },
        })
        process.stdout.write(`${token}\n`)
      } else if (action === 'list') {
        const accountId = values.account ? (await services.admin.accountByName(values.account)).id : undefined
        const tokens = await services.access.listTokens(workspace.id, accountId)
        // Tokens hold the account id; operators know accounts by name (the id stays for scripts).
        const names = new Map((await services.admin.listMembers(workspace.id)).map((m) => [m.account.id, m.account.name]))
        const now = services.clock.now()
        const status = (t: (typeof tokens)[number]) => (t.revokedAt !== undefined ? 'revoked' : t.expiresAt <= now ? 'expired' : 'active')
        console.log(
          table(
            ['ID', 'NAME', 'ACCOUNT', 'ACCOUNT ID', 'STATUS', 'EXPIRES', 'LAST USED', 'RIGHTS'],
            tokens.map((t) => [
              t.id,
              t.name,
              names.get(t.accountId) ?? '(not a member)',
              t.accountId,
              status(t),
              new Date(t.expiresAt).toISOString(),
              t.lastUsedAt ? new Date(t.lastUsedAt).toISOString() : '-',
              t.rights.join(','),
            ]),
          ),
        )
      } else if (action === 'revoke') {
        if (!id) throw new UsageError('token revoke needs the token ID (see `provenant token list`)')
        const token = await services.access.revokeToken(workspace.id, id, { id: 'cli', name: 'provenant CLI', canRevokeOthers: true })
        console.log(`revoked token ${token.id} (${token.name})`)
      } else {
        throw new UsageError(`unknown action "${action ?? ''}"; use create, list or revoke`)
      }
    })
  },
}
