/**
 * @module
 * Hand-written recursive-descent parser for KQL with a Pratt parser for scalar expressions
 * (design §7). Every error is a KqlError('syntax') naming line, column, what was expected and
 * what was found; operators Kusto has but this engine does not are KqlError('unsupported').
 */
import { KqlError, positionAt } from '../kql-error.js'
import { canonLong, type Long, longNeg } from '../long.js'
import { type DynamicValue, type KqlType, type KqlValue, parseTypeName } from '../types.js'
import { notSupported, UNSUPPORTED_OPERATORS, UNSUPPORTED_SOURCES } from '../unsupported.js'
import { formatDateTime, formatTimespan, parseDateTime, parseTimespan } from '../values.js'
import type * as A from './ast.js'
import { Lexer, type Token } from './lexer.js'
import { COLUMN_TERM_OP, searchToWhere } from './search-predicate.js'

/** Binary operators written as words, with or without a leading `!` (string operators). */
const WORD_OPERATORS = new Set([
  'contains',
  'contains_cs',
  'has',
  'has_cs',
  'hasprefix',
  'hasprefix_cs',
  'hassuffix',
  'hassuffix_cs',
  'startswith',
  'startswith_cs',
  'endswith',
  'endswith_cs',
  'like',
  'like_cs',
])
/** Legacy spellings of the negated string operators. */
const LEGACY_NEGATIONS: Readonly<Record<string, string>> = {
  notcontains: '!contains',
  notcontainscs: '!contains_cs',
  nothas: '!has',
  nothascs: '!has_cs',
  containscs: 'contains_cs',
  hascs: 'has_cs',
  notlike: '!like',
  notlikecs: '!like_cs',
  likecs: 'like_cs',
}

/** Deepest expression nesting accepted (parentheses, calls, unary operators). */
const MAX_NESTING = 256
/** Longest pipeline accepted (binding and running recurse along it). */
const MAX_PIPELINE = 2000

const BP_OR = 10
const BP_AND = 20
const BP_COMPARE = 30
const BP_ADD = 40
const BP_MUL = 50
const BP_UNARY = 60

const TYPED_LITERALS = new Set([
  'bool',
  'boolean',
  'int',
  'int32',
  'long',
  'int64',
  'real',
  'double',
  'float',
  'decimal',
  'datetime',
  'date',
  'timespan',
  'time',
  'guid',
  'uuid',
  'uniqueid',
  'dynamic',
])

const GUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/

/** Parses a whole query text into statements. Throws KqlError on the first error. */
export function parseQuery(text: string): A.Script {
  return new Parser(text).parseScript()
}

/** Parses one scalar expression (tests and tools). */
export function parseExpression(text: string): A.Expr {
  const p = new Parser(text)
  const e = p.parsePipeExpr()
  p.expectEnd()
  return e
}

class Parser {
  private readonly lexer: Lexer
  private readonly buf: Token[] = []
  /** End offset of the last consumed token (for spans). */
  private lastEnd = 0
  /** While reading a `search` predicate: `Column:"term"` is a column term. */
  private inSearch = false

  constructor(private readonly text: string) {
    this.lexer = new Lexer(text)
  }

  // -------------------------------------------------------------------------------------------
  // Token plumbing
  // -------------------------------------------------------------------------------------------

  private peek(k = 0): Token {
    while (this.buf.length <= k) this.buf.push(this.lexer.next())
    return this.buf[k]!
  }

  private advance(): Token {
    const t = this.peek()
    this.buf.shift()
    this.lastEnd = t.end
    return t
  }

  private isPunct(text: string, k = 0): boolean {
    const t = this.peek(k)
    return t.kind === 'punct' && t.text === text
  }

  private isIdent(text: string, k = 0): boolean {
    const t = this.peek(k)
    return t.kind === 'ident' && t.text === text
  }

  private acceptPunct(text: string): boolean {
    if (!this.isPunct(text)) return false
    this.advance()
    return true
  }

  private acceptIdent(text: string): boolean {
    if (!this.isIdent(text)) return false
    this.advance()
    return true
  }

  private error(offset: number, detail: string, kind: 'syntax' | 'unsupported' = 'syntax'): KqlError {
    return new KqlError(kind, detail, positionAt(this.text, offset))
  }

  private describe(t: Token): string {
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
  private expected(what: string): KqlError {
    const t = this.peek()
    return this.error(t.start, `expected ${what}, found ${this.describe(t)}`)
  }

  private expectPunct(text: string, context?: string): Token {
    if (!this.isPunct(text)) throw this.expected(`'${text}'${context ? ` ${context}` : ''}`)
    return this.advance()
  }

  private expectKeyword(text: string, context?: string): Token {
    if (!this.isIdent(text)) throw this.expected(`'${text}'${context ? ` ${context}` : ''}`)
    return this.advance()
  }

  /** An identifier or `['quoted']` name. */
  private expectName(what: string): { name: string; start: number; end: number } {
    const t = this.peek()
    if (t.kind === 'ident' || t.kind === 'quotedIdent') {
      this.advance()
      return { name: t.text, start: t.start, end: t.end }
    }
    throw this.expected(what)
  }

  private isName(k = 0): boolean {
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
  private rawParenContent(): { text: string; start: number } {
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

  // -------------------------------------------------------------------------------------------
  // Statements
  // -------------------------------------------------------------------------------------------

  parseScript(): A.Script {
    const statements: A.Statement[] = []
    for (;;) {
      while (this.acceptPunct(';')) {
        /* empty statements are allowed */
      }
      if (this.peek().kind === 'eof') break
      statements.push(this.parseStatement())
      if (this.acceptPunct(';')) continue
      if (this.peek().kind !== 'eof') {
        const t = this.peek()
        if (t.kind === 'punct' && t.text === '|') throw this.expected('a tabular operator after the previous expression')
        throw this.expected("'|', ';' or the end of the query")
      }
    }
    if (statements.length === 0) throw this.error(0, 'expected a query, found an empty text')
    return { start: 0, end: this.text.length, statements }
  }

  private parseStatement(): A.Statement {
    const t = this.peek()
    if (t.kind === 'ident') {
      if (t.text === 'let' && this.isName(1)) return this.parseLet()
      if (
        t.text === 'set' &&
        this.peek(1).kind === 'ident' &&
        (this.isPunct('=', 2) || this.isPunct(';', 2) || this.peek(2).kind === 'eof' || this.isPunct('.', 2))
      ) {
        return this.parseSet()
      }
      if (t.text === 'declare' && this.isIdent('query_parameters', 1)) return this.parseDeclare()
      if (t.text === 'declare' && this.isIdent('pattern', 1)) return this.parsePattern()
      if (t.text === 'alias' && this.isIdent('database', 1))
        throw this.error(t.start, "'alias database' statements are not supported", 'unsupported')
      if (t.text === 'restrict' && this.isIdent('access', 1))
        throw this.error(t.start, "'restrict access' statements are not supported", 'unsupported')
    }
    const expr = this.parsePipeExpr()
    return { kind: 'Query', start: t.start, end: this.lastEnd, expr }
  }

  private parseLet(): A.LetStatement {
    const start = this.advance().start
    const name = this.expectName('a name after let')
    this.expectPunct('=', `after 'let ${name.name}'`)
    let value: A.Expr | A.Lambda
    if (this.isIdent('view') && this.isPunct('(', 1)) {
      const viewStart = this.advance().start
      value = this.parseLambda(viewStart, true)
    } else if (this.looksLikeLambda()) {
      value = this.parseLambda(this.peek().start, false)
    } else {
      value = this.parsePipeExpr()
    }
    return { kind: 'Let', start, end: this.lastEnd, name: name.name, nameStart: name.start, value }
  }

  /** `(` `)` `{`, or `(` name `:` starts a function definition. */
  private looksLikeLambda(): boolean {
    if (!this.isPunct('(')) return false
    if (this.isPunct(')', 1)) return this.isPunct('{', 2)
    return this.isName(1) && this.isPunct(':', 2)
  }

  private parseLambda(start: number, isView: boolean): A.Lambda {
    this.expectPunct('(')
    const params: A.Param[] = []
    if (!this.isPunct(')')) {
      for (;;) {
        params.push(this.parseParam())
        if (!this.acceptPunct(',')) break
      }
    }
    this.expectPunct(')', 'to close the parameter list')
    this.expectPunct('{', 'to start the function body')
    const body: A.Statement[] = []
    for (;;) {
      while (this.acceptPunct(';')) {
        /* empty */
      }
      if (this.isPunct('}')) break
      const t = this.peek()
      if (t.kind === 'ident' && t.text === 'let' && this.isName(1)) body.push(this.parseLet())
      else body.push({ kind: 'Query', start: t.start, expr: this.parsePipeExpr(), end: this.lastEnd })
      if (!this.acceptPunct(';') && !this.isPunct('}')) throw this.expected("';' or '}'")
    }
    this.expectPunct('}')
    if (body.length === 0 || body[body.length - 1]!.kind !== 'Query') {
      throw this.error(this.lastEnd - 1, 'a function body must end with an expression')
    }
    return { kind: 'Lambda', start, end: this.lastEnd, params, body, isView }
  }

  private parseParam(): A.Param {
    const name = this.expectName('a parameter name')
    this.expectPunct(':', `after parameter '${name.name}'`)
    let type: A.ParamType
    if (this.isPunct('(')) {
      this.advance()
      const columns: A.ColumnDecl[] = []
      let open = false
      if (this.acceptPunct('*')) {
        open = true
      } else {
        for (;;) {
          if (this.acceptPunct('*')) {
            open = true
            break
          }
          columns.push(this.parseColumnDecl())
          if (!this.acceptPunct(',')) break
        }
      }
      this.expectPunct(')', 'to close the tabular parameter schema')
      type = { kind: 'tabular', columns, open }
    } else {
      type = { kind: 'scalar', type: this.parseTypeName() }
    }
    let defaultValue: A.Expr | undefined
    if (this.acceptPunct('=')) defaultValue = this.parseExpr()
    return { start: name.start, end: this.lastEnd, name: name.name, type, defaultValue }
  }

  private parseTypeName(): KqlType {
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

  private parseColumnDecl(): A.ColumnDecl {
    const name = this.expectName('a column name')
    this.expectPunct(':', `after column '${name.name}'`)
    const type = this.parseTypeName()
    return { start: name.start, end: this.lastEnd, name: name.name, type }
  }

  private parseSet(): A.SetStatement {
    const start = this.advance().start
    let name = this.advance().text
    while (this.acceptPunct('.')) name += '.' + this.expectName('an option name').name
    let value: A.Expr | undefined
    if (this.acceptPunct('=')) {
      // option values are literals or bare words
      const t = this.peek()
      if (t.kind === 'eof' || (t.kind === 'punct' && t.text === ';')) throw this.expected('an option value')
      value = this.parsePrimary()
    }
    return { kind: 'Set', start, end: this.lastEnd, name, ...(value ? { value } : {}) }
  }

  private parsePattern(): A.PatternStatement {
    const start = this.advance().start
    this.advance()
    const name = this.expectName('the pattern name').name
    if (!this.acceptPunct('=')) return { kind: 'Pattern', start, end: this.lastEnd, name, params: [] }
    const stringParam = (what: string): string => {
      const n = this.expectName(what).name
      this.expectPunct(':', `after '${n}'`)
      if (this.parseTypeName() !== 'string') throw this.error(this.lastEnd, 'pattern arguments are strings')
      return n
    }
    this.expectPunct('(', 'to start the pattern arguments')
    const params: string[] = []
    for (;;) {
      params.push(stringParam('an argument name'))
      if (!this.acceptPunct(',')) break
    }
    this.expectPunct(')', 'to close the pattern arguments')
    let pathName: string | undefined
    if (this.acceptPunct('[')) {
      pathName = stringParam('the path name')
      this.expectPunct(']', 'to close the pattern path')
    }
    this.expectPunct('{', 'to start the pattern definitions')
    const definitions: A.PatternDefinition[] = []
    const stringValue = (what: string): string => {
      const t = this.peek()
      if (t.kind !== 'string') throw this.expected(what)
      this.advance()
      return t.text
    }
    while (!this.isPunct('}')) {
      const defStart = this.peek().start
      this.expectPunct('(', 'to start the argument values')
      const args: string[] = []
      for (;;) {
        args.push(stringValue('a string argument value'))
        if (!this.acceptPunct(',')) break
      }
      this.expectPunct(')', 'to close the argument values')
      let path: string | undefined
      if (this.acceptPunct('.')) {
        // .["value"] reads as a bracket-quoted name; .[ "value" ] as punctuation around a string
        const t = this.peek()
        if (t.kind === 'quotedIdent' || t.kind === 'ident') path = this.advance().text
        else {
          this.expectPunct('[', "for the path value: .['value']")
          path = stringValue('a string path value')
          this.expectPunct(']', 'to close the path value')
        }
      }
      this.expectPunct('=', 'before the pattern body')
      this.expectPunct('{', 'to start the pattern body')
      const body = this.parsePipeExpr()
      this.acceptPunct(';')
      this.expectPunct('}', 'to close the pattern body')
      this.expectPunct(';', 'after a pattern definition')
      definitions.push({ args, ...(path !== undefined ? { path } : {}), body, start: defStart, end: this.lastEnd })
    }
    this.expectPunct('}', 'to close the pattern definitions')
    return { kind: 'Pattern', start, end: this.lastEnd, name, params, ...(pathName ? { pathName } : {}), definitions }
  }

  private parseDeclare(): A.DeclareParametersStatement {
    const start = this.advance().start
    this.advance()
    this.expectPunct('(')
    const params: A.Param[] = []
    if (!this.isPunct(')')) {
      for (;;) {
        params.push(this.parseParam())
        if (!this.acceptPunct(',')) break
      }
    }
    this.expectPunct(')')
    return { kind: 'DeclareParameters', start, end: this.lastEnd, params }
  }

  // -------------------------------------------------------------------------------------------
  // Expressions
  // -------------------------------------------------------------------------------------------

  /** An expression followed by any number of `| operator`. */
  parsePipeExpr(): A.Expr {
    let e = this.parseExpr()
    let operators = 0
    while (this.isPunct('|')) {
      if (++operators > MAX_PIPELINE)
        throw this.error(this.peek().start, `a pipeline may have at most ${MAX_PIPELINE} operators`, 'unsupported')
      this.advance()
      const op = this.parseOperator()
      e = { kind: 'Pipe', start: e.start, end: this.lastEnd, source: e, op }
    }
    return e
  }

  /** Nesting depth of expressions being parsed: a guard against stack exhaustion. */
  private depth = 0

  parseExpr(minBp = 0): A.Expr {
    if (++this.depth > MAX_NESTING) {
      throw this.error(this.peek().start, `the query is nested more than ${MAX_NESTING} levels deep`, 'unsupported')
    }
    try {
      return this.parseExprAt(minBp)
    } finally {
      this.depth--
    }
  }

  private parseExprAt(minBp: number): A.Expr {
    let left = this.parsePrefix()
    for (;;) {
      const op = this.peekInfix()
      if (!op || op.bp <= minBp) break
      const opStart = this.peek().start
      for (let i = 0; i < op.tokens; i++) this.advance()
      if (op.op === 'between' || op.op === '!between') {
        left = this.parseBetween(left, op.op === '!between')
        continue
      }
      if (op.op === 'in' || op.op === '!in' || op.op === 'in~' || op.op === '!in~' || op.op === 'has_any' || op.op === 'has_all') {
        const items = this.parseParenList(`after '${op.op}'`)
        left = { kind: 'In', start: left.start, end: this.lastEnd, op: op.op, left, items }
        continue
      }
      const right = this.parseExpr(op.bp)
      left = { kind: 'Binary', start: left.start, end: right.end, op: op.op, opStart, left, right }
    }
    return left
  }

  /** The infix operator at the current position, with its binding power and token count. */
  private peekInfix(): { op: string; bp: number; tokens: number } | undefined {
    const t = this.peek()
    if (t.kind === 'punct') {
      switch (t.text) {
        case '==':
        case '!=':
        case '<':
        case '<=':
        case '>':
        case '>=':
        case '=~':
        case '!~':
          return { op: t.text, bp: BP_COMPARE, tokens: 1 }
        case '<>':
          return { op: '!=', bp: BP_COMPARE, tokens: 1 }
        case '+':
        case '-':
          return { op: t.text, bp: BP_ADD, tokens: 1 }
        case '*':
        case '/':
        case '%':
          return { op: t.text, bp: BP_MUL, tokens: 1 }
        case '!': {
          // !contains, !has, !in, !in~, !between, !startswith ... (written without a space)
          const n = this.peek(1)
          if (n.kind !== 'ident' || n.start !== t.end) return undefined
          if (WORD_OPERATORS.has(n.text) || n.text === 'between' || n.text === 'has_any' || n.text === 'has_all') {
            if (n.text === 'has_any' || n.text === 'has_all') return undefined
            return { op: '!' + n.text, bp: BP_COMPARE, tokens: 2 }
          }
          if (n.text === 'in') {
            const tilde = this.peek(2)
            if (tilde.kind === 'punct' && tilde.text === '~' && tilde.start === n.end) return { op: '!in~', bp: BP_COMPARE, tokens: 3 }
            return { op: '!in', bp: BP_COMPARE, tokens: 2 }
          }
          return undefined
        }
        default:
          return undefined
      }
    }
    if (t.kind !== 'ident') return undefined
    switch (t.text) {
      case 'and':
        return { op: 'and', bp: BP_AND, tokens: 1 }
      case 'or':
        return { op: 'or', bp: BP_OR, tokens: 1 }
      case 'in': {
        const tilde = this.peek(1)
        if (tilde.kind === 'punct' && tilde.text === '~' && tilde.start === t.end) return { op: 'in~', bp: BP_COMPARE, tokens: 2 }
        return this.isPunct('(', 1) ? { op: 'in', bp: BP_COMPARE, tokens: 1 } : undefined
      }
      case 'has_any':
      case 'has_all':
        return this.isPunct('(', 1) ? { op: t.text, bp: BP_COMPARE, tokens: 1 } : undefined
      case 'between':
        return this.isPunct('(', 1) ? { op: 'between', bp: BP_COMPARE, tokens: 1 } : undefined
      case 'matches':
        return this.isIdent('regex', 1) ? { op: 'matches regex', bp: BP_COMPARE, tokens: 2 } : undefined
      default: {
        if (WORD_OPERATORS.has(t.text)) return { op: t.text, bp: BP_COMPARE, tokens: 1 }
        const legacy = LEGACY_NEGATIONS[t.text]
        if (legacy) return { op: legacy, bp: BP_COMPARE, tokens: 1 }
        return undefined
      }
    }
  }

  private parseBetween(left: A.Expr, negated: boolean): A.BetweenExpr {
    this.expectPunct('(', "after 'between'")
    const low = this.parseExpr()
    this.expectPunct('..', "between the bounds of 'between' (a .. b)")
    const high = this.parseExpr()
    this.expectPunct(')', "to close 'between'")
    return { kind: 'Between', start: left.start, end: this.lastEnd, negated, left, low, high }
  }

  /** `( item, item, ... )`; items may be tabular expressions. */
  private parseParenList(context: string): A.Expr[] {
    this.expectPunct('(', context)
    const items: A.Expr[] = []
    if (!this.isPunct(')')) {
      for (;;) {
        items.push(this.parsePipeExpr())
        if (!this.acceptPunct(',')) break
      }
    }
    this.expectPunct(')', 'to close the list')
    return items
  }

  private parsePrefix(): A.Expr {
    const t = this.peek()
    if (t.kind === 'punct' && (t.text === '-' || t.text === '+')) {
      this.advance()
      const operand = this.parseExpr(BP_UNARY)
      return { kind: 'Unary', start: t.start, end: operand.end, op: t.text, operand }
    }
    return this.parsePostfix(this.parsePrimary())
  }

  private parsePostfix(e: A.Expr): A.Expr {
    for (;;) {
      const t = this.peek()
      if (t.kind === 'punct' && t.text === '.') {
        this.advance()
        const n = this.peek()
        if (n.kind === 'ident' || n.kind === 'quotedIdent') {
          this.advance()
          e = { kind: 'Member', start: e.start, end: n.end, target: e, name: n.text }
          continue
        }
        if (n.kind === 'punct' && n.text === '[') {
          // d.[expr]: an expression subscript written after a dot
          this.advance()
          const index = this.parseExpr()
          this.expectPunct(']', 'to close the index')
          e = { kind: 'Index', start: e.start, end: this.lastEnd, target: e, index }
          continue
        }
        throw this.expected("a property name after '.'")
      }
      if (t.kind === 'quotedIdent') {
        // x['key'] (the lexer reads ['key'] as one token)
        this.advance()
        e = {
          kind: 'Index',
          start: e.start,
          end: t.end,
          target: e,
          index: { kind: 'Literal', start: t.start + 1, end: t.end - 1, type: 'string', value: t.text },
        }
        continue
      }
      if (t.kind === 'punct' && t.text === '[') {
        this.advance()
        const index = this.parseExpr()
        this.expectPunct(']', 'to close the index')
        e = { kind: 'Index', start: e.start, end: this.lastEnd, target: e, index }
        continue
      }
      return e
    }
  }

  private parsePrimary(): A.Expr {
    const t = this.peek()
    if (this.inSearch && (t.kind === 'ident' || t.kind === 'quotedIdent') && this.isPunct(':', 1) && this.peek(2).kind === 'string') {
      this.advance()
      const colon = this.advance()
      const value = this.parsePrimary()
      const left: A.Expr = { kind: 'Name', start: t.start, end: t.end, name: t.text, quoted: t.kind === 'quotedIdent' }
      return { kind: 'Binary', op: COLUMN_TERM_OP, opStart: colon.start, left, right: value, start: t.start, end: this.lastEnd }
    }
    switch (t.kind) {
      case 'long':
        this.advance()
        return { kind: 'Literal', start: t.start, end: t.end, type: 'long', value: t.value as number | bigint }
      case 'real':
        this.advance()
        return { kind: 'Literal', start: t.start, end: t.end, type: 'real', value: t.value as number }
      case 'timespan':
        this.advance()
        return { kind: 'Literal', start: t.start, end: t.end, type: 'timespan', value: t.value as bigint }
      case 'string': {
        this.advance()
        let value = t.text
        // adjacent string literals concatenate ("a" 'b' @"c")
        while (this.peek().kind === 'string') value += this.advance().text
        return { kind: 'Literal', start: t.start, end: this.lastEnd, type: 'string', value }
      }
      case 'quotedIdent':
        this.advance()
        return { kind: 'Name', start: t.start, end: t.end, name: t.text, quoted: true }
      case 'punct':
        if (t.text === '(') {
          this.advance()
          const inner = this.parsePipeExpr()
          this.expectPunct(')', 'to close the parenthesis')
          return { kind: 'Paren', start: t.start, end: this.lastEnd, expr: inner }
        }
        if (t.text === '*') {
          this.advance()
          return { kind: 'Star', start: t.start, end: t.end }
        }
        throw this.expected('an expression')
      case 'eof':
        throw this.expected('an expression')
      case 'ident':
        return this.parseIdentPrimary(t)
    }
  }

  private parseIdentPrimary(t: Token): A.Expr {
    const name = t.text
    const next = this.peek(1)
    const callFollows = next.kind === 'punct' && next.text === '('
    switch (name) {
      case 'true':
      case 'True':
      case 'TRUE':
        this.advance()
        return { kind: 'Literal', start: t.start, end: t.end, type: 'bool', value: true }
      case 'false':
      case 'False':
      case 'FALSE':
        this.advance()
        return { kind: 'Literal', start: t.start, end: t.end, type: 'bool', value: false }
      case 'print':
        return this.parsePrint()
      case 'datatable':
        if (callFollows) return this.parseDatatable()
        break
      case 'range':
        if (next.kind === 'ident' || next.kind === 'quotedIdent') return this.parseRange()
        break
      case 'union':
        return this.parseUnionSource()
      case 'search':
        return this.parseSearchSource()
      case 'find':
      case 'externaldata':
        throw this.error(t.start, notSupported(`'${name}'`, UNSUPPORTED_OPERATORS.get(name)!), 'unsupported')
      default:
        break
    }
    if (callFollows && UNSUPPORTED_SOURCES.has(name))
      throw this.error(t.start, notSupported(`'${name}(...)'`, UNSUPPORTED_SOURCES.get(name)!), 'unsupported')
    if (callFollows && TYPED_LITERALS.has(name)) return this.parseTypedLiteral()
    if (callFollows && name === 'typeof') return this.parseTypeofArgument()
    this.advance()
    if (callFollows) return this.parseCallArgs(name, t.start, t.end)
    return { kind: 'Name', start: t.start, end: t.end, name, quoted: false }
  }

  private parseCallArgs(name: string, start: number, nameEnd: number): A.CallExpr {
    this.expectPunct('(')
    const args: A.Expr[] = []
    if (!this.isPunct(')')) {
      for (;;) {
        args.push(this.parseArgument())
        if (!this.acceptPunct(',')) break
      }
    }
    this.expectPunct(')', `to close the arguments of ${name}()`)
    return { kind: 'Call', start, end: this.lastEnd, name, nameEnd, args }
  }

  private parseArgument(): A.Expr {
    const t = this.peek()
    if (t.kind === 'punct' && t.text === '*' && (this.isPunct(',', 1) || this.isPunct(')', 1))) {
      this.advance()
      return { kind: 'Star', start: t.start, end: t.end }
    }
    if ((t.kind === 'ident' || t.kind === 'quotedIdent') && this.isPunct('=', 1)) {
      this.advance()
      this.advance()
      const value = this.parsePipeExpr()
      return { kind: 'NamedArg', start: t.start, end: this.lastEnd, name: t.text, value }
    }
    return this.parsePipeExpr()
  }

  // -------------------------------------------------------------------------------------------
  // Literals
  // -------------------------------------------------------------------------------------------

  /**
   * `typeof(T)` as a function argument (extract(..., typeof(long))): the type's canonical name as
   * a string constant, which is how the function library reads type arguments.
   */
  private parseTypeofArgument(): A.LiteralExpr {
    const t = this.advance()
    const name = this.peek(1)
    if (name.kind === 'ident' && parseTypeName(name.text) && this.isPunct(')', 2)) {
      this.advance()
      this.advance()
      this.advance()
      return { kind: 'Literal', start: t.start, end: this.lastEnd, type: 'string', value: parseTypeName(name.text)! }
    }
    // a schema such as typeof(*, x:long) (plugin arguments): kept as its text
    const raw = this.rawParenContent()
    return { kind: 'Literal', start: t.start, end: this.lastEnd, type: 'string', value: `typeof(${raw.text})` }
  }

  private parseTypedLiteral(): A.LiteralExpr | A.CallExpr {
    const t = this.advance()
    const type = parseTypeName(t.text)!
    if (type === 'dynamic') {
      this.expectPunct('(')
      const value = this.parseDynamicValue()
      this.expectPunct(')', 'to close dynamic(...)')
      return { kind: 'Literal', start: t.start, end: this.lastEnd, type, value }
    }
    const raw = this.rawParenContent()
    let text = raw.text.trim()
    const at = raw.start + (raw.text.length - raw.text.trimStart().length)
    const fail = (what: string): KqlError => this.error(at, `invalid ${t.text} literal '${text}': expected ${what}`)
    if (text.toLowerCase() === 'null') return { kind: 'Literal', start: t.start, end: this.lastEnd, type, value: null }
    // datetime() is the current time (the documentation's literal table)
    if (text === '' && type === 'datetime')
      return { kind: 'Call', start: t.start, end: this.lastEnd, name: 'now', nameEnd: t.end, args: [] }
    let value: KqlValue
    switch (type) {
      case 'bool': {
        const l = text.toLowerCase()
        if (l === 'true' || l === '1') value = true
        else if (l === 'false' || l === '0') value = false
        else throw fail('true, false or null')
        break
      }
      case 'int':
      case 'long': {
        const n = parseIntegerText(text)
        if (n === undefined) throw fail('an integer or null')
        if (type === 'int' && (n < -2147483648 || n > 2147483647)) throw fail('a value in the int range')
        value = n
        break
      }
      case 'real':
      case 'decimal': {
        const n = parseRealText(text)
        if (n === undefined) throw fail('a number, nan, inf or null')
        value = n
        break
      }
      case 'datetime': {
        if ((text.startsWith('"') && text.endsWith('"')) || (text.startsWith("'") && text.endsWith("'"))) text = text.slice(1, -1)
        const ticks = parseDateTimeLiteral(text)
        if (ticks === null) throw fail('a date such as 2024-01-31 or 2024-01-31T10:00:00Z')
        value = ticks
        break
      }
      case 'timespan': {
        const ticks = parseTimespan(text)
        if (ticks === null) throw fail('a timespan such as 1d, 02:30:00 or 1.12:00:00')
        value = ticks
        break
      }
      case 'guid': {
        let g = text
        if ((g.startsWith('"') && g.endsWith('"')) || (g.startsWith("'") && g.endsWith("'"))) g = g.slice(1, -1)
        if (g.startsWith('{') && g.endsWith('}')) g = g.slice(1, -1)
        if (!GUID_RE.test(g)) throw fail('a guid such as 74be27de-1e4e-49d9-b579-fe0b331d3642')
        value = g.toLowerCase()
        break
      }
      default:
        throw fail('a literal')
    }
    return { kind: 'Literal', start: t.start, end: this.lastEnd, type, value }
  }

  /** The JSON-like content of `dynamic(...)`, nested at most MAX_NESTING levels (issue 15). */
  private parseDynamicValue(): DynamicValue {
    if (++this.depth > MAX_NESTING) {
      throw this.error(this.peek().start, `the dynamic literal is nested more than ${MAX_NESTING} levels deep`, 'unsupported')
    }
    try {
      return this.parseDynamicValueAt()
    } finally {
      this.depth--
    }
  }

  /** Objects, arrays, literals, typed literals. */
  private parseDynamicValueAt(): DynamicValue {
    const t = this.peek()
    if (t.kind === 'punct') {
      if (t.text === '{') {
        this.advance()
        const obj: Record<string, DynamicValue> = {}
        while (!this.isPunct('}')) {
          const k = this.peek()
          if (k.kind !== 'string' && k.kind !== 'ident') throw this.expected('a property name in the dynamic object')
          this.advance()
          this.expectPunct(':', 'after the property name')
          obj[k.text] = this.parseDynamicValue()
          if (!this.acceptPunct(',')) break
        }
        this.expectPunct('}', 'to close the dynamic object')
        return obj
      }
      if (t.text === '[') {
        this.advance()
        const arr: DynamicValue[] = []
        while (!this.isPunct(']')) {
          arr.push(this.parseDynamicValue())
          if (!this.acceptPunct(',')) break
        }
        this.expectPunct(']', 'to close the dynamic array')
        return arr
      }
      if (t.text === '-' || t.text === '+') {
        this.advance()
        const n = this.peek()
        if (n.kind === 'long') {
          this.advance()
          // an exact long, as everywhere (README "The value of a long")
          const v = n.value as Long
          return t.text === '-' ? longNeg(v) : v
        }
        if (n.kind === 'real') {
          this.advance()
          const v = Number(n.value)
          return t.text === '-' ? -v : v
        }
        if (n.kind === 'timespan') {
          this.advance()
          return formatTimespan(t.text === '-' ? -(n.value as bigint) : (n.value as bigint))
        }
        throw this.expected('a number')
      }
    }
    if (t.kind === 'quotedIdent') {
      // ['a'] is a one-element array here
      this.advance()
      return [t.text]
    }
    if (t.kind === 'string') {
      this.advance()
      return t.text
    }
    if (t.kind === 'long') {
      this.advance()
      return t.value as Long
    }
    if (t.kind === 'real') {
      this.advance()
      return Number(t.value)
    }
    if (t.kind === 'timespan') {
      this.advance()
      return formatTimespan(t.value as bigint)
    }
    if (t.kind === 'ident') {
      switch (t.text) {
        case 'true':
        case 'True':
          this.advance()
          return true
        case 'false':
        case 'False':
          this.advance()
          return false
        case 'null':
          this.advance()
          return null
        default:
          if (TYPED_LITERALS.has(t.text) && this.isPunct('(', 1)) {
            const lit = this.parseTypedLiteral()
            if (lit.kind !== 'Literal') throw this.error(lit.start, 'a dynamic literal cannot contain datetime()')
            return literalToDynamic(lit)
          }
      }
    }
    throw this.expected('a dynamic value (object, array, number, string, true, false or null)')
  }

  // -------------------------------------------------------------------------------------------
  // Tabular sources
  // -------------------------------------------------------------------------------------------

  private parsePrint(): A.PrintExpr {
    const start = this.advance().start
    const items: A.NamedExpr[] = []
    for (;;) {
      items.push(this.parseNamedExpr())
      if (!this.acceptPunct(',')) break
    }
    return { kind: 'Print', start, end: this.lastEnd, items }
  }

  private parseDatatable(): A.DatatableExpr {
    const start = this.advance().start
    this.expectPunct('(')
    const columns: A.ColumnDecl[] = []
    if (!this.isPunct(')')) {
      for (;;) {
        columns.push(this.parseColumnDecl())
        if (!this.acceptPunct(',')) break
      }
    }
    this.expectPunct(')', 'to close the datatable schema')
    const values: A.Expr[] = []
    const t = this.peek()
    if (t.kind === 'quotedIdent') {
      // datatable(x:string)['a'] — the lexer took ['a'] for a bracketed name
      this.advance()
      values.push({ kind: 'Literal', start: t.start + 1, end: t.end - 1, type: 'string', value: t.text })
    } else {
      this.expectPunct('[', 'to start the datatable values')
      while (!this.isPunct(']')) {
        values.push(this.parseExpr())
        if (!this.acceptPunct(',')) break
      }
      this.expectPunct(']', 'to close the datatable values')
    }
    return { kind: 'Datatable', start, end: this.lastEnd, columns, values }
  }

  private parseRange(): A.RangeExpr {
    const start = this.advance().start
    const column = this.expectName('a column name after range').name
    this.expectKeyword('from', 'in range')
    const from = this.parseExpr()
    this.expectKeyword('to', 'in range')
    const to = this.parseExpr()
    this.expectKeyword('step', 'in range')
    const step = this.parseExpr()
    return { kind: 'Range', start, end: this.lastEnd, column, from, to, step }
  }

  /**
   * `search [kind=...] [in (T1, T2*)] predicate` after a pipe or as a source. Returns the tables
   * (undefined when no `in` was written) and the predicate already rewritten as a `where` one.
   */
  private parseSearchBody(): { tables: A.Expr[] | undefined; predicate: A.Expr; start: number } {
    const params = this.parseParams(['kind'])
    let caseSensitive = false
    for (const p of params) {
      if (p.value === 'case_sensitive') caseSensitive = true
      else if (p.value !== 'case_insensitive' && p.value !== 'default')
        throw this.error(p.valueStart, 'search kind must be case_sensitive, case_insensitive or default')
    }
    let tables: A.Expr[] | undefined
    if (this.isIdent('in') && this.isPunct('(', 1)) {
      this.advance()
      this.advance()
      tables = this.parseUnionTables()
      this.expectPunct(')', 'to close the list of tables to search')
    }
    const start = this.peek().start
    const t = this.peek(1)
    let raw: A.Expr
    if (this.isPunct('*') && (t.kind === 'eof' || (t.kind === 'punct' && (t.text === '|' || t.text === ';' || t.text === ')')))) {
      const star = this.advance()
      raw = { kind: 'Star', start: star.start, end: star.end }
    } else {
      this.inSearch = true
      try {
        raw = this.parseExpr()
      } finally {
        this.inSearch = false
      }
    }
    return { tables, predicate: searchToWhere(raw, caseSensitive), start }
  }

  /** `search ...` as a source: a union of the listed tables (default: every table and view in scope) with `$table`. */
  private parseSearchSource(): A.Expr {
    const start = this.advance().start
    const body = this.parseSearchBody()
    const tables = body.tables ?? [{ kind: 'Name', start, end: start, name: '*', quoted: false } satisfies A.NameExpr]
    const withsource: A.OperatorParam = { name: 'withsource', value: '$table', start, end: start, valueStart: start }
    const source: A.UnionExpr = { kind: 'Union', start, end: this.lastEnd, params: [withsource], tables }
    const where: A.WhereOp = { kind: 'Where', predicate: body.predicate, searchSource: true, start: body.start, end: this.lastEnd }
    return { kind: 'Pipe', source, op: where, start, end: this.lastEnd }
  }

  private parseUnionSource(): A.UnionExpr {
    const start = this.advance().start
    const params = this.parseParams(['kind', 'withsource', 'isfuzzy'])
    const tables = this.parseUnionTables()
    return { kind: 'Union', start, end: this.lastEnd, params, tables }
  }

  private parseUnionTables(): A.Expr[] {
    const tables: A.Expr[] = []
    for (;;) {
      tables.push(this.parseUnionTable())
      if (!this.acceptPunct(',')) break
    }
    return tables
  }

  /** A union operand: `(expr)`, a name (possibly with `*` wildcards) or a call. */
  private parseUnionTable(): A.Expr {
    const t = this.peek()
    if ((t.kind === 'ident' || (t.kind === 'punct' && t.text === '*')) && !this.isPunct('(', 1)) {
      const pattern = this.tryWildcardName()
      if (pattern) return pattern
    }
    return this.parseExpr()
  }

  /** Adjacent identifier and `*` tokens (`Table*`, `*Events`) as one name; undefined if no `*`. */
  private tryWildcardName(): A.NameExpr | undefined {
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

  // -------------------------------------------------------------------------------------------
  // Operator pieces
  // -------------------------------------------------------------------------------------------

  /**
   * `name=value` parameters before an operator's arguments. Only names in `allowed` (or `hint.*`)
   * are parameters, so `summarize n=count()` is not mistaken for one.
   */
  private parseParams(allowed: readonly string[]): A.OperatorParam[] {
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

  /** `[name =] expr` or `(a, b) = expr`. */
  private parseNamedExpr(): A.NamedExpr {
    const t = this.peek()
    if ((t.kind === 'ident' || t.kind === 'quotedIdent') && this.isPunct('=', 1)) {
      this.advance()
      this.advance()
      const expr = this.parseExpr()
      return { start: t.start, end: this.lastEnd, names: [t.text], expr }
    }
    if (t.kind === 'punct' && t.text === '(' && this.isName(1)) {
      // (a, b) = expr
      let k = 1
      const names: string[] = []
      for (;;) {
        const n = this.peek(k)
        if (n.kind !== 'ident' && n.kind !== 'quotedIdent') break
        names.push(n.text)
        k++
        if (this.isPunct(',', k)) {
          k++
          continue
        }
        break
      }
      if (this.isPunct(')', k) && this.isPunct('=', k + 1)) {
        for (let i = 0; i <= k + 1; i++) this.advance()
        const expr = this.parseExpr()
        return { start: t.start, end: this.lastEnd, names, expr }
      }
    }
    const expr = this.parseExpr()
    return { start: expr.start, end: expr.end, names: [], expr }
  }

  private parseNamedExprList(): A.NamedExpr[] {
    const items: A.NamedExpr[] = []
    for (;;) {
      items.push(this.parseNamedExpr())
      if (!this.acceptPunct(',')) break
    }
    return items
  }

  private parseOrderItems(): A.OrderItem[] {
    const items: A.OrderItem[] = []
    for (;;) {
      const expr = this.parseExpr()
      let direction: A.OrderItem['direction']
      let nulls: A.OrderItem['nulls']
      if (this.acceptIdent('asc')) direction = 'asc'
      else if (this.acceptIdent('desc')) direction = 'desc'
      if (this.acceptIdent('nulls')) {
        if (this.acceptIdent('first')) nulls = 'first'
        else if (this.acceptIdent('last')) nulls = 'last'
        else throw this.expected("'first' or 'last' after 'nulls'")
      }
      items.push({ start: expr.start, end: this.lastEnd, expr, direction, nulls })
      if (!this.acceptPunct(',')) break
    }
    return items
  }

  /** Column names or wildcard patterns, comma separated (project-away, project-keep, project-reorder). */
  private parseNamePatterns(withOrder: boolean): A.NamePattern[] {
    const patterns: A.NamePattern[] = []
    for (;;) {
      const t = this.peek()
      let pattern: string
      if (t.kind === 'quotedIdent') {
        this.advance()
        pattern = t.text
      } else {
        const w = this.tryWildcardName()
        if (w) pattern = w.name
        else pattern = this.expectName('a column name or pattern').name
      }
      let direction: A.NamePattern['direction']
      if (withOrder) {
        if (this.acceptIdent('asc')) direction = 'asc'
        else if (this.acceptIdent('desc')) direction = 'desc'
        else if (this.isIdent('granny') && this.isPunct('-', 1)) {
          this.advance()
          this.advance()
          if (this.acceptIdent('asc')) direction = 'granny-asc'
          else if (this.acceptIdent('desc')) direction = 'granny-desc'
          else throw this.expected("'asc' or 'desc' after 'granny-'")
        }
      }
      patterns.push({ start: t.start, end: this.lastEnd, pattern, direction })
      if (!this.acceptPunct(',')) break
    }
    return patterns
  }

  /** `to typeof(type)` after an mv-expand item. */
  private parseToTypeof(): KqlType | undefined {
    if (!(this.isIdent('to') && this.isIdent('typeof', 1))) return undefined
    this.advance()
    this.advance()
    this.expectPunct('(', "after 'typeof'")
    const type = this.parseTypeName()
    this.expectPunct(')', "to close 'typeof'")
    return type
  }

  private parseMvItems(): A.MvExpandItem[] {
    const items: A.MvExpandItem[] = []
    for (;;) {
      const named = this.parseNamedExpr()
      const toType = this.parseToTypeof()
      items.push({ start: named.start, end: this.lastEnd, name: named.names[0], expr: named.expr, toType })
      if (!this.acceptPunct(',')) break
    }
    return items
  }

  private parseJoinConditions(): A.JoinCondition[] {
    const on: A.JoinCondition[] = []
    const add = (e: A.Expr): void => {
      if (e.kind === 'Binary' && e.op === 'and') {
        add(e.left)
        add(e.right)
        return
      }
      if (e.kind === 'Name') {
        on.push({ start: e.start, end: e.end, left: e.name, right: e.name, leftStart: e.start, rightStart: e.start })
        return
      }
      if (e.kind === 'Binary' && e.op === '==') {
        const l = sideOf(e.left)
        const r = sideOf(e.right)
        if (l && r && l.side !== r.side) {
          const left = l.side === '$left' ? l : r
          const right = l.side === '$left' ? r : l
          on.push({ start: e.start, end: e.end, left: left.name, right: right.name, leftStart: left.start, rightStart: right.start })
          return
        }
      }
      throw this.error(e.start, "expected a join condition: a column name or '$left.Column == $right.Column'")
    }
    for (;;) {
      add(this.parseExpr())
      if (!this.acceptPunct(',')) break
    }
    return on
  }

  /** The operator name after `|`, joining dashed names (`project-away`, `mv-expand`). */
  private readOperatorName(): { name: string; start: number } {
    const t = this.peek()
    if (t.kind !== 'ident') throw this.expected('a tabular operator (where, project, extend, summarize, ...)')
    this.advance()
    let name = t.text
    while (
      this.isPunct('-') &&
      this.peek().start === this.lastEnd &&
      this.peek(1).kind === 'ident' &&
      this.peek(1).start === this.peek().end
    ) {
      this.advance()
      name += '-' + this.advance().text
    }
    return { name, start: t.start }
  }

  // -------------------------------------------------------------------------------------------
  // Tabular operators
  // -------------------------------------------------------------------------------------------

  private parseOperator(): A.Operator {
    const { name, start } = this.readOperatorName()
    const span = (): A.Span => ({ start, end: this.lastEnd })
    switch (name) {
      case 'where':
      case 'filter': {
        const predicate = this.parseExpr()
        return { kind: 'Where', predicate, ...span() }
      }
      case 'search': {
        const body = this.parseSearchBody()
        if (body.tables) throw this.error(start, "search after a pipe searches its input: 'in (tables)' can only start a query")
        return { kind: 'Where', predicate: body.predicate, ...span() }
      }
      case 'project': {
        const items = this.parseNamedExprList()
        return { kind: 'Project', items, ...span() }
      }
      case 'project-away':
        return { kind: 'ProjectAway', patterns: this.parseNamePatterns(false), ...span() }
      case 'project-keep':
        return { kind: 'ProjectKeep', patterns: this.parseNamePatterns(false), ...span() }
      case 'project-reorder':
        return { kind: 'ProjectReorder', patterns: this.parseNamePatterns(true), ...span() }
      case 'project-rename': {
        const renames: A.ProjectRenameOp['renames'][number][] = []
        for (;;) {
          const n = this.expectName('a new column name')
          this.expectPunct('=', 'in project-rename (NewName = OldName)')
          const o = this.expectName('an existing column name')
          renames.push({ newName: n.name, oldName: o.name, start: n.start, oldStart: o.start })
          if (!this.acceptPunct(',')) break
        }
        return { kind: 'ProjectRename', renames, ...span() }
      }
      case 'project-by-names': {
        const args: A.Expr[] = []
        for (;;) {
          args.push(this.parseExpr())
          if (!this.acceptPunct(',')) break
        }
        return { kind: 'ProjectByNames', args, ...span() }
      }
      case 'extend':
        return { kind: 'Extend', items: this.parseNamedExprList(), ...span() }
      case 'summarize': {
        const params = this.parseParams([])
        const aggregates = this.isIdent('by') ? [] : this.parseNamedExprList()
        let by: A.NamedExpr[] = []
        if (this.acceptIdent('by')) by = this.parseNamedExprList()
        if (aggregates.length === 0 && by.length === 0) throw this.expected("an aggregate or 'by' after summarize")
        return { kind: 'Summarize', params, aggregates, by, ...span() }
      }
      case 'count': {
        let countName: string | undefined
        if (this.acceptIdent('as')) countName = this.expectName("a column name after 'as'").name
        return { kind: 'Count', name: countName, ...span() }
      }
      case 'distinct': {
        const params = this.parseParams([])
        const items = this.parseNamedExprList()
        return { kind: 'Distinct', params, items, ...span() }
      }
      case 'top': {
        const count = this.parseExpr()
        this.expectKeyword('by', 'after the number of rows in top')
        const by = this.parseOrderItems()
        return { kind: 'Top', count, by, ...span() }
      }
      case 'take':
      case 'limit': {
        this.parseParams([])
        const count = this.parseExpr()
        return { kind: 'Take', count, ...span() }
      }
      case 'sort':
      case 'order': {
        this.parseParams([])
        this.expectKeyword('by', `after '${name}'`)
        return { kind: 'Sort', by: this.parseOrderItems(), ...span() }
      }
      case 'join':
      case 'lookup': {
        const params = this.parseParams(['kind'])
        if (this.isIdent('on') && !this.isPunct('|', 1)) throw this.expected(`the right side of ${name} (a table name or a (subquery))`)
        const right = this.parseExpr()
        this.expectKeyword('on', `after the right side of ${name}`)
        const on = this.parseJoinConditions()
        return { kind: name === 'join' ? 'Join' : 'Lookup', params, right, on, ...span() }
      }
      case 'mv-expand':
      case 'mvexpand': {
        const params = this.parseParams(['bagexpansion', 'with_itemindex', 'kind'])
        const items = this.parseMvItems()
        let limit: A.Expr | undefined
        if (this.acceptIdent('limit')) limit = this.parseExpr()
        // the legacy mvexpand stops at 128 rows per record by default (documentation)
        else if (name === 'mvexpand') limit = { kind: 'Literal', type: 'long', value: 128, start, end: start }
        return { kind: 'MvExpand', params, items, limit, ...span() }
      }
      case 'mv-apply':
      case 'mvapply': {
        const params = this.parseParams(['with_itemindex', 'bagexpansion', 'kind'])
        const items = this.parseMvItems()
        let limit: A.Expr | undefined
        if (this.acceptIdent('limit')) limit = this.parseExpr()
        this.parseParams(['id'])
        this.expectKeyword('on', 'in mv-apply (mv-apply items on (subquery))')
        const subqueryStart = this.expectPunct('(', "after 'on'").start
        const subquery: A.Operator[] = []
        for (;;) {
          subquery.push(this.parseOperator())
          if (!this.acceptPunct('|')) break
        }
        this.expectPunct(')', 'to close the mv-apply subquery')
        return { kind: 'MvApply', params, items, limit, subquery, subqueryStart, ...span() }
      }
      case 'parse':
      case 'parse-where': {
        const params = this.parseParams(['kind', 'flags'])
        const source = this.parseExpr()
        this.expectKeyword('with', `after the source expression of ${name}`)
        const pattern = this.parseParsePattern()
        return { kind: 'Parse', where: name === 'parse-where', params, source, pattern, ...span() }
      }
      case 'parse-kv': {
        const source = this.parseExpr()
        this.expectKeyword('as', 'in parse-kv (parse-kv Expr as (Key:type, ...))')
        this.expectPunct('(')
        const keys: A.ColumnDecl[] = []
        for (;;) {
          keys.push(this.parseColumnDecl())
          if (!this.acceptPunct(',')) break
        }
        this.expectPunct(')')
        let options: A.OperatorParam[] = []
        if (this.acceptIdent('with')) {
          this.expectPunct('(')
          const names = ['pair_delimiter', 'kv_delimiter', 'quote', 'escape', 'greedy', 'regex']
          options = this.parseParams(names)
          while (this.acceptPunct(',')) {
            const more = this.parseParams(names)
            if (more.length === 0) throw this.expected('a parse-kv option (pair_delimiter, kv_delimiter, quote, escape, greedy, regex)')
            options = options.concat(more)
          }
          this.expectPunct(')', 'to close the parse-kv options')
        }
        return { kind: 'ParseKv', source, keys, options, ...span() }
      }
      case 'make-series':
        return this.parseMakeSeries(start)
      case 'serialize': {
        const items = this.isName() ? this.parseNamedExprList() : []
        return { kind: 'Serialize', items, ...span() }
      }
      case 'sample':
        return { kind: 'Sample', count: this.parseExpr(), ...span() }
      case 'sample-distinct': {
        const count = this.parseExpr()
        this.expectKeyword('of', 'in sample-distinct (sample-distinct N of Column)')
        const column = this.parseExpr()
        return { kind: 'SampleDistinct', count, column, ...span() }
      }
      case 'as': {
        const params = this.parseParams([])
        const n = this.expectName("a name after 'as'")
        return { kind: 'As', params, name: n.name, ...span() }
      }
      case 'getschema':
        return { kind: 'GetSchema', ...span() }
      case 'render': {
        const chart = this.expectName('a visualization (timechart, barchart, table, ...)').name
        const properties: { name: string; value: A.Expr }[] = []
        if (this.acceptIdent('with')) {
          this.expectPunct('(')
          while (!this.isPunct(')')) {
            const n = this.expectName('a render property')
            this.expectPunct('=')
            const value = this.isPunct('(') ? this.parseParenTuple() : this.parseExpr()
            properties.push({ name: n.name, value })
            if (!this.acceptPunct(',')) break
          }
          this.expectPunct(')', 'to close the render properties')
        }
        return { kind: 'Render', chart, properties, ...span() }
      }
      case 'top-nested':
        return this.parseTopNested(start)
      case 'scan':
        return this.parseScan(start)
      case 'evaluate': {
        const params = this.parseParams([])
        const t = this.peek()
        if (t.kind !== 'ident' || !this.isPunct('(', 1)) throw this.expected('a plugin call after evaluate')
        this.advance()
        const call = this.parseCallArgs(t.text, t.start, t.end)
        let schema: A.ColumnDecl[] | undefined
        let schemaStar = false
        if (this.acceptPunct(':')) {
          this.expectPunct('(')
          schema = []
          for (;;) {
            if (this.acceptPunct('*')) {
              schemaStar = true
              if (!this.acceptPunct(',')) break
              continue
            }
            schema.push(this.parseColumnDecl())
            if (!this.acceptPunct(',')) break
          }
          this.expectPunct(')')
        }
        return { kind: 'Evaluate', params, call, schema, ...(schemaStar ? { schemaStar } : {}), ...span() }
      }
      case 'invoke': {
        const t = this.peek()
        if (t.kind !== 'ident' || !this.isPunct('(', 1)) throw this.expected('a function call after invoke')
        this.advance()
        const call = this.parseCallArgs(t.text, t.start, t.end)
        return { kind: 'Invoke', call, ...span() }
      }
      case 'consume':
        this.parseParams(['decodeblocks'])
        return { kind: 'Consume', ...span() }
      case 'top-hitters': {
        const count = this.parseExpr()
        this.expectKeyword('of', 'in top-hitters (top-hitters N of Column)')
        const of = this.parseExpr()
        let by: A.Expr | undefined
        if (this.acceptIdent('by')) by = this.parseExpr()
        return { kind: 'TopHitters', count, of, by, ...span() }
      }
      case 'union': {
        const params = this.parseParams(['kind', 'withsource', 'isfuzzy'])
        const tables = this.parseUnionTables()
        return { kind: 'UnionOp', params, tables, ...span() }
      }
      case 'partition': {
        const params = this.parseParams([])
        this.expectKeyword('by', "after 'partition'")
        // the key is a column name: `by Col (` must not read as a call of Col
        const keyName = this.expectName('the partition column')
        const by: A.Expr = { kind: 'Name', start: keyName.start, end: keyName.end, name: keyName.name, quoted: false }
        if (this.isPunct('{'))
          throw this.error(
            this.peek().start,
            'partition with a { subquery with source } is not supported; use partition by Column ( operators )',
            'unsupported',
          )
        this.expectPunct('(', 'to start the partition subquery')
        const subquery: A.Operator[] = []
        for (;;) {
          subquery.push(this.parseOperator())
          if (!this.acceptPunct('|')) break
        }
        this.expectPunct(')', 'to close the partition subquery')
        return { kind: 'Partition', params, by, subquery, ...span() }
      }
      default:
        if (UNSUPPORTED_OPERATORS.has(name))
          throw this.error(start, notSupported(`the '${name}' operator`, UNSUPPORTED_OPERATORS.get(name)!), 'unsupported')
        throw this.error(
          start,
          `unknown tabular operator '${name}': expected where, project, extend, summarize, join, sort, take, top, ...`,
        )
    }
  }

  /** `(a, b)` in render properties (ycolumns=(a, b)). */
  private parseParenTuple(): A.Expr {
    const start = this.advance().start
    const items: A.Expr[] = []
    while (!this.isPunct(')')) {
      items.push(this.parseExpr())
      if (!this.acceptPunct(',')) break
    }
    this.expectPunct(')')
    return { kind: 'Call', start, end: this.lastEnd, name: '', nameEnd: start, args: items }
  }

  private parseParsePattern(): A.ParsePatternPart[] {
    const parts: A.ParsePatternPart[] = []
    for (;;) {
      const t = this.peek()
      if (t.kind === 'string') {
        this.advance()
        parts.push({ kind: 'text', text: t.text, start: t.start })
      } else if (t.kind === 'punct' && t.text === '*') {
        this.advance()
        parts.push({ kind: 'star', start: t.start })
      } else if (t.kind === 'ident' || t.kind === 'quotedIdent') {
        this.advance()
        let type: KqlType | undefined
        if (this.acceptPunct(':')) type = this.parseTypeName()
        parts.push({ kind: 'column', name: t.text, type, start: t.start })
      } else {
        break
      }
    }
    if (parts.length === 0) throw this.expected('a parse pattern (string literals, column names and *)')
    return parts
  }

  private parseMakeSeries(start: number): A.MakeSeriesOp {
    const params = this.parseParams(['kind'])
    const aggregates: { item: A.NamedExpr; defaultValue?: A.Expr }[] = []
    for (;;) {
      const item = this.parseNamedExpr()
      let defaultValue: A.Expr | undefined
      if (this.isIdent('default') && this.isPunct('=', 1)) {
        this.advance()
        this.advance()
        defaultValue = this.parseExpr()
      }
      aggregates.push({ item, defaultValue })
      if (!this.acceptPunct(',')) break
    }
    this.expectKeyword('on', 'in make-series (make-series Aggregate on Axis ...)')
    const on = this.parseExpr()
    let from: A.Expr | undefined
    let to: A.Expr | undefined
    let step: A.Expr
    let rangeSyntax = false
    if (this.acceptIdent('in')) {
      rangeSyntax = true
      const r = this.peek()
      if (!(r.kind === 'ident' && r.text === 'range' && this.isPunct('(', 1))) throw this.expected("range(start, stop, step) after 'in'")
      this.advance()
      this.advance()
      from = this.parseExpr()
      this.expectPunct(',')
      to = this.parseExpr()
      this.expectPunct(',')
      step = this.parseExpr()
      this.expectPunct(')')
    } else {
      if (this.acceptIdent('from')) from = this.parseExpr()
      if (this.acceptIdent('to')) to = this.parseExpr()
      this.expectKeyword('step', 'in make-series')
      step = this.parseExpr()
    }
    let by: A.NamedExpr[] = []
    if (this.acceptIdent('by')) by = this.parseNamedExprList()
    return {
      kind: 'MakeSeries',
      params,
      aggregates,
      on,
      from,
      to,
      step,
      ...(rangeSyntax ? { rangeSyntax } : {}),
      by,
      start,
      end: this.lastEnd,
    }
  }

  private parseTopNested(start: number): A.TopNestedOp {
    const levels: A.TopNestedLevel[] = []
    for (;;) {
      const levelStart = this.peek().start
      let count: A.Expr | undefined
      if (!this.isIdent('of')) count = this.parseExpr()
      this.expectKeyword('of', 'in top-nested (top-nested N of Expr by Aggregate)')
      const of = this.parseNamedExpr()
      let others: A.TopNestedLevel['others']
      if (this.isIdent('with') && this.isIdent('others', 1)) {
        this.advance()
        this.advance()
        this.expectPunct('=')
        others = { value: this.parseExpr() }
      }
      this.expectKeyword('by', 'in top-nested')
      const by = this.parseNamedExpr()
      let direction: 'asc' | 'desc' | undefined
      if (this.acceptIdent('asc')) direction = 'asc'
      else if (this.acceptIdent('desc')) direction = 'desc'
      levels.push({ start: levelStart, end: this.lastEnd, count, of, others, by, direction })
      if (!this.acceptPunct(',')) break
      if (this.isIdent('top') && this.isPunct('-', 1) && this.isIdent('nested', 2)) {
        this.advance()
        this.advance()
        this.advance()
      }
    }
    return { kind: 'TopNested', levels, start, end: this.lastEnd }
  }

  private parseScan(start: number): A.ScanOp {
    const params = this.parseParams(['with_match_id'])
    const declare: A.ScanOp['declare'][number][] = []
    if (this.acceptIdent('declare')) {
      this.expectPunct('(')
      for (;;) {
        const n = this.expectName('a state column name')
        this.expectPunct(':')
        const type = this.parseTypeName()
        let defaultValue: A.Expr | undefined
        if (this.acceptPunct('=')) defaultValue = this.parseExpr()
        declare.push({ name: n.name, type, defaultValue, start: n.start })
        if (!this.acceptPunct(',')) break
      }
      this.expectPunct(')')
    }
    this.expectKeyword('with', 'in scan (scan ... with (step ...))')
    this.expectPunct('(')
    const steps: A.ScanStep[] = []
    while (!this.isPunct(')')) {
      const stepStart = this.expectKeyword('step', 'in the scan body').start
      const name = this.expectName('a step name').name
      let output: A.ScanStep['output']
      if (this.isIdent('output') && this.isPunct('=', 1)) {
        this.advance()
        this.advance()
        const v = this.expectName("all, last or none after 'output='").name
        if (v !== 'all' && v !== 'last' && v !== 'none')
          throw this.error(this.lastEnd - v.length, "expected all, last or none after 'output='")
        output = v
      }
      this.expectPunct(':', `after step '${name}'`)
      const predicate = this.parseExpr()
      const assignments: A.ScanStep['assignments'][number][] = []
      if (this.acceptPunct('=>')) {
        for (;;) {
          const n = this.expectName('a column to assign')
          this.expectPunct('=')
          assignments.push({ name: n.name, value: this.parseExpr(), start: n.start })
          if (!this.acceptPunct(',')) break
        }
      }
      this.expectPunct(';', 'after the scan step')
      steps.push({ start: stepStart, end: this.lastEnd, name, output, predicate, assignments })
    }
    this.expectPunct(')', 'to close the scan body')
    if (steps.length === 0) throw this.error(start, 'scan needs at least one step')
    return { kind: 'Scan', params, declare, steps, start, end: this.lastEnd }
  }
}

function sideOf(e: A.Expr): { side: '$left' | '$right'; name: string; start: number } | undefined {
  if (e.kind === 'Member' && e.target.kind === 'Name' && (e.target.name === '$left' || e.target.name === '$right')) {
    return { side: e.target.name, name: e.name, start: e.start }
  }
  return undefined
}

/** `long(...)`/`int(...)` text as an exact long (it was a double: `long(2^53 + 1)` rounded, `long(-2^63)` flipped sign). */
function parseIntegerText(text: string): Long | undefined {
  const m = /^([+-]?)\s*(0[xX][0-9a-fA-F]+|\d+)$/.exec(text)
  if (!m) return undefined
  const v = BigInt.asIntN(64, BigInt(m[2]!))
  return canonLong(m[1] === '-' ? -v : v)
}

function parseRealText(text: string): number | undefined {
  const l = text.toLowerCase().replace(/\s+/g, '')
  if (l === 'nan') return NaN
  if (l === 'inf' || l === '+inf' || l === 'infinity' || l === '+infinity') return Infinity
  if (l === '-inf' || l === '-infinity') return -Infinity
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(l)) return undefined
  return Number(l)
}

/** datetime(...) text: everything parseDateTime accepts, plus `2025, 6, 14[, h, m, s]`. */
function parseDateTimeLiteral(text: string): bigint | null {
  const parsed = parseDateTime(text)
  if (parsed !== null) return parsed
  const m = /^(\d{4})\s*,\s*(\d{1,2})\s*,\s*(\d{1,2})(?:\s*,\s*(\d{1,2})(?:\s*,\s*(\d{1,2})(?:\s*,\s*(\d{1,2}))?)?)?$/.exec(text)
  if (!m) return null
  const pad = (s: string | undefined): string => (s ?? '0').padStart(2, '0')
  return parseDateTime(`${m[1]}-${pad(m[2])}-${pad(m[3])}T${pad(m[4])}:${pad(m[5])}:${pad(m[6])}Z`)
}

function literalToDynamic(lit: A.LiteralExpr): DynamicValue {
  const v = lit.value
  if (v === null) return null
  switch (lit.type) {
    case 'datetime':
      return formatDateTime(v as bigint)
    case 'timespan':
      return formatTimespan(v as bigint)
    case 'long':
      // an exact long (canonical form) inside dynamic, as the plain literal
      return v as Long
    default:
      return typeof v === 'bigint' ? Number(v) : (v as DynamicValue)
  }
}
