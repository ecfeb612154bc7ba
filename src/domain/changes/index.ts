/**
 * @module
 * Committed workspace changes, the change stream's source (spec 4.10). Other features import from
 * here, never from the files behind it.
 */
export type { ChangeKind, ChangeStore, NewWorkspaceChange, WorkspaceChange } from './workspace-change.js'
