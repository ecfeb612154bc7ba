/**
 * @module
 * Workspaces and accounts: what operators manage with the CLI (`workspace create`, `account add`)
 * and administrators in the portal.
 */

import { randomBytes } from 'node:crypto'
import type { Clock } from '../../shared/clock.js'
import { newId } from '../../shared/ids.js'
import { InvalidInputError, NotFoundError } from '../errors.js'
import type { Stores } from '../stores.js'
import { WORKSPACE_NAME_RE, type Workspace } from '../workspaces/index.js'
import type { Account, Membership } from './access-store.js'
import { hashPassword, type ScryptCost, verifyPassword } from './passwords.js'
import { isRole, ROLES, type Role } from './rights.js'

/** Account names: letters, digits, dots, dashes, underscores and @ (e-mail addresses work). */
export const ACCOUNT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/

export interface AdminServiceDeps {
  /** Workspaces, accounts, memberships and password hashes (`access`). */
  readonly stores: Pick<Stores, 'access' | 'transaction'>
  readonly clock: Clock
  readonly scryptCost?: ScryptCost
}

/** The declared contract of workspace and account administration; `createAdminService` is checked against it. */
export interface AdminService {
  /** Creates a workspace; throws InvalidInputError for a name outside WORKSPACE_NAME_RE or one already taken. */
  createWorkspace(name: string): Promise<Workspace>
  /** The workspace with this name; throws NotFoundError. */
  workspaceByName(name: string): Promise<Workspace>
  listWorkspaces(): Promise<Workspace[]>
  /**
   * Creates an account, its membership of `workspaceId` with `role`, and its password hash (when
   * given) in one transaction. Throws InvalidInputError for a bad or taken name, an unknown role
   * or a weak password.
   */
  addAccount(input: { name: string; displayName?: string; workspaceId: string; role: string; password?: string }): Promise<Account>
  /** The account with this name; throws NotFoundError. */
  accountByName(name: string): Promise<Account>
  /** Sets the account's role in the workspace; throws NotFoundError (account) or InvalidInputError (role). */
  setRole(workspaceId: string, accountName: string, role: string): Promise<Membership>
  /** Disables or re-enables an account; throws NotFoundError. */
  setDisabled(accountName: string, disabled: boolean): Promise<void>
  /** Replaces the password hash; throws InvalidInputError for a weak password. */
  setPassword(accountName: string, password: string): Promise<void>
  /**
   * The account when `password` is its password; undefined for a wrong password, an unknown or
   * disabled account, or one without a password. MUST take the same time for an unknown name as for
   * a real check, so names cannot be told apart by timing.
   */
  checkPassword(accountName: string, password: string): Promise<Account | undefined>
  /** The workspace's members with their roles. */
  listMembers(workspaceId: string): Promise<{ account: Account; role: Role }[]>
  /** An account's membership of a workspace (its role there), or undefined. */
  membership(workspaceId: string, accountId: string): Promise<Membership | undefined>
}

export function createAdminService(deps: AdminServiceDeps): AdminService {
  const { stores, clock } = deps

  async function createWorkspace(name: string): Promise<Workspace> {
    if (!WORKSPACE_NAME_RE.test(name))
      throw new InvalidInputError(`"${name}" is not a valid workspace name: use lower-case letters, digits and dashes`)
    if (await stores.access.workspaceByName(name)) throw new InvalidInputError(`a workspace named ${name} already exists`)
    const workspace: Workspace = { id: newId('wks'), name, createdAt: clock.now() }
    await stores.access.insertWorkspace(workspace)
    return workspace
  }

  async function workspaceByName(name: string): Promise<Workspace> {
    const workspace = await stores.access.workspaceByName(name)
    if (!workspace) throw new NotFoundError(`no workspace named ${name}`)
    return workspace
  }

  function parseRole(role: string): Role {
    if (!isRole(role)) throw new InvalidInputError(`unknown role "${role}"; roles are ${ROLES.join(', ')}`)
    return role
  }

  async function addAccount(input: {
    name: string
    displayName?: string
    workspaceId: string
    role: string
    password?: string
  }): Promise<Account> {
    if (!ACCOUNT_NAME_RE.test(input.name)) throw new InvalidInputError(`"${input.name}" is not a valid account name`)
    const role = parseRole(input.role)
    if (await stores.access.accountByName(input.name)) throw new InvalidInputError(`an account named ${input.name} already exists`)
    if (input.password !== undefined) checkPasswordStrength(input.password)
    const account: Account = {
      id: newId('acc'),
      name: input.name,
      displayName: input.displayName?.trim() || input.name,
      disabled: false,
      createdAt: clock.now(),
    }
    const hash = input.password === undefined ? undefined : await hashPassword(input.password, deps.scryptCost)
    await stores.transaction(async (tx) => {
      await tx.access.insertAccount(account)
      await tx.access.setMembership({ workspaceId: input.workspaceId, accountId: account.id, role })
      if (hash) await tx.access.setPasswordHash(account.id, hash)
    })
    return account
  }

  async function accountByName(name: string): Promise<Account> {
    const account = await stores.access.accountByName(name)
    if (!account) throw new NotFoundError(`no account named ${name}`)
    return account
  }

  async function setRole(workspaceId: string, accountName: string, role: string): Promise<Membership> {
    const account = await accountByName(accountName)
    const membership: Membership = { workspaceId, accountId: account.id, role: parseRole(role) }
    await stores.access.setMembership(membership)
    return membership
  }

  async function setDisabled(accountName: string, disabled: boolean): Promise<void> {
    const account = await accountByName(accountName)
    await stores.access.setAccountDisabled(account.id, disabled)
  }

  async function setPassword(accountName: string, password: string): Promise<void> {
    checkPasswordStrength(password)
    const account = await accountByName(accountName)
    await stores.access.setPasswordHash(account.id, await hashPassword(password, deps.scryptCost))
  }

  // A hash of a random password at this deployment's cost (made once): checking it costs what
  // checking a real account's password costs, whatever cost the deployment configured.
  let dummy: Promise<string> | undefined
  const dummyHash = (): Promise<string> => {
    dummy ??= hashPassword(randomBytes(18).toString('base64'), deps.scryptCost)
    return dummy
  }

  /** Checks a password; false for unknown accounts, disabled accounts and accounts without one. */
  async function checkPassword(accountName: string, password: string): Promise<Account | undefined> {
    const account = await stores.access.accountByName(accountName)
    const hash = account && !account.disabled ? await stores.access.passwordHash(account.id) : undefined
    if (!account || !hash) {
      // Spend the same time as a real check so unknown names cannot be told apart by timing.
      await verifyPassword(password, await dummyHash())
      return undefined
    }
    return (await verifyPassword(password, hash)) ? account : undefined
  }

  async function listMembers(workspaceId: string): Promise<{ account: Account; role: Role }[]> {
    const memberships = await stores.access.listMemberships(workspaceId)
    const accounts = new Map((await stores.access.listAccounts()).map((a) => [a.id, a]))
    return memberships.flatMap((m) => {
      const account = accounts.get(m.accountId)
      return account ? [{ account, role: m.role }] : []
    })
  }

  return {
    createWorkspace,
    workspaceByName,
    listWorkspaces: () => stores.access.listWorkspaces(),
    addAccount,
    accountByName,
    setRole,
    setDisabled,
    setPassword,
    checkPassword,
    listMembers,
    membership: (workspaceId: string, accountId: string): Promise<Membership | undefined> =>
      stores.access.membership(workspaceId, accountId),
  }
}

export function checkPasswordStrength(password: string): void {
  if (password.length < 12) throw new InvalidInputError('a password needs at least 12 characters')
  if (password.length > 1024) throw new InvalidInputError('a password may have at most 1024 characters')
}
