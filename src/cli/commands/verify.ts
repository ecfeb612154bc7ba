/**
 * @module
 * `provenant verify` (whole-chain verification against the store) and `provenant verify-export`
 * (an exported file, offline, with no server and no database): issue 4, item 7. Both print the
 * verdict with the API's field names (spec 2.7), one JSON object per line, and exit 0 when
 * everything verifies, 1 when anything does not, 2 on a usage error.
 */
import { createReadStream, existsSync, readFileSync } from 'node:fs'
import { InvalidInputError } from '../../domain/errors.js'
import {
  type ContainerRef,
  ExportFormatError,
  headsContainer,
  isExportValid,
  NoteError,
  type NoteVerifierKey,
  parseVerifierKey,
  platformContainer,
  scopeContainer,
  scopeKeyOf,
  type VerifyExportResult,
  type VerifyResult,
  verifyExport,
} from '../../domain/ledger/index.js'
import { type Command, configFrom, parse, UsageError, withServices } from '../cli-support.js'

function readOptionalFile(path: string | undefined, what: string): string | null {
  if (path === undefined) return null
  if (!existsSync(path)) throw new UsageError(`${what} file ${path} does not exist`)
  return readFileSync(path, 'utf8')
}

function verdictLine(prefix: Record<string, unknown>, result: VerifyResult): { line: string; ok: boolean } {
  if (result.kind === 'record-not-found') return { line: JSON.stringify({ ...prefix, error: result.message }), ok: false }
  if (result.kind === 'invalid-trusted-checkpoint') return { line: JSON.stringify({ ...prefix, error: result.message }), ok: false }
  const ok = result.verdict.ChainValid && result.verdict.Valid !== false
  return { line: JSON.stringify({ ...prefix, ...result.verdict }), ok }
}

export const verifyCommand: Command = {
  name: 'verify',
  summary: 'verify activity-log chains against the store (every digest, link and checkpoint)',
  usage: `provenant verify [--workspace NAME] [--scope KEY | --platform | --heads] [--record RECORDID] [--trusted-checkpoint FILE]

  Without --scope/--platform/--heads: every container of the workspace (of every workspace when
  there are several and --workspace is not given), including containers the heads log names but
  the store no longer holds. Prints one JSON verdict per container (Valid, ChainValid, Empty,
  BrokenAt, ForkDetected, Reason); exit 0 when all are valid, 1 otherwise.

  --scope KEY                the chain of one ScopeKey
  --platform                 the workspace's Platform-Config records
  --heads                    the workspace heads log
  --record RECORDID          also check this record (12 digits), as the API's RecordID
  --trusted-checkpoint FILE  a signed checkpoint kept earlier (text of GET /oi-api/provenance/checkpoints/latest)`,
  async run(argv) {
    const { values } = parse(
      argv,
      {
        workspace: { type: 'string' },
        scope: { type: 'string' },
        platform: { type: 'boolean' },
        heads: { type: 'boolean' },
        record: { type: 'string' },
        'trusted-checkpoint': { type: 'string' },
      },
      false,
    )
    const picks = [values.scope !== undefined, values.platform === true, values.heads === true].filter(Boolean).length
    if (picks > 1) throw new UsageError('give at most one of --scope, --platform and --heads')
    // The RecordID goes to the ledger as typed; it parses it as for the API and the portal.
    const recordId = values.record ?? null
    if (recordId !== null && picks === 0)
      throw new UsageError('--record needs --scope, --platform or --heads (which container the record is in)')
    const trustedCheckpoint = readOptionalFile(values['trusted-checkpoint'], 'trusted checkpoint')
    if (trustedCheckpoint !== null && picks === 0)
      throw new UsageError('--trusted-checkpoint needs --scope, --platform or --heads (the container it belongs to)')
    await withServices(configFrom(values), async (services) => {
      const all = await services.admin.listWorkspaces()
      let workspaces = all
      if (values.workspace !== undefined) workspaces = [await services.admin.workspaceByName(values.workspace)]
      else if (picks > 0 && all.length !== 1) {
        if (all.length === 0) throw new UsageError('there is no workspace yet')
        throw new UsageError(`several workspaces exist (${all.map((w) => w.name).join(', ')}); say which with --workspace NAME`)
      }
      let failures = 0
      let count = 0
      for (const workspace of workspaces) {
        let containers: ContainerRef[]
        if (values.scope !== undefined) containers = [scopeContainer(workspace.id, values.scope)]
        else if (values.platform) containers = [platformContainer(workspace.id)]
        else if (values.heads) containers = [headsContainer(workspace.id)]
        else containers = await services.ledger.containers(workspace.id)
        for (const container of containers) {
          count++
          const result = await services.ledgerCommands
            .verifyContainer(container, { recordId, trustedCheckpoint })
            .catch((error: unknown) => {
              // The only input verifyContainer refuses is a malformed RecordID: a usage error (exit 2).
              throw error instanceof InvalidInputError ? new UsageError(error.message) : error
            })
          const { line, ok } = verdictLine(
            { workspace: workspace.name, container: container.containerId, ScopeKey: scopeKeyOf(container.containerId) },
            result,
          )
          console.log(line)
          if (!ok) failures++
        }
      }
      console.error(`${count} container${count === 1 ? '' : 's'} verified: ${failures === 0 ? 'all valid' : `${failures} NOT valid`}`)
      if (failures > 0) process.exitCode = 1
    })
  },
}

/** A verifier key given as a vkey, a file holding one (or the JSON of the well-known URL), or that URL. */
async function loadPublicKey(spec: string): Promise<NoteVerifierKey> {
  let text = spec.trim()
  if (/^https?:\/\//i.test(text)) {
    const response = await fetch(text)
    if (!response.ok) throw new UsageError(`fetching the public key from ${text} answered ${response.status}`)
    text = (await response.text()).trim()
  } else if (existsSync(text)) {
    text = readFileSync(text, 'utf8').trim()
  }
  if (text.startsWith('{')) {
    try {
      const doc = JSON.parse(text) as { verifierKey?: unknown }
      if (typeof doc.verifierKey === 'string') text = doc.verifierKey
    } catch {
      throw new UsageError('the public key document is not valid JSON')
    }
  }
  try {
    return parseVerifierKey(text)
  } catch (error) {
    if (error instanceof NoteError) throw new UsageError(`--public-key: ${error.message}`)
    throw error
  }
}

export const verifyExportCommand: Command = {
  name: 'verify-export',
  summary: 'verify an exported activity log (JSON or CSV) offline, without a server',
  usage: `provenant verify-export FILE [--public-key KEY] [--trusted-checkpoint FILE]

  Recomputes every record's digest and link, checks the file's checkpoints and their proofs and
  the seal over its header, and prints the verdict (Valid, ChainValid, Empty, BrokenAt,
  ForkDetected, Reason) with what it found about the file. Exit 0 when the file verifies, 1 when
  it does not (any edit makes it fail), 2 on a usage error. Needs no server and no database.

  --public-key KEY           the server's checkpoint verifier key: the vkey text, a file holding it,
                             or the URL <server>/.well-known/provenant/activity-log-key.
                             Without it, the key inside the file is trusted, which shows only that
                             the file is consistent with itself, not that it came from the server.
  --trusted-checkpoint FILE  a checkpoint kept earlier, compared like the API's TrustedCheckpoint`,
  async run(argv) {
    const { values, positionals } = parse(argv, {
      'public-key': { type: 'string' },
      'trusted-checkpoint': { type: 'string' },
    })
    const [file, ...extra] = positionals
    if (!file) throw new UsageError('verify-export needs the exported FILE')
    if (extra.length > 0) throw new UsageError(`unexpected argument ${extra[0]}`)
    if (!existsSync(file)) throw new UsageError(`${file} does not exist`)
    const trustedKeys = values['public-key'] === undefined ? [] : [await loadPublicKey(values['public-key'])]
    const trustedCheckpoint = readOptionalFile(values['trusted-checkpoint'], 'trusted checkpoint')
    if (trustedKeys.length === 0)
      console.error(
        'warning: no --public-key given; trusting the key written in the file, which proves only that the file is consistent with itself',
      )
    let checked: VerifyExportResult
    try {
      checked = await verifyExport(createReadStream(file), { trustedKeys, trustEmbeddedKeys: trustedKeys.length === 0, trustedCheckpoint })
    } catch (error) {
      if (error instanceof ExportFormatError) {
        return printUnverifiable(`MALFORMED: ${error.message}`, { file })
      }
      throw error
    }
    const { result, header, recordsRead, recordCountMatches, seal } = checked
    const exportInfo = {
      file,
      workspaceId: header.workspaceId,
      containerId: header.containerId,
      ScopeKey: header.ScopeKey,
      first: header.first?.RecordID ?? null,
      last: header.last?.RecordID ?? null,
      records: recordsRead,
      recordCountMatches,
      seal: seal.status,
      sealMessage: seal.message,
      ...(result.kind === 'verdict'
        ? { coveredSize: result.facts.coveredSize, checkpointsIgnored: result.facts.checkpointsIgnored.map((c) => c.reason) }
        : {}),
    }
    if (result.kind !== 'verdict') {
      return printUnverifiable(result.message, exportInfo)
    }
    console.log(JSON.stringify({ ...result.verdict, Export: exportInfo }))
    const ok = isExportValid(checked)
    if (!ok) {
      const why = [
        !result.verdict.ChainValid ? `the chain does not verify (${result.verdict.Reason})` : null,
        seal.status !== 'valid' ? seal.message : null,
        !recordCountMatches ? `the file holds ${recordsRead} records but its trailer says ${checked.trailer.recordCount}` : null,
        result.facts.checkpointsIgnored.length > 0
          ? `${result.facts.checkpointsIgnored.length} checkpoint(s) in the file could not be checked against its records (${result.facts.checkpointsIgnored.map((c) => c.reason).join('; ')})`
          : null,
        checked.trailer.proofProblem !== undefined ? `the export says: ${checked.trailer.proofProblem}` : null,
      ].filter(Boolean)
      console.error(`NOT valid: ${why.join('; ')}`)
      process.exitCode = 1
    } else {
      console.error(
        `valid: ${recordsRead} record${recordsRead === 1 ? '' : 's'}${recordsRead > 0 && result.facts.coveredSize >= result.facts.lastSeq ? ', covered by a signed checkpoint' : ''}`,
      )
    }
  },
}

/** The verdict shape for an export that could not be verified at all (no chain verdict): exit code 1. */
function printUnverifiable(reason: string, exportInfo: Record<string, unknown>): void {
  console.log(
    JSON.stringify({
      Valid: null,
      ChainValid: false,
      Empty: false,
      BrokenAt: null,
      ForkDetected: false,
      Reason: reason,
      Export: exportInfo,
    }),
  )
  process.exitCode = 1
}
