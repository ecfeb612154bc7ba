/**
 * @module
 * A loopback HTTP proxy that adds a header to every request: the MCP conformance tool cannot send
 * an Authorization header, so it talks to the server through this (research note mcp.md §3.1).
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface AuthProxy {
  readonly url: string
  /** Requests forwarded so far (method and path), to show the tool really went through. */
  readonly forwarded: string[]
  close(): Promise<void>
}

export async function startAuthProxy(target: string, headers: Record<string, string>): Promise<AuthProxy> {
  const to = new URL(target)
  const forwarded: string[] = []
  const server: Server = createServer((req, res) => {
    forwarded.push(`${req.method} ${req.url}`)
    const upstream = httpRequest(
      {
        host: to.hostname,
        port: to.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: to.host, ...headers },
      },
      (response) => {
        res.writeHead(response.statusCode ?? 502, response.headers)
        response.pipe(res)
      },
    )
    upstream.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' })
      res.end(`proxy error: ${error.message}`)
    })
    req.pipe(upstream)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    forwarded,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
