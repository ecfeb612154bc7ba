/**
 * @module
 * Scalar expressions: a Pratt parser (binding powers below), postfix member and index access,
 * calls and named arguments (issue 19 item 6: split out of parser.ts); literals are read by the
 * class it extends (literal-parser.ts). Pipes and tabular sources met inside an expression
 * (`toscalar(T | count)`, `(print 1)`) are read by the statement parser (parser.ts), through the
 * two abstract hooks.
 */
import { notSupported, UNSUPPORTED_OPERATORS, UNSUPPORTED_SOURCES } from '../unsupported.js'
import type * as A from './ast.js'
import type { Token } from './lexer.js'
import { LiteralParser, MAX_NESTING, TYPED_LITERALS } from './literal-parser.js'
import { COLUMN_TERM_OP } from './search-predicate.js'

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

/** Longest pipeline accepted (binding and running recurse along it). */
const MAX_PIPELINE = 2000

const BP_OR = 10
const BP_AND = 20
const BP_COMPARE = 30
const BP_ADD = 40
const BP_MUL = 50
const BP_UNARY = 60

export abstract class ExpressionParser extends LiteralParser {
  /** While reading a `search` predicate: `Column:"term"` is a column term. */
  inSearch = false

  /** One tabular operator after `|` (parser.ts: the operator table). */
  abstract parseOperator(): A.Operator

  /** A tabular source starting at the identifier `t` (print, datatable, range, union, search), else undefined. */
  abstract parseSource(t: Token): A.Expr | undefined

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

  parseExprAt(minBp: number): A.Expr {
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
  peekInfix(): { op: string; bp: number; tokens: number } | undefined {
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

  parseBetween(left: A.Expr, negated: boolean): A.BetweenExpr {
    this.expectPunct('(', "after 'between'")
    const low = this.parseExpr()
    this.expectPunct('..', "between the bounds of 'between' (a .. b)")
    const high = this.parseExpr()
    this.expectPunct(')', "to close 'between'")
    return { kind: 'Between', start: left.start, end: this.lastEnd, negated, left, low, high }
  }

  /** `( item, item, ... )`; items may be tabular expressions. */
  parseParenList(context: string): A.Expr[] {
    return this.parenList(() => this.parsePipeExpr(), 'to close the list', context)
  }

  parsePrefix(): A.Expr {
    const t = this.peek()
    if (t.kind === 'punct' && (t.text === '-' || t.text === '+')) {
      this.advance()
      const operand = this.parseExpr(BP_UNARY)
      return { kind: 'Unary', start: t.start, end: operand.end, op: t.text, operand }
    }
    return this.parsePostfix(this.parsePrimary())
  }

  parsePostfix(e: A.Expr): A.Expr {
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

  parsePrimary(): A.Expr {
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

  parseIdentPrimary(t: Token): A.Expr {
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
      case 'find':
      case 'externaldata':
        throw this.error(t.start, notSupported(`'${name}'`, UNSUPPORTED_OPERATORS.get(name)!), 'unsupported')
      default: {
        const source = this.parseSource(t)
        if (source) return source
      }
    }
    if (callFollows && UNSUPPORTED_SOURCES.has(name))
      throw this.error(t.start, notSupported(`'${name}(...)'`, UNSUPPORTED_SOURCES.get(name)!), 'unsupported')
    if (callFollows && TYPED_LITERALS.has(name)) return this.parseTypedLiteral()
    if (callFollows && name === 'typeof') return this.parseTypeofArgument()
    this.advance()
    if (callFollows) return this.parseCallArgs(name, t.start, t.end)
    return { kind: 'Name', start: t.start, end: t.end, name, quoted: false }
  }

  parseCallArgs(name: string, start: number, nameEnd: number): A.CallExpr {
    const args = this.parenList(() => this.parseArgument(), `to close the arguments of ${name}()`)
    return { kind: 'Call', start, end: this.lastEnd, name, nameEnd, args }
  }

  parseArgument(): A.Expr {
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

  /** `[name =] expr` or `(a, b) = expr`. */
  parseNamedExpr(): A.NamedExpr {
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

  parseNamedExprList(): A.NamedExpr[] {
    return this.list(() => this.parseNamedExpr())
  }
}
