/**
 * No record can claim a signature nobody checked (21 CFR Part 11; issue 19 item 1). A portal
 * decision is signed only with a ConfirmedSignature, which only the signatures service makes after
 * the password was re-entered: a forged one is a type error (the `@ts-expect-error` lines fail
 * `tsc` if it ever type-checks) and is refused at run time with 403, as is a genuine signature for
 * another correction, another meaning or another signer, or one spent already. Before, any caller
 * passing `channel: 'portal'` got a signature in the record.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { Caller } from '../../src/domain/access/caller.js'
import { ForbiddenError } from '../../src/domain/errors.js'
import type { PortalSession } from '../../src/domain/sessions/index.js'
import { ConfirmedSignature } from '../../src/domain/signatures/index.js'
import { BACKENDS } from '../support/backends.js'
import { applyAsAdmin, sensorConfig } from '../support/fixtures.js'
import { startTestServer, type TestServer } from '../support/test-server.js'

for (const backend of BACKENDS) {
  describe(`${backend}: a decision's signature is one the signatures service confirmed`, () => {
    let server: TestServer
    let session: (role: 'approver' | 'admin') => PortalSession
    let caller: (role: 'approver' | 'admin') => Caller
    const pending = async (): Promise<string> => {
      const created = await server.api('POST', '/oi-api/provenance/amendments', {
        token: await server.token('editor'),
        body: {
          ScopeKey: 'lab',
          entityType: 'sample',
          entityId: `S-${Math.random().toString(36).slice(2, 8)}`,
          reasonCategory: 'recalculation',
          reason: 'Dilution factor applied twice.',
          before: { result: 4.2 },
          after: { result: 2.1 },
        },
      })
      assert.equal(created.status, 200, created.text)
      assert.equal(created.body.status, 'pending')
      return created.body.id as string
    }
    const sign = async (role: 'approver' | 'admin', id: string, meaning: 'approved' | 'rejected', password = `${role}-password-123`) =>
      server.services.signatures.sign(session(role), {
        password,
        clientAddress: '192.0.2.7',
        meaning,
        subject: { kind: 'correction', id },
        record: { scopeKey: 'lab', entityType: 'sample', entityId: 'S-x' },
      })
    const confirmed = async (role: 'approver' | 'admin', id: string, meaning: 'approved' | 'rejected'): Promise<ConfirmedSignature> => {
      const outcome = await sign(role, id, meaning)
      assert.equal(outcome.outcome, 'confirmed')
      return outcome.outcome === 'confirmed' ? outcome.signature : assert.fail('not confirmed')
    }

    before(async () => {
      server = await startTestServer(backend)
      await applyAsAdmin(server, sensorConfig())
      session = (role) => ({
        account: server.accounts[role],
        workspace: server.workspace,
        role,
        publicId: 'x',
        csrfToken: 'x',
        createdAt: 0,
        expiresAt: Date.now() + 3_600_000,
      })
      caller = (role) => server.services.sessions.callerOf(session(role))
    })
    after(() => server.stop())

    it('refuses a forged signature by type and at run time, and records nothing signed', async () => {
      const id = await pending()
      const forged = {
        signer: { id: server.accounts.approver.id, name: 'approver' },
        subject: { workspaceId: server.workspace.id, kind: 'correction', id },
        meaning: 'approved' as const,
        confirmedAt: Date.now(),
      }
      await assert.rejects(
        // @ts-expect-error a look-alike object is not a ConfirmedSignature (its #private field makes the class nominal)
        server.services.corrections.approve(caller('approver'), 'lab', id, { signature: forged }),
        ForbiddenError,
      )
      const prototyped = Object.assign(Object.create(ConfirmedSignature.prototype) as ConfirmedSignature, forged)
      await assert.rejects(
        server.services.corrections.reject(caller('approver'), 'lab', id, 'no', { signature: prototyped }),
        /did not confirm/,
      )
      // @ts-expect-error the constructor is private to the signatures feature
      assert.throws(() => new ConfirmedSignature(Symbol('confirmed-signature'), forged), TypeError)
      assert.equal((await server.services.corrections.get(caller('approver'), 'lab', id)).status, 'pending')
    })

    it('refuses a genuine signature for another correction, meaning or signer, and one spent already', async () => {
      const id = await pending()
      const other = await pending()
      const forOther = await confirmed('approver', other, 'approved')
      await assert.rejects(
        server.services.corrections.approve(caller('approver'), 'lab', id, { signature: forOther }),
        /not for this decision/,
      )
      const asReject = await confirmed('approver', id, 'rejected')
      await assert.rejects(
        server.services.corrections.approve(caller('approver'), 'lab', id, { signature: asReject }),
        /not for this decision/,
      )
      const byAdmin = await confirmed('admin', id, 'approved')
      await assert.rejects(
        server.services.corrections.approve(caller('approver'), 'lab', id, { signature: byAdmin }),
        /not for this decision/,
      )
      assert.equal((await server.services.corrections.get(caller('approver'), 'lab', id)).status, 'pending')

      const good = await confirmed('approver', id, 'approved')
      const decided = await server.services.corrections.approve(caller('approver'), 'lab', id, { signature: good })
      assert.equal(decided.status, 'applied')
      assert.equal(decided.decidedVia, 'portal')
      const again = await pending()
      await assert.rejects(server.services.corrections.reject(caller('approver'), 'lab', again, 'no', { signature: good }), ForbiddenError)
    })

    it('a wrong password gives no signature and records the refusal', async () => {
      const id = await pending()
      const outcome = await sign('approver', id, 'approved', 'not-the-password')
      assert.equal(outcome.outcome, 'refused')
      assert.equal('signature' in outcome, false)
      await server.services.ledger.drain()
      const { records } = await server.services.ledger.query(
        { workspaceId: server.workspace.id, containerId: 'scope:lab' },
        { actionType: 'signature-refused' },
        { limit: 10, offset: 0, order: 'desc' },
      )
      assert.ok(
        records.some((r) => (r.details as { correctionId?: string }).correctionId === id),
        'the refusal is in the scope log',
      )
    })

    it('a decision without a signature is an API decision: its record claims no signature', async () => {
      const id = await pending()
      const decided = await server.services.corrections.reject(caller('approver'), 'lab', id, 'Not a recalculation.')
      assert.equal(decided.decidedVia, 'api')
    })
  })
}
