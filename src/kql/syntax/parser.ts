/**
 * @module
 * Hand-written recursive-descent parser for KQL (design §7): statements and the pipeline; tabular
 * sources are in source-parser.ts, the class this one extends. Tabular operators are read through
 * one table from operator keyword to parse function (operator-parsers.ts), scalar expressions by a
 * Pratt parser (expression-parser.ts, literals in literal-parser.ts); token plumbing and `list()`,
 * the one list reader, are in token-stream.ts. Every error is a KqlError('syntax') naming line,
 * column, what was expected and what was found; operators Kusto has but this engine does not are
 * KqlError('unsupported').
 */
import { notSupported, UNSUPPORTED_OPERATORS } from '../unsupported.js'
import type * as A from './ast.js'
import { OPERATOR_PARSERS } from './operator-parsers.js'
import { SourceParser } from './source-parser.js'

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

export class Parser extends SourceParser {
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

  parseStatement(): A.Statement {
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

  parseLet(): A.LetStatement {
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
  looksLikeLambda(): boolean {
    if (!this.isPunct('(')) return false
    if (this.isPunct(')', 1)) return this.isPunct('{', 2)
    return this.isName(1) && this.isPunct(':', 2)
  }

  parseLambda(start: number, isView: boolean): A.Lambda {
    const params = this.parenList(() => this.parseParam(), 'to close the parameter list')
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

  parseParam(): A.Param {
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

  parseSet(): A.SetStatement {
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

  parsePattern(): A.PatternStatement {
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
    const params = this.list(() => stringParam('an argument name'))
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
      const args = this.list(() => stringValue('a string argument value'))
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

  parseDeclare(): A.DeclareParametersStatement {
    const start = this.advance().start
    this.advance()
    const params = this.parenList(() => this.parseParam())
    return { kind: 'DeclareParameters', start, end: this.lastEnd, params }
  }

  /** The operator name after `|`, joining dashed names (`project-away`, `mv-expand`). */
  readOperatorName(): { name: string; start: number } {
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

  /** One tabular operator after `|`: its keyword, then the operator table's parse function. */
  parseOperator(): A.Operator {
    const { name, start } = this.readOperatorName()
    const parse = OPERATOR_PARSERS.get(name)
    if (parse) return parse(this, name, start)
    if (UNSUPPORTED_OPERATORS.has(name))
      throw this.error(start, notSupported(`the '${name}' operator`, UNSUPPORTED_OPERATORS.get(name)!), 'unsupported')
    throw this.error(start, `unknown tabular operator '${name}': expected where, project, extend, summarize, join, sort, take, top, ...`)
  }
}
