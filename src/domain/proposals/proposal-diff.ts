/**
 * @module
 * A proposal's diff against the configuration it was made on: per touched entity its state before
 * and after, the fields that differ, and a readable unified-diff-like text for the portal and for
 * AI clients. The `before` states are also what a later acceptance compares against to tell
 * whether the configuration moved underneath the proposal.
 */
import { deepEqual } from '../../shared/deep-equal.js'
import type { WorkspaceConfig } from '../workspace-config/index.js'
import { type ProposalEntity, type ProposedChange, readEntity } from './change-set.js'

export interface ProposalDiffEntry {
  readonly entity: ProposalEntity
  readonly id: string
  readonly action: 'added' | 'changed' | 'removed' | 'unchanged'
  /** Top-level fields that differ, sorted. */
  readonly fields: readonly string[]
  readonly before: Readonly<Record<string, unknown>> | null
  readonly after: Readonly<Record<string, unknown>> | null
}

export interface ProposalDiff {
  readonly entries: readonly ProposalDiffEntry[]
  /** `+`/`-` lines per entity, for people and models. */
  readonly text: string
}

const ENTITY_LABEL = {
  warmQuery: 'warm query',
} as const satisfies Record<ProposalEntity, string>

/** Field order in the text (the rest follow alphabetically). */
const FIELD_ORDER = ['lookup', 'path', 'description', 'query']

function fieldsOf(...states: (Readonly<Record<string, unknown>> | null)[]): string[] {
  const keys = new Set(states.flatMap((s) => (s ? Object.keys(s).filter((k) => s[k] !== undefined) : [])))
  return [...keys].sort((a, b) => {
    const ia = FIELD_ORDER.indexOf(a)
    const ib = FIELD_ORDER.indexOf(b)
    return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || a.localeCompare(b)
  })
}

function valueLines(sign: '+' | '-' | ' ', field: string, value: unknown): string[] {
  const text = typeof value === 'string' ? value : JSON.stringify(value)
  const [first = '', ...rest] = text.split('\n')
  const indent = ' '.repeat(field.length + 2)
  return [`${sign}   ${field}: ${first}`, ...rest.map((line) => `${sign}   ${indent}${line}`)]
}

function entryText(entry: ProposalDiffEntry): string[] {
  const sign = { added: '+', changed: '~', removed: '-', unchanged: '=' } as const
  const head = `${sign[entry.action]} ${ENTITY_LABEL[entry.entity]} ${entry.id}${entry.action === 'changed' ? ` (${entry.fields.join(', ')})` : entry.action === 'unchanged' ? ' (no change)' : ''}`
  const lines = [head]
  for (const field of fieldsOf(entry.before, entry.after)) {
    if (field === 'lookup') continue
    const before = entry.before?.[field]
    const after = entry.after?.[field]
    if (entry.action === 'changed' && deepEqual(before, after)) continue
    if (before !== undefined) lines.push(...valueLines('-', field, before))
    if (after !== undefined) lines.push(...valueLines('+', field, after))
  }
  return lines
}

/** The diff of `changes` taking `before` to `after` (the document with the changes applied). */
export function diffChangeSet(before: WorkspaceConfig, after: WorkspaceConfig, changes: readonly ProposedChange[]): ProposalDiff {
  const entries = changes.map((change): ProposalDiffEntry => {
    const was = readEntity(before, change) ?? null
    const will = readEntity(after, change) ?? null
    const action =
      was === null ? (will === null ? 'unchanged' : 'added') : will === null ? 'removed' : deepEqual(was, will) ? 'unchanged' : 'changed'
    const fields = action === 'changed' ? fieldsOf(was, will).filter((f) => !deepEqual(was?.[f], will?.[f])) : []
    return { entity: change.entity, id: change.lookup, action, fields, before: was, after: will }
  })
  return { entries, text: entries.flatMap(entryText).join('\n') }
}

/** One short line per entry, e.g. `+ warmQuery hourly, ~ warmQuery avg (query)`. */
export function summariseDiff(diff: ProposalDiff): string {
  const sign = { added: '+', changed: '~', removed: '-', unchanged: '=' } as const
  return diff.entries.map((e) => `${sign[e.action]} ${e.entity} ${e.id}${e.fields.length ? ` (${e.fields.join(', ')})` : ''}`).join(', ')
}
