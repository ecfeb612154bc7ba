/**
 * @module
 * Real MCP clients of both protocol eras over Streamable HTTP with a static bearer header, as
 * desktop clients are configured: the v1 SDK client (`@modelcontextprotocol/sdk`, initialize-based,
 * ≤ 2025-11-25) and the v2 client (`@modelcontextprotocol/client`) pinned to 2026-07-28 (no
 * handshake, per-request `_meta` and the `Mcp-*` headers).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { JsonBody } from './json-body.js'

export const ERAS = ['legacy', 'modern'] as const
export type Era = (typeof ERAS)[number]

/** What the tests use of either client (the two SDKs' methods have these shapes). */
export interface McpTestClient {
  readonly era: Era
  /** The protocol revision in use after connecting. */
  readonly protocolVersion: string | undefined
  listTools(): Promise<{
    tools: {
      name: string
      description?: string
      inputSchema: Record<string, unknown>
      outputSchema?: Record<string, unknown>
      annotations?: Record<string, unknown>
    }[]
  }>
  callTool(params: {
    name: string
    arguments?: Record<string, unknown>
  }): Promise<{ content: unknown[]; structuredContent?: Record<string, JsonBody>; isError?: boolean }>
  listResources(): Promise<{ resources: { uri: string; name: string; mimeType?: string; description?: string }[] }>
  readResource(params: { uri: string }): Promise<{ contents: { uri: string; mimeType?: string; text?: string }[] }>
  ping(): Promise<unknown>
  close(): Promise<void>
}

/** Connects a client of `era` to `url`; `headers` are sent on every request (Authorization, Origin). */
export async function connectMcp(era: Era, url: string, headers: Record<string, string>): Promise<McpTestClient> {
  const info = { name: `provenant-test-${era}`, version: '1.0.0' }
  if (era === 'legacy') {
    const client = new LegacyClient(info)
    await client.connect(new LegacyTransport(new URL(url), { requestInit: { headers } }))
    return Object.assign(client as unknown as McpTestClient, {
      era,
      protocolVersion: (client.transport as { protocolVersion?: string } | undefined)?.protocolVersion,
    })
  }
  const client = new Client(info, { versionNegotiation: { mode: { pin: '2026-07-28' } } })
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }))
  return Object.assign(client as unknown as McpTestClient, { era, protocolVersion: client.getNegotiatedProtocolVersion() })
}

/** The text of a tool result's first content block. */
export function textOf(result: { content: unknown[] }): string {
  const first = result.content[0] as { type?: string; text?: string } | undefined
  return first?.type === 'text' ? (first.text ?? '') : ''
}
