import { closeSync, fsyncSync, ftruncateSync, openSync, readSync, unlinkSync, writeSync } from 'node:fs'
import { open, unlink } from 'node:fs/promises'
import { dirname } from 'node:path'
import { errnoCode, fsError } from './errors'
import { syncDirectory, syncDirectorySync } from './sync-directory'

/**
 * Cuts the torn tail of a session file (the bytes after its last newline,
 * which the writer never finished) without losing them: the bytes from
 * `from` to the end are first copied to a new sidecar file next to it,
 * `<file>.torn-<ms since epoch>` (with `-2`, `-3`, … if that name is taken),
 * which is fsynced together with its directory entry; only then is the file
 * truncated to `from` and synced. Returns the sidecar's path.
 *
 * When anything fails, the session file is left as it was, a half-written
 * sidecar is removed, and the typed error names the path that failed.
 */
export async function cutTornTail(file: string, from: number): Promise<string> {
  const handle = await open(file, 'r+').catch((error) => {
    throw fsError(error, { operation: 'write', file, doing: 'Opening the session file to cut its torn tail' })
  })
  try {
    let tail: Buffer
    try {
      const { size } = await handle.stat()
      tail = Buffer.alloc(size - from)
      let read = 0
      while (read < tail.length) {
        const { bytesRead } = await handle.read(tail, read, tail.length - read, from + read)
        if (bytesRead === 0) break
        read += bytesRead
      }
      tail = tail.subarray(0, read)
    } catch (error) {
      throw fsError(error, { operation: 'read', file, doing: 'Reading the torn tail', consequence })
    }
    const sidecar = await writeSidecar(file, tail)
    try {
      await handle.truncate(from)
      await handle.datasync()
    } catch (error) {
      throw fsError(error, {
        operation: 'write',
        file,
        doing: 'Truncating the torn tail',
        consequence: `Its bytes are safe in ${sidecar}; the session was not loaded.`,
      })
    }
    return sidecar
  } finally {
    await handle.close().catch(() => {})
  }
}

/** `cutTornTail` for synchronous callers (a `session/created` listener starting a file over). */
export function cutTornTailSync(file: string, from: number): string {
  let fd: number
  try {
    fd = openSync(file, 'r+')
  } catch (error) {
    throw fsError(error, { operation: 'write', file, doing: 'Opening the session file to cut its torn tail' })
  }
  try {
    let tail: Buffer
    try {
      tail = readRestSync(fd, from)
    } catch (error) {
      throw fsError(error, { operation: 'read', file, doing: 'Reading the torn tail', consequence })
    }
    const sidecar = writeSidecarSync(file, tail)
    try {
      ftruncateSync(fd, from)
      fsyncSync(fd)
    } catch (error) {
      throw fsError(error, { operation: 'write', file, doing: 'Truncating the torn tail', consequence: `Its bytes are safe in ${sidecar}.` })
    }
    return sidecar
  } finally {
    closeSync(fd)
  }
}

const consequence = 'The session file was left as it was; free space or fix the cause, then try again.'

async function writeSidecar(file: string, bytes: Buffer): Promise<string> {
  const stamp = Date.now()
  for (let attempt = 1; ; attempt++) {
    const sidecar = sidecarName(file, stamp, attempt)
    let handle
    try {
      handle = await open(sidecar, 'wx', 0o600)
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') continue
      throw fsError(error, { operation: 'write', file: sidecar, doing: 'Creating the sidecar file for a torn tail', consequence })
    }
    try {
      let offset = 0
      while (offset < bytes.length) offset += (await handle.write(bytes, offset, bytes.length - offset)).bytesWritten
      await handle.sync()
      await handle.close()
      await syncDirectory(dirname(sidecar))
      return sidecar
    } catch (error) {
      await handle.close().catch(() => {})
      await unlink(sidecar).catch(() => {})
      throw fsError(error, { operation: 'write', file: sidecar, doing: 'Writing the sidecar file for a torn tail', consequence })
    }
  }
}

function writeSidecarSync(file: string, bytes: Buffer): string {
  const stamp = Date.now()
  for (let attempt = 1; ; attempt++) {
    const sidecar = sidecarName(file, stamp, attempt)
    let fd: number
    try {
      fd = openSync(sidecar, 'wx', 0o600)
    } catch (error) {
      if (errnoCode(error) === 'EEXIST') continue
      throw fsError(error, { operation: 'write', file: sidecar, doing: 'Creating the sidecar file for a torn tail', consequence })
    }
    try {
      let offset = 0
      while (offset < bytes.length) offset += writeSync(fd, bytes, offset, bytes.length - offset)
      fsyncSync(fd)
      closeSync(fd)
      syncDirectorySync(dirname(sidecar))
      return sidecar
    } catch (error) {
      try {
        closeSync(fd)
      } catch {}
      try {
        unlinkSync(sidecar)
      } catch {}
      throw fsError(error, { operation: 'write', file: sidecar, doing: 'Writing the sidecar file for a torn tail', consequence })
    }
  }
}

function readRestSync(fd: number, from: number): Buffer {
  const chunks: Buffer[] = []
  let position = from
  for (;;) {
    const chunk = Buffer.allocUnsafe(64 * 1024)
    const bytesRead = readSync(fd, chunk, 0, chunk.length, position)
    if (bytesRead === 0) return Buffer.concat(chunks)
    chunks.push(chunk.subarray(0, bytesRead))
    position += bytesRead
  }
}

function sidecarName(file: string, stamp: number, attempt: number): string {
  return `${file}.torn-${stamp}${attempt === 1 ? '' : `-${attempt}`}`
}
