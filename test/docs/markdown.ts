/**
 * @module
 * Reads the repository's Markdown for the documentation suites: which files are documentation,
 * their fenced code blocks (with the `readme-test` marker of the line before, if any) and their
 * inline code spans and link targets.
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** README.md and every Markdown file under docs/, as repository-relative paths. */
export function documentationFiles(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f.split('\\').join('/')}`)
    .sort()
  return ['README.md', ...docs]
}

export function readDoc(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8')
}

export interface FencedBlock {
  readonly file: string
  /** 1-based line of the opening fence. */
  readonly line: number
  readonly language: string
  readonly code: string
  /** The text of a `<!-- readme-test: … -->` comment on the line right before the fence. */
  readonly marker: string | undefined
}

const MARKER = /^<!--\s*readme-test:\s*(.*?)\s*-->\s*$/

export function fencedBlocks(file: string): FencedBlock[] {
  const lines = readDoc(file).split('\n')
  const blocks: FencedBlock[] = []
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(\S*)\s*$/.exec(lines[i]!)
    if (!open) continue
    const end = lines.findIndex((l, j) => j > i && /^```\s*$/.test(l))
    if (end < 0) throw new Error(`${file}:${i + 1}: unclosed code fence`)
    const marker = i > 0 ? MARKER.exec(lines[i - 1]!)?.[1] : undefined
    blocks.push({ file, line: i + 1, language: open[1]!, code: lines.slice(i + 1, end).join('\n'), marker })
    i = end
  }
  return blocks
}

/** The text outside fenced blocks (so code spans are not confused with fences). */
export function prose(file: string): string {
  return readDoc(file).replace(/^```[\s\S]*?^```\s*$/gm, '')
}

export interface Span {
  readonly kind: 'code' | 'link'
  readonly text: string
  /** 1-based line, counted in the text outside fenced blocks (close enough to find it). */
  readonly line: number
}

/** Inline code spans (one line each) and Markdown link targets outside fenced blocks. */
export function spansAndLinks(file: string): Span[] {
  const text = prose(file)
  const lineOf = (index: number) => text.slice(0, index).split('\n').length
  return [
    ...[...text.matchAll(/`([^`\n]+)`/g)].map((m) => ({ kind: 'code' as const, text: m[1]!, line: lineOf(m.index) })),
    ...[...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => ({ kind: 'link' as const, text: m[1]!, line: lineOf(m.index) })),
  ]
}
