/**
 * @module
 * Workspaces: the unit of isolation. A token belongs to one workspace and sees nothing of another.
 */

export interface Workspace {
  readonly id: string
  /** Unique, human-chosen name (`demo`, `plant-a`); the CLI's `--workspace` takes it. */
  readonly name: string
  readonly createdAt: number
}

/** Workspace names: lower-case letters, digits and dashes, 1–63 characters, starting with a letter or digit. */
export const WORKSPACE_NAME_RE = /^[a-z0-9][a-z0-9-]{0,62}$/
