/**
 * @module
 * Tool results: a DomainError becomes a tool result with `isError: true` and a message the model
 * can act on (the connection stays up and the model reads why); anything else is a bug, logged with
 * a correlation id and reported without details (style notes 6.6).
 */
import { randomUUID } from 'node:crypto'
import type { CallToolResult } from '@modelcontextprotocol/server'
import type { ApiRight } from '../domain/access/index.js'
import { DomainError, type ErrorKind } from '../domain/errors.js'
import { scrub } from '../shared/secret-scrubber.js'

const KIND_LABEL = {
  'invalid-input': 'Invalid input',
  unauthenticated: 'Not authenticated',
  forbidden: 'Not allowed',
  'not-found': 'Not found',
  'not-provisioned': 'Not available',
  unavailable: 'Temporarily unavailable',
  integrity: 'Integrity check failed',
} as const satisfies Record<ErrorKind, string>

/** An error tool result; any registered secret is scrubbed out of the text (design §11). */
export function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text: scrub(text) }] }
}

/** What a tool handler returns when the token lacks the tool's right. */
export function missingRightResult(right: ApiRight, tool: string): CallToolResult {
  return errorResult(
    `Not allowed: ${tool} needs the right ${right}, which this token does not carry. Ask for a token with it in the portal (API Keys).`,
  )
}

/** Runs a tool body and maps errors to tool results. */
export async function runTool(
  body: () => Promise<CallToolResult>,
  onUnexpected: (error: unknown, correlationId: string) => void,
): Promise<CallToolResult> {
  try {
    return await body()
  } catch (error) {
    if (error instanceof DomainError) return errorResult(`${KIND_LABEL[error.kind]}: ${error.message}`)
    const correlationId = randomUUID()
    onUnexpected(error, correlationId)
    return errorResult(`Internal error; the server log has the details under correlation id ${correlationId}.`)
  }
}

/** A result with structured content and the same facts as text (older clients read only text). */
export function structuredResult(structured: Record<string, unknown>, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured }
}
