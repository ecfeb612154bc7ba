/**
 * @module
 * Seeds the demo workspace on first start (`provenant serve --demo`, what `npm start` runs):
 * accounts for an administrator, an analyst and an approver with generated passwords, the demo
 * configuration, and a day of synthetic sensor readings. Does nothing once any workspace exists.
 */
import { randomBytes } from 'node:crypto'
import type { Services } from '../domain/services.js'
import { DEMO_CONFIG } from './demo-config.js'

export interface SeedResult {
  /** Lines to print: sign-in details and the command that mints a token. */
  readonly instructions: readonly string[]
}

const DEMO_ACCOUNTS = [
  { name: 'admin', role: 'admin', displayName: 'Demo Administrator' },
  { name: 'analyst', role: 'analyst', displayName: 'Demo Analyst' },
  { name: 'approver', role: 'approver', displayName: 'Demo Approver' },
] as const

export interface SeedOptions {
  readonly publicUrl: string
  /** Extra CLI arguments the operator must repeat (e.g. `--data DIR`). */
  readonly cliArgs: string
}

export async function seedDemo(services: Services, options: SeedOptions): Promise<SeedResult | undefined> {
  if ((await services.admin.listWorkspaces()).length > 0) return undefined
  const workspace = await services.admin.createWorkspace('demo')
  const passwords: string[] = []
  const accounts = []
  for (const spec of DEMO_ACCOUNTS) {
    const password = randomBytes(12).toString('base64url')
    accounts.push(await services.admin.addAccount({ ...spec, workspaceId: workspace.id, password }))
    passwords.push(`    ${spec.name.padEnd(9)} ${password}   (${spec.role})`)
  }
  const admin = accounts[0]!
  await services.config.apply(workspace.id, { accountId: admin.id, accountName: admin.name, role: 'admin' }, DEMO_CONFIG, { message: 'demo configuration' })
  return {
    instructions: [
      'Seeded the demo workspace "demo". Portal sign-in (shown once; change with `provenant account set-password`):',
      ...passwords,
      '',
      'Mint an API token (printed on stdout) and call a warm query:',
      `  TOKEN=$(./bin/provenant.js token create --account analyst --expires 8h${options.cliArgs})`,
      `  curl -H "Authorization: Bearer $TOKEN" ${options.publicUrl}/oi-api/warm-queries/plant/line-1/hourly-temperature`,
    ],
  }
}
