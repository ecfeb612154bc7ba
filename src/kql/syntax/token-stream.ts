/**
 * @module
 * The parser's token plumbing (issue 19 item 6): lookahead over the on-demand lexer, "expected X,
 * found Y" errors with positions, and `list()`, the one reader of comma-separated (or `|`-separated)
 * lists the parsers use. Also the small token-level readers every part needs: names, type names,
 * column declarations, `name=value` operator parameters and wildcard names.
 */
import { KqlError, positionAt } from '../kql-error.js'
import { type KqlType, parseTypeName } from '../types.js'
import type * as A from './ast.js'
import { Lexer, type Token } from './lexer.js'

/** How `list()` reads: see there. */
export interface ListOptions {
  /** The list ends before this punctuation (not consumed) and may be empty. */
  readonly close?: string
  /** With `close`: a separator may follow the last item (`[1, 2, ]`). */
  readonly trailing?: boolean
  /** The separator; default `,`. */
  readonly separator?: string
}

export class TokenStream {
  private readonly lexer: Lexer
  private readonly buf: Token[] = []
  /** End offset of the last consumed token (for spans). */
  lastEnd = 0

  constructor(readonly text: string) {
    this.lexer = new Lexer(text)
  }

  peek(k = 0): Token {
    while (this.buf.length <= k) this.buf.push(this.lexer.next())
    return this.buf[k]!
  }

  advance(): Token {
    const t = this.peek()
    this.buf.shift()
    this.lastEnd = t.end
    return t
  }

  isPunct(text: string, k = 0): boolean {
    const t = this.peek(k)
    return t.kind === 'punct' && t.text === text
  }

  isIdent(text: string, k = 0): boolean {
    const t = this.peek(k)
    return t.kind === 'ident' && t.text === text
  }

  acceptPunct(text: string): boolean {
    if (!this.isPunct(text)) return false
    this.advance()
    return true
  }

  acceptIdent(text: string): boolean {
    if (!this.isIdent(text)) return false
    this.advance()
    return true
  }

  error(offset: number, detail: string, kind: 'syntax' | 'unsupported' = 'syntax'): KqlError {
    return new KqlError(kind, detail, positionAt(this.text, offset))
  }

  describe(t: Token): string {
    switch (t.kind) {
      case 'eof':
        return 'the end of the query'
      case 'string':
        return `the string ${JSON.stringify(t.text.length > 30 ? t.text.slice(0, 30) + '…' : t.text)}`
      case 'quotedIdent':
        return `['${t.text}']`
      default:
        return `'${t.text}'`
    }
  }

  /** "expected X, found Y" at the current token. */
  expected(what: string): KqlError {
    const t = this.peek()
    return this.error(t.start, `expected ${what}, found ${this.describe(t)}`)
  }

  expectPunct(text: string, context?: string): Token {
    if (!this.isPunct(text)) throw this.expected(`'${text}'${context ? ` ${context}` : ''}`)
    return this.advance()
  }

  expectKeyword(text: string, context?: string): Token {
    if (!this.isIdent(text)) throw this.expected(`'${text}'${context ? ` ${context}` : ''}`)
    return this.advance()
  }

  /** An identifier or `['quoted']` name. */
  expectName(what: string): { name: string; start: number; end: number } {
    const t = this.peek()
    if (t.kind === 'ident' || t.kind === 'quotedIdent') {
      this.advance()
      return { name: t.text, start: t.start, end: t.end }
    }
    throw this.expected(what)
  }

  isName(k = 0): boolean {
    const t = this.peek(k)
    return t.kind === 'ident' || t.kind === 'quotedIdent'
  }

  expectEnd(): void {
    if (this.peek().kind !== 'eof') throw this.expected('the end of the query')
  }

  /**
   * Reads the raw text between the parenthesis at the current token and its matching `)`,
   * bypassing the tokenizer (`datetime(2024-01-01 10:00)`, `guid(...)`), and consumes it.
   */
  rawParenContent(): { text: string; start: number } {
    const open = this.peek()
    if (open.kind !== 'punct' || open.text !== '(') throw this.expected("'('")
    this.buf.length = 0
    const s = this.text
    let i = open.end
    let depth = 1
    let quote = 0
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i)
      if (quote) {
        if (c === 92 /* \ */) i++
        else if (c === quote) quote = 0
        continue
      }
      if (c === 39 || c === 34) quote = c
      else if (c === 40) depth++
      else if (c === 41 && --depth === 0) break
    }
    if (i >= s.length) throw this.error(open.start, "expected ')' to close the literal, found the end of the query")
    this.lexer.pos = i + 1
    this.lastEnd = i + 1
    return { text: s.slice(open.end, i), start: open.end }
  }

  /**
   * Items separated by commas (or `separator`), read by `item`. Without `close`: one or more
   * items. With `close`: none or more, up to that punctuation, which the caller consumes.
   */
  list<T>(item: () => T, options: ListOptions = {}): T[] {
    const { close, trailing = false, separator = ',' } = options
    const items: T[] = []
    if (close !== undefined && trailing) {
      while (!this.isPunct(close)) {
        items.push(item())
        if (!this.acceptPunct(separator)) break
      }
      return items
    }
    if (close !== undefined && this.isPunct(close)) return items
    do items.push(item())
    while (this.acceptPunct(separator))
    return items
  }

  /** `( item, ... )`, possibly empty; `context` goes into the "expected ')'" error. */
  parenList<T>(item: () => T, closeContext?: string, openContext?: string): T[] {
    this.expectPunct('(', openContext)
    const items = this.list(item, { close: ')' })
    this.expectPunct(')', closeContext)
    return items
  }

  parseTypeName(): KqlType {
    const t = this.peek()
    if (t.kind === 'ident') {
      const type = parseTypeName(t.text)
      if (type) {
        this.advance()
        return type
      }
    }
    throw this.expected('a type name (bool, int, long, real, decimal, string, datetime, timespan, guid, dynamic)')
  }

  parseColumnDecl(): A.ColumnDecl {
    const name = this.expectName('a column name')
    this.expectPunct(':', `after column '${name.name}'`)
    const type = this.parseTypeName()
    return { start: name.start, end: this.lastEnd, name: name.name, type }
  }

  /**
   * `name=value` parameters before an operator's arguments. Only names in `allowed` (or `hint.*`)
   * are parameters, so `summarize n=count()` is not mistaken for one.
   */
  parseParams(allowed: readonly string[]): A.OperatorParam[] {
    const params: A.OperatorParam[] = []
    for (;;) {
      const t = this.peek()
      if (t.kind !== 'ident') break
      let name = t.text
      let k = 1
      if (name === 'hint' && this.isPunct('.', 1) && this.peek(2).kind === 'ident') {
        name = `hint.${this.peek(2).text}`
        k = 3
      } else if (!allowed.includes(name)) {
        break
      }
      if (!this.isPunct('=', k)) break
      for (let i = 0; i <= k; i++) this.advance()
      const v = this.peek()
      let value: A.OperatorParam['value']
      if (v.kind === 'ident') {
        value = v.text === 'true' ? true : v.text === 'false' ? false : v.text
      } else if (v.kind === 'string' || v.kind === 'quotedIdent') {
        value = v.text
      } else if (v.kind === 'long' || v.kind === 'real') {
        value = v.value as number | bigint
      } else if (v.kind === 'timespan') {
        value = v.value as bigint
      } else {
        throw this.expected(`a value for '${name}'`)
      }
      this.advance()
      params.push({ start: t.start, end: v.end, name, value, valueStart: v.start })
    }
    return params
  }

  /** Adjacent identifier and `*` tokens (`Table*`, `*Events`) as one name; undefined if no `*`. */
  tryWildcardName(): A.NameExpr | undefined {
    let k = 0
    let text = ''
    let end = this.peek().start
    let hasStar = false
    for (;;) {
      const t = this.peek(k)
      if (t.start !== end) break
      if (t.kind === 'ident') text += t.text
      else if (t.kind === 'punct' && t.text === '*') {
        text += '*'
        hasStar = true
      } else break
      end = t.end
      k++
    }
    if (!hasStar || k === 0) return undefined
    const start = this.peek().start
    for (let i = 0; i < k; i++) this.advance()
    return { kind: 'Name', start, end, name: text, quoted: false }
  }
}
