/**
 * @module
 * MCP tools to file and follow proposals (issue 8). An AI client can propose a change to the
 * workspace configuration and read a proposal's status; it can never accept, approve, commit,
 * merge or apply anything — that happens in the portal, by a different person. These tools are
 * given the filing half of the proposals service only.
 */
import type { McpServer } from '@modelcontextprotocol/server'
import { z } from 'zod'
import type { Caller } from '../domain/access/caller.js'
import {
  MAX_CHANGES,
  MAX_RATIONALE_LENGTH,
  PROPOSAL_STATUSES,
  type Proposal,
  type ProposalService,
  proposedChangeSchema,
} from '../domain/proposals/index.js'
import { proposalReviewPath } from '../shared/portal-links.js'
import { missingRightResult, runTool, structuredResult } from './tool-result.js'

export interface ProposalToolDeps {
  readonly proposals: ProposalService
  readonly publicUrl: string
  readonly onUnexpected: (error: unknown, correlationId: string) => void
}

const proposalView = z.object({
  proposalId: z.string(),
  status: z
    .enum(PROPOSAL_STATUSES)
    .describe(
      'open: waiting for review in the portal; accepted: committed; rejected: see decisionReason; superseded: the configuration changed underneath it, file a new one.',
    ),
  author: z.string(),
  rationale: z.string(),
  diff: z.string().describe('The change against the configuration it was made on: + added, ~ changed, - removed.'),
  createdAt: z.string(),
  decidedAt: z.string().nullable(),
  decidedBy: z.string().nullable(),
  decisionReason: z.string().nullable(),
  commitId: z.string().nullable().describe('The configuration commit an accepted proposal made.'),
  reviewUrl: z.string().describe('Where a reviewer accepts or rejects it (the portal).'),
})

export function registerProposalTools(server: McpServer, caller: Caller, deps: ProposalToolDeps): void {
  const { proposals, publicUrl, onUnexpected } = deps
  if (!caller.rights.has('proposals:create')) return
  // the Proposals page opened at this proposal (it survives the sign-in page; src/shared/portal-links.ts)
  const reviewUrlOf = (p: Proposal) => `${publicUrl}${proposalReviewPath(p.id)}`

  const viewOf = (p: Proposal): z.output<typeof proposalView> => ({
    proposalId: p.id,
    status: p.status,
    author: p.author.name,
    rationale: p.rationale,
    diff: p.diff.text,
    createdAt: new Date(p.createdAt).toISOString(),
    decidedAt: p.decidedAt === undefined ? null : new Date(p.decidedAt).toISOString(),
    decidedBy: p.decidedBy?.name ?? null,
    decisionReason: p.decisionReason ?? null,
    commitId: p.commitId ?? null,
    reviewUrl: reviewUrlOf(p),
  })
  const describe = (p: Proposal): string =>
    [
      `Proposal ${p.id} by ${p.author.name}: ${p.status}${p.decidedBy ? ` (${p.decidedBy.name}, ${new Date(p.decidedAt!).toISOString()})` : ''}.`,
      ...(p.decisionReason ? [`Reason: ${p.decisionReason}`] : []),
      ...(p.commitId ? [`Committed as configuration commit ${p.commitId}.`] : []),
      `Rationale: ${p.rationale}`,
      'Diff:',
      p.diff.text,
    ].join('\n')

  server.registerTool(
    'propose_change',
    {
      title: 'Propose a change to warm queries',
      description: [
        'Files a proposal to create, update or delete warm queries (saved, approved KQL queries). Nothing changes until a person with review rights accepts it in the portal;',
        'this tool cannot accept, approve or apply anything, and the author cannot accept their own proposal.',
        'Give a rationale a reviewer can judge, and one change per warm query: create needs lookup and query (KQL, checked now: errors name the line and column);',
        'update needs lookup and any of query, path, description (null removes path or description); delete needs lookup.',
        'Returns the proposal id, its status (open) and the diff against the current configuration. Follow it with get_proposal.',
      ].join(' '),
      inputSchema: z.object({
        rationale: z.string().min(1).max(MAX_RATIONALE_LENGTH).describe('Why the change is wanted, for the reviewer.'),
        changes: z
          .array(proposedChangeSchema)
          .min(1)
          .max(MAX_CHANGES)
          .describe(`The changes, at most ${MAX_CHANGES}, at most one per warm query.`),
      }),
      outputSchema: proposalView.extend({ message: z.string() }),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (input) =>
      runTool(async () => {
        if (!caller.rights.has('proposals:create')) return missingRightResult('proposals:create', 'propose_change')
        const proposal = await proposals.create(caller, input, 'mcp')
        const message = `Proposal ${proposal.id} is open. It is not applied: a person with review rights (not you or the token's owner) must accept it in the portal (${reviewUrlOf(proposal)}).`
        return structuredResult({ ...viewOf(proposal), message }, `${message}\n\n${describe(proposal)}`)
      }, onUnexpected),
  )

  server.registerTool(
    'get_proposal',
    {
      title: 'Read a proposal',
      description:
        "Returns a proposal's status (open, accepted, rejected, superseded), its diff, and who decided it and why. Use it to follow a proposal filed with propose_change.",
      inputSchema: z.object({ proposalId: z.string().min(1).max(100).describe('The id propose_change returned (prop_…).') }),
      outputSchema: proposalView,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ proposalId }) =>
      runTool(async () => {
        if (!caller.rights.has('proposals:create')) return missingRightResult('proposals:create', 'get_proposal')
        const proposal = await proposals.get(caller.workspaceId, proposalId.trim())
        return structuredResult(viewOf(proposal), describe(proposal))
      }, onUnexpected),
  )

  server.registerTool(
    'list_proposals',
    {
      title: 'List proposals',
      description: "Lists the workspace's proposals, newest first, optionally only those with one status or only the token owner's own.",
      inputSchema: z.object({
        status: z.enum(PROPOSAL_STATUSES).optional().describe('Only proposals with this status.'),
        mine: z.boolean().default(false).describe("Only proposals filed by the token's owner."),
        limit: z.number().int().min(1).max(100).default(20),
      }),
      outputSchema: z.object({ proposals: z.array(proposalView) }),
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    ({ status, mine, limit }) =>
      runTool(async () => {
        if (!caller.rights.has('proposals:create')) return missingRightResult('proposals:create', 'list_proposals')
        const found = await proposals.list(caller.workspaceId, {
          ...(status ? { status } : {}),
          ...(mine ? { authorId: caller.accountId } : {}),
          limit,
        })
        const text = found.length
          ? found
              .map(
                (p) => `- ${p.id} ${p.status} by ${p.author.name} on ${new Date(p.createdAt).toISOString()}: ${p.rationale.split('\n')[0]}`,
              )
              .join('\n')
          : 'No proposals match.'
        return structuredResult({ proposals: found.map(viewOf) }, text)
      }, onUnexpected),
  )
}
