/**
 * @module
 * Workspaces: the tenant record and its name rule. Other features import from here, never from the
 * files behind it.
 */
export { WORKSPACE_NAME_RE, type Workspace } from './workspace.js'
