/**
 * @module
 * Export files in a directory shared by every process (`<data>/exports` unless configured),
 * `<workspace id>/<file id>.<ext>`, written as `.part` and renamed into place when complete.
 * Downloads go through our own URL, `/oi-api/downloads/files/<file id>?expires=…&signature=…`.
 */
import { type FileHandle, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { DOWNLOAD_PATH_PREFIX, type DownloadSigner } from '../../domain/exports/download-signature.js'
import type { ExportFileStorage, OpenedFile, StrayFile } from '../../domain/exports/export-file-storage.js'
import { DOWNLOAD_URL_LIFETIME_MS } from '../../domain/exports/export-request.js'
import { createPartFile } from './part-file.js'

export interface DirectoryFileStorageOptions {
  readonly dir: string
  /** Base URL clients reach this server at. */
  readonly publicUrl: string
  readonly signer: DownloadSigner
}

/** `<file id>.<ext>` or `<file id>.<ext>.part`, as this storage names files. */
export const FILE_NAME_RE = /^(exp_[a-z2-7]+)\.(?:csv|jsonl)(\.part)?$/

/** Export files under `dir/<workspace id>/` last modified before `before`. */
export async function findStrays(dir: string, before: number, workspaceDirs: boolean): Promise<StrayFile[]> {
  const strays: StrayFile[] = []
  const scan = async (folder: string) => {
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const m = FILE_NAME_RE.exec(name)
      if (!m) continue
      const path = join(folder, name)
      const info = await stat(path).catch(() => undefined)
      if (!info?.isFile() || info.mtimeMs >= before) continue
      strays.push({ fileId: m[1]!, finished: m[2] === undefined, remove: () => rm(path, { force: true }) })
    }
  }
  if (!workspaceDirs) {
    await scan(dir)
    return strays
  }
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory() && entry.name.startsWith('wks_')) await scan(join(dir, entry.name))
  }
  return strays
}

export function createDirectoryFileStorage(options: DirectoryFileStorageOptions): ExportFileStorage {
  const pathOf = (objectKey: string) => join(options.dir, objectKey)
  return {
    kind: 'directory',
    async create(objectKey) {
      const path = pathOf(objectKey)
      await mkdir(dirname(path), { recursive: true, mode: 0o700 })
      const part = await createPartFile(`${path}.part`)
      return {
        write: (text) => part.write(text),
        async finish() {
          const facts = await part.finish()
          await rename(`${path}.part`, path)
          return facts
        },
        abort: () => part.abort(),
      }
    },
    link(file, _contentType, issuedAt) {
      const expiresAt = issuedAt + DOWNLOAD_URL_LIFETIME_MS
      const signature = options.signer.sign(file.id, expiresAt)
      return {
        url: `${options.publicUrl}${DOWNLOAD_PATH_PREFIX}${encodeURIComponent(file.id)}?expires=${expiresAt}&signature=${signature}`,
        expiresAt,
      }
    },
    async open(file): Promise<OpenedFile | undefined> {
      let handle: FileHandle
      try {
        handle = await open(pathOf(file.objectKey), 'r')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
        throw error
      }
      const { size } = await handle.stat()
      return {
        sizeBytes: size,
        stream: (range) => handle.createReadStream(range ? { start: range.start, end: range.end, autoClose: true } : { autoClose: true }),
        close: () => handle.close(),
      }
    },
    async remove(file) {
      await rm(pathOf(file.objectKey), { force: true })
      await rm(`${pathOf(file.objectKey)}.part`, { force: true })
    },
    strays: (before) => findStrays(options.dir, before, true),
  }
}
