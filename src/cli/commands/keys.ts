/**
 * @module
 * `provenant keys rotate [--retire-old]` (design §11): re-seals every stored connection credential
 * under a new master key, one transaction per workspace, each recorded as a `master-key`/`rotated`
 * decision (key ids and counts only).
 *
 * - Key file (`<data>/master.key`): a new key is appended as the newest first; running servers
 *   re-read the file and use it at once. Older keys stay (they still open anything a process sealed
 *   in between) until `--retire-old`, which removes them once nothing is sealed under them.
 * - PROVENANT_MASTER_KEY: the operator gives the new key there and the old one in
 *   PROVENANT_MASTER_KEY_PREVIOUS; rotate re-seals under the new key. `--retire-old` only checks
 *   that nothing is left under the old key, after which PROVENANT_MASTER_KEY_PREVIOUS can go.
 */
import { addKeyToFile, loadMasterKeyring, retireOldKeysInFile } from '../../adapters/keys/master-key.js'
import { type Command, configFrom, parse, UsageError, withServices } from '../cli-support.js'

export const keysCommand: Command = {
  name: 'keys',
  summary: 'rotate the master key of connection credentials',
  usage: `provenant keys rotate [--retire-old]
provenant keys list

  rotate      with the key file <data>/master.key: adds a new key and re-seals every
              credential under it. With PROVENANT_MASTER_KEY: set the NEW key there and the
              old one in PROVENANT_MASTER_KEY_PREVIOUS, then rotate re-seals under the new key.
  --retire-old  afterwards, drop the older keys from the key file (only when no credential is
              sealed under them any more); with the environment, confirms the previous key
              can be removed.
  list        the ids of the master keys held (newest first) and where they come from.
  Back up the key file separately from the database: without it, credentials cannot be opened.`,
  async run(argv) {
    const { values, positionals } = parse(argv, { 'retire-old': { type: 'boolean' } })
    const [action] = positionals
    const config = configFrom(values)
    const env = { PROVENANT_MASTER_KEY: config.masterKey, PROVENANT_MASTER_KEY_PREVIOUS: config.masterKeyPrevious }
    if (action === 'list') {
      const ring = loadMasterKeyring({ dataDir: config.dataDir, env })
      const source = ring.source.kind === 'env' ? 'PROVENANT_MASTER_KEY (and _PREVIOUS)' : ring.source.path
      console.log(`master keys from ${source}, newest first: ${ring.ids().join(', ')}`)
      return
    }
    if (action !== 'rotate') throw new UsageError(`unknown action "${(action ?? '').slice(0, 40)}"; use rotate or list`)
    const ring = loadMasterKeyring({ dataDir: config.dataDir, env })
    if (ring.source.kind === 'file') {
      const added = addKeyToFile(ring.source.path)
      console.log(`added master key ${added.id} to ${ring.source.path}`)
    } else if (ring.ids().length < 2 && !values['retire-old']) {
      console.log(
        `note: only PROVENANT_MASTER_KEY is set; to rotate, set the new key there and the old one in PROVENANT_MASTER_KEY_PREVIOUS`,
      )
    }
    await withServices(config, async (services) => {
      const workspaces = await services.admin.listWorkspaces()
      const result = await services.credentials.resealAll(
        { id: 'cli', name: 'provenant CLI', via: 'cli' },
        workspaces.map((w) => w.id),
      )
      const names = new Map(workspaces.map((w) => [w.id, w.name]))
      const total = Object.values(result.resealed).reduce((a, b) => a + b, 0)
      for (const [id, count] of Object.entries(result.resealed)) console.log(`  ${names.get(id) ?? id}: ${count} re-sealed`)
      console.log(`re-sealed ${total} credential(s) under master key ${result.keyId}; ${result.alreadyCurrent} already under it`)
      if (result.unreadable.length) {
        for (const u of result.unreadable)
          console.error(
            `  cannot open ${names.get(u.workspaceId) ?? u.workspaceId}/${u.lookup}: sealed under master key ${u.keyId}, which is not held`,
          )
        process.exitCode = 1
      }
      if (values['retire-old']) {
        if (result.unreadable.length)
          throw new Error('not retiring older keys: some credentials are sealed under a key this process does not hold (see above)')
        if (ring.source.kind === 'file') {
          const retired = retireOldKeysInFile(ring.source.path)
          console.log(retired.length ? `retired master key(s) ${retired.join(', ')} from ${ring.source.path}` : 'no older keys to retire')
        } else {
          console.log('no credential is sealed under an older key: PROVENANT_MASTER_KEY_PREVIOUS can be removed from every process')
        }
      }
    })
  },
}
