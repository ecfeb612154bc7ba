/**
 * @module
 * Portal addresses that other edges hand out (the MCP `reviewUrl`, the Explore page's proposal
 * answer). The proposal id travels in the query string, not only in the fragment: a fragment never
 * reaches the server, so it was lost when a signed-out reviewer went through the sign-in page.
 */

/** The Proposals page opened at one proposal (`?proposal=` shows it first; `#id` scrolls to it). */
export function proposalReviewPath(proposalId: string): string {
  return `/portal/proposals?proposal=${encodeURIComponent(proposalId)}#${encodeURIComponent(proposalId)}`
}
