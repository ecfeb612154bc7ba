/**
 * Spec 1 and issue 8: accepting a proposal is possible only in the portal. The review half of the
 * proposals service (`services.proposalReview`: accept, reject) must not be reachable from the HTTP
 * API or MCP: no module under src/http/ or src/mcp/ may name it, and MCP is handed the filing half
 * only. Walks the sources and fails on an offending line.
 */
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const REVIEW = /proposalReview|ProposalReview|\b[Rr]eview\w*\.(accept|reject)\(/

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = join(dir, name)
    return statSync(full).isDirectory() ? files(full) : name.endsWith('.ts') && !name.endsWith('.test.ts') ? [full] : []
  })
}

describe('proposal review stays in the portal', () => {
  for (const layer of ['src/http', 'src/mcp']) {
    it(`${layer}/ never reaches the review half of the proposals service`, () => {
      const offenders = files(join(ROOT, layer)).flatMap((file) =>
        readFileSync(file, 'utf8')
          .split('\n')
          .map((line, i) => ({ line, i }))
          .filter(({ line }) => REVIEW.test(line))
          .map(({ line, i }) => `${relative(ROOT, file)}:${i + 1}: ${line.trim()}`),
      )
      assert.deepEqual(offenders, [])
    })
  }

  it('the MCP server is given the filing half only (its dependencies name no review service)', () => {
    const deps = readFileSync(join(ROOT, 'src/mcp/mcp-server.ts'), 'utf8').match(/export interface McpDeps \{([\s\S]*?)\n\}/)?.[1] ?? ''
    assert.match(deps, /readonly proposals: ProposalService/)
    assert.doesNotMatch(deps, REVIEW)
  })

  it('the rule catches an offending line (self-check)', () => {
    assert.ok(REVIEW.test('await services.proposalReview.accept(reviewer, ws, id)'))
    assert.ok(REVIEW.test('review.reject(x)'))
    assert.ok(!REVIEW.test('await services.proposals.create(caller, input, "mcp")'))
  })
})
