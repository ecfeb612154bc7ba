/**
 * @module
 * The one error the KQL engine raises on purpose. It is independent of the domain's errors: the
 * queries service wraps it into an InvalidInputError (design §7, style notes §6.6).
 */

export type KqlErrorKind =
  /** The text does not parse. */
  | 'syntax'
  /** It parses, but a name, a type or an argument count is wrong. */
  | 'semantic'
  /** Valid Kusto that this engine does not implement: the message names the operator or function. */
  | 'unsupported'
  /** Raised while running (e.g. an intermediate result over the engine's memory cap). */
  | 'runtime'

export interface SourcePosition {
  /** 1-based line. */
  readonly line: number
  /** 1-based column, counted in UTF-16 code units like editors do. */
  readonly column: number
  /** 0-based offset into the query text. */
  readonly offset: number
}

/**
 * A positioned error. `message` is complete and meant for a person: it starts with
 * "line L, column C:" when a position is known, says what was found and what was expected, and
 * for unknown names suggests the closest known one ("did you mean 'Temperature'?").
 */
export class KqlError extends Error {
  readonly kind: KqlErrorKind
  readonly position: SourcePosition | undefined

  constructor(kind: KqlErrorKind, detail: string, position?: SourcePosition) {
    super(position ? `line ${position.line}, column ${position.column}: ${detail}` : detail)
    this.name = 'KqlError'
    this.kind = kind
    this.position = position
  }
}

/** Turns an offset into a line/column position. */
export function positionAt(text: string, offset: number): SourcePosition {
  let line = 1
  let lineStart = 0
  const end = Math.min(Math.max(offset, 0), text.length)
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return { line, column: end - lineStart + 1, offset: end }
}

/**
 * The database refused the data of a pushed-down statement where the in-memory evaluator would
 * not fail (a NaN SQLite cannot hold, an integer or float overflow, a zero divisor): the engine
 * then evaluates that part of the plan in memory instead. SqlSource implementations throw it
 * (storage maps PostgreSQL's data exceptions, SQLSTATE class 22, to it).
 */
export class SqlRefusalError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'SqlRefusalError'
  }
}
