import { randomBytes } from 'node:crypto'
import { constants } from 'node:fs'
import { open, rename, unlink, type FileHandle } from 'node:fs/promises'
import { dirname, join } from 'node:path'
import { fileSystemError, workspaceError } from '../errors'
import { readAll, type ToolHost } from '../host'
import type { WorkspacePath } from '../workspace'
import { formatBytes } from './format'

/** The bytes of an existing regular file, read without blocking, up to the read cap. */
export async function loadFile(host: ToolHost, target: WorkspacePath, tool: string, signal: AbortSignal): Promise<Buffer> {
  const { handle, info } = await host.workspace.openToRead(target, `; ${tool} changes files, not directories`)
  try {
    if (info.size > host.limits.maxFileBytes) {
      throw workspaceError('FILE_TOO_LARGE', `${target.shown} is ${formatBytes(info.size)}, more than ${tool} handles (${formatBytes(host.limits.maxFileBytes)}); change it with shell instead`)
    }
    return await readAll(handle, info.size, signal)
  } finally {
    await handle.close()
  }
}

/**
 * Replaces the content of `target` (created, with missing directories, when
 * it does not exist) and records the new bytes as what the agent last saw.
 * The file is rewritten in place, so its mode and owner stay; a file with
 * more than one hard link is replaced instead (a new file with its mode,
 * renamed over it), so that the other names, which may lie outside the
 * workspace, keep their content.
 *
 * A write the file system refuses part way (a full disk, a quota, a file
 * size limit, an I/O error, also at close) never leaves a half-written file
 * behind when it can help it: the file grows first, by the new text's tail
 * written past the old end, so running out of space there leaves the old
 * content whole; the old bytes (`previous`, the file's content when it was
 * checked) are put back on any failure, and a file this call created is
 * removed. The error is a `FILE_SYSTEM` (or the errno's) `ToolError` that
 * says which of those happened.
 */
export async function storeFile(
  host: ToolHost,
  target: WorkspacePath,
  bytes: Uint8Array,
  agent: string,
  tool: string,
  previous: Uint8Array | undefined,
): Promise<void> {
  const { handle, info } = await host.workspace.openToWrite(target, `; ${tool} writes files, not directories`)
  if (target.exists && info.nlink > 1) {
    // Another name shares this file, possibly outside the workspace (pnpm links node_modules to its
    // store): a rewrite in place would change it there too, so the workspace's name gets a new file.
    await handle.close().catch(() => {})
    await replaceLinked(target, bytes, info.mode & 0o7777)
    host.ledger.remember(agent, target.real, bytes)
    return
  }
  let failure: { error: unknown } | undefined
  let restored = false
  try {
    await replaceContent(handle, bytes, previous?.length ?? 0)
  } catch (error) {
    failure = { error }
    if (previous) restored = await replaceContent(handle, previous, 0).then(() => true, () => false)
  }
  try {
    await handle.close()
  } catch (error) {
    // A close can report a write that did not land (NFS flushes there).
    failure ??= { error }
  }
  if (!failure) {
    host.ledger.remember(agent, target.real, bytes)
    return
  }
  let outcome: string
  if (target.exists) {
    outcome = restored ? `${target.shown} was left as it was` : `${target.shown} could not be put back as it was and may be incomplete`
  } else {
    const removed = await unlink(target.real).then(() => true, () => false)
    outcome = removed ? `${target.shown} was not created` : `${target.shown} may be left incomplete`
  }
  const cause = fileSystemError(failure.error, target.shown)
  throw workspaceError(cause.code, `${cause.message}; ${outcome}`, failure.error)
}

/**
 * Makes the open file hold `bytes`, growing it before anything is
 * overwritten: first the part of `bytes` past `oldLength` (the space a full
 * disk would refuse), then the part over the old content, then the file is
 * cut to length.
 */
async function replaceContent(handle: FileHandle, bytes: Uint8Array, oldLength: number): Promise<void> {
  const overlap = Math.min(oldLength, bytes.length)
  await writeRange(handle, bytes, overlap, bytes.length)
  await writeRange(handle, bytes, 0, overlap)
  await handle.truncate(bytes.length)
}

async function writeRange(handle: FileHandle, bytes: Uint8Array, from: number, to: number): Promise<void> {
  for (let at = from; at < to; ) {
    const { bytesWritten } = await handle.write(bytes, at, to - at, at)
    at += bytesWritten
  }
}

/**
 * Writes `bytes` to a new file beside `target` and renames it over the
 * target: the other hard links of the old file keep the old content. On a
 * failure the new file is removed and the target is as it was.
 */
async function replaceLinked(target: WorkspacePath, bytes: Uint8Array, mode: number): Promise<void> {
  const temporary = join(dirname(target.real), `.dsh-${randomBytes(6).toString('hex')}.tmp`)
  let handle: FileHandle | undefined
  try {
    handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, mode)
    await writeRange(handle, bytes, 0, bytes.length)
    // The process's umask may have narrowed the mode given to open.
    await handle.chmod(mode)
    await handle.close()
    handle = undefined
    await rename(temporary, target.real)
  } catch (error) {
    await handle?.close().catch(() => {})
    await unlink(temporary).catch(() => {})
    const cause = fileSystemError(error, target.shown)
    throw workspaceError(cause.code, `${cause.message}; ${target.shown} was left as it was`, error)
  }
}
