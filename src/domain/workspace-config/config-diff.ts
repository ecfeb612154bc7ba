/**
 * @module
 * What a new configuration document changes compared with the current one, entity by entity.
 * The list is shown before applying and stored in the commit.
 */
import { deepEqual } from '../../shared/deep-equal.js'
import type { WorkspaceConfig } from './config-document.js'

export type ConfigEntity = 'connection' | 'surface' | 'warmQuery' | 'reasonCategory' | 'settings'

export interface ConfigChange {
  readonly entity: ConfigEntity
  /** The entity's lookup (or id for reason categories; `settings` for the settings block). */
  readonly id: string
  readonly action: 'added' | 'changed' | 'removed'
  /** For `changed`: the top-level fields that differ. */
  readonly fields?: readonly string[]
}

function diffList<T extends object>(
  entity: ConfigEntity,
  before: readonly T[],
  after: readonly T[],
  key: (item: T) => string,
): ConfigChange[] {
  const changes: ConfigChange[] = []
  const old = new Map(before.map((item) => [key(item), item]))
  const seen = new Set<string>()
  for (const item of after) {
    const id = key(item)
    seen.add(id)
    const previous = old.get(id)
    if (!previous) changes.push({ entity, id, action: 'added' })
    else if (!deepEqual(previous, item)) changes.push({ entity, id, action: 'changed', fields: changedFields(previous, item) })
  }
  for (const id of old.keys()) if (!seen.has(id)) changes.push({ entity, id, action: 'removed' })
  return changes
}

function changedFields(a: object, b: object): string[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)])
  return [...keys].filter((k) => !deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k])).sort()
}

export function diffConfig(before: WorkspaceConfig, after: WorkspaceConfig): ConfigChange[] {
  const changes = [
    ...diffList('connection', before.connections, after.connections, (c) => c.lookup),
    ...diffList('surface', before.surfaces, after.surfaces, (s) => s.lookup),
    ...diffList('warmQuery', before.warmQueries, after.warmQueries, (q) => q.lookup),
    ...diffList('reasonCategory', before.reasonCategories, after.reasonCategories, (r) => r.id),
  ]
  if (!deepEqual(before.settings, after.settings)) {
    changes.push({ entity: 'settings', id: 'settings', action: 'changed', fields: changedFields(before.settings, after.settings) })
  }
  return changes
}

/** One line per change, e.g. `+ connection plant-sensors`, `~ warmQuery hourly (query, description)`. */
export function describeChanges(changes: readonly ConfigChange[]): string[] {
  const sign = { added: '+', changed: '~', removed: '-' } as const
  return changes.map((c) => `${sign[c.action]} ${c.entity} ${c.id}${c.fields?.length ? ` (${c.fields.join(', ')})` : ''}`)
}
