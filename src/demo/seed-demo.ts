/**
 * @module
 * Seeds the demo workspace on first start (`provenant serve --demo`, what `npm start` runs):
 * accounts for an administrator, an analyst and an approver with generated passwords, the demo
 * configuration, and a day of synthetic sensor readings. Does nothing once any workspace exists.
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
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
  /** Where the sign-ins file is written (0600), so they stay findable after the first start. */
  readonly dataDir: string
}

/** The demo's sign-ins, written once on the first start (0600) and named on every later `--demo` start. */
export const DEMO_SIGN_INS_FILE = 'demo-sign-ins.txt'

function resetHint(cliArgs: string): string {
  return `Reset a password: echo 'NEW-PASSWORD' | ./bin/provenant.js account set-password NAME${cliArgs}`
}

/** What a `--demo` start prints when the demo already exists: where its sign-ins are and how to reset one. */
function alreadySeeded(options: SeedOptions): SeedResult {
  const file = join(options.dataDir, DEMO_SIGN_INS_FILE)
  return {
    instructions: [
      existsSync(file)
        ? `The demo workspace "demo" exists. Its portal sign-ins are in ${file} (readable only by you);`
        : `The demo workspace "demo" exists; its sign-ins file ${file} is gone.`,
      `  ${resetHint(options.cliArgs)}`,
    ],
  }
}

export async function seedDemo(services: Services, options: SeedOptions): Promise<SeedResult | undefined> {
  if ((await services.admin.listWorkspaces()).length > 0) return alreadySeeded(options)
  const workspace = await services.admin.createWorkspace('demo')
  const passwords: string[] = []
  const accounts = []
  for (const spec of DEMO_ACCOUNTS) {
    const password = randomBytes(12).toString('base64url')
    accounts.push(await services.admin.addAccount({ ...spec, workspaceId: workspace.id, password }))
    passwords.push(`    ${spec.name.padEnd(9)} ${password}   (${spec.role})`)
  }
  const file = join(options.dataDir, DEMO_SIGN_INS_FILE)
  mkdirSync(options.dataDir, { recursive: true })
  writeFileSync(file, `Provenant demo portal sign-ins (${options.publicUrl}/portal/)\n${passwords.join('\n')}\n`, { mode: 0o600 })
  const admin = accounts[0]!
  await services.config.apply(workspace.id, { accountId: admin.id, accountName: admin.name, role: 'admin' }, DEMO_CONFIG, {
    message: 'demo configuration',
  })
  const readings = syntheticReadings(services.clock.now())
  for (let i = 0; i < readings.length; i += 5_000)
    await services.ingest.importRows(workspace.id, 'plant-sensors', readings.slice(i, i + 5_000))
  return {
    instructions: [
      `Seeded the demo workspace "demo" with ${readings.length} sensor readings of the last 24 hours.`,
      `Portal sign-in (also kept in ${file}, readable only by you):`,
      ...passwords,
      `  ${resetHint(options.cliArgs)}`,
      '',
      'Mint an API token (printed on stdout) and call a warm query:',
      `  TOKEN=$(./bin/provenant.js token create --account analyst --expires 8h${options.cliArgs})`,
      `  curl -H "Authorization: Bearer $TOKEN" ${options.publicUrl}/oi-api/warm-queries/plant/line-1/hourly-temperature`,
    ],
  }
}

/**
 * A day of readings, one per minute for four sensors on two lines: a daily temperature cycle with
 * noise, occasional pressure spikes marked "warn" and rare "fault" readings. Deterministic for a
 * given start time (a small linear congruential generator, not Math.random).
 */
export function syntheticReadings(now: number): Record<string, unknown>[] {
  let seed = 20_261_121
  const random = () => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31
    return seed / 2 ** 31
  }
  const sensors = [
    { sensor: 'TT-101', line: 'line-1', base: 21 },
    { sensor: 'TT-102', line: 'line-1', base: 23 },
    { sensor: 'TT-201', line: 'line-2', base: 19 },
    { sensor: 'TT-202', line: 'line-2', base: 20 },
  ]
  const end = Math.floor(now / 60_000) * 60_000
  const rows: Record<string, unknown>[] = []
  for (let t = end - 24 * 3_600_000; t < end; t += 60_000) {
    const hour = new Date(t).getUTCHours() + new Date(t).getUTCMinutes() / 60
    for (const s of sensors) {
      const temperature = s.base + 3 * Math.sin(((hour - 8) / 24) * 2 * Math.PI) + (random() - 0.5)
      const spike = random() < 0.01
      const pressure = 1.2 + (random() - 0.5) * 0.05 + (spike ? 0.4 : 0)
      const status = random() < 0.001 ? 'fault' : spike ? 'warn' : 'ok'
      rows.push({
        timestamp: new Date(t).toISOString(),
        sensor: s.sensor,
        line: s.line,
        temperature: Math.round(temperature * 100) / 100,
        pressure: Math.round(pressure * 1000) / 1000,
        status,
      })
    }
  }
  return rows
}
