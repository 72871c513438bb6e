import { open, unlink, type FileHandle } from 'node:fs/promises'
import { dirname } from 'node:path'
import type { WriteBehindStorage } from '@deepseek-ai/dsh-session'
import { JsonlPersistenceError, fsError } from './errors'
import type { QueuedBatch } from './line-buffer'
import type { SessionLock } from './lock'
import { syncNewFileDirectory } from './sync-directory'

export interface SessionFileStorageOptions {
  id: string
  file: string
  lock: SessionLock
  /**
   * The file holds no event of this session yet (it does not exist, or a
   * writer that died before its first line left it): the directory entry is
   * synced on the first sync, and a first write that fails before any
   * complete line reached the file removes the file.
   */
  creates: boolean
  /** The file's size when the writer opened it (0 for a new file): what it holds before this writer's bytes. */
  size: number
}

const NEWLINE = 0x0a

/**
 * The storage under a JSONL writer's `WriteBehind`: one session file,
 * appended to (opened on the first write, mode 0600), synced with
 * `fdatasync` (and, the first time, its directory when the file is new),
 * closed with its lock released.
 *
 * A failed first write of a new file that left no complete line in it (a
 * full disk: an empty file, or a few bytes of the first line) removes the
 * file: nothing of the session is on disk, and an empty `<id>.jsonl` would
 * only be clutter that reads as a session with no event. Once a complete
 * line has reached the file it is never removed; a torn tail is what the
 * next load cuts (into a sidecar).
 */
export class SessionFileStorage implements WriteBehindStorage<QueuedBatch> {
  /** Whether a failed first write removed the file (the failure's message says so). */
  removed = false
  private handle: FileHandle | undefined
  private directoryPending: boolean
  /** Whether the file holds (or held) a complete line: always for a file continued, after a first write for a new one. */
  private lineWritten: boolean
  /** The size the file has when nobody else touched it: its size at open plus every byte this storage wrote. */
  private size: number

  constructor(private readonly options: SessionFileStorageOptions) {
    this.directoryPending = options.creates
    this.lineWritten = !options.creates
    this.size = options.size
  }

  async write(batch: QueuedBatch): Promise<void> {
    let written = 0
    try {
      this.handle ??= await open(this.options.file, 'a', 0o600)
      for (const bytes of batch.blocks) {
        let offset = 0
        while (offset < bytes.length) {
          const { bytesWritten } = await this.handle.write(bytes, offset, bytes.length - offset)
          offset += bytesWritten
          written += bytesWritten
        }
      }
    } catch (error) {
      this.size += written
      if (!this.lineWritten && this.handle !== undefined && !reachesNewline(batch.blocks, written)) await this.remove()
      throw error
    }
    this.size += written
    this.lineWritten = true
  }

  async sync(): Promise<void> {
    const handle = this.handle
    if (handle) {
      await handle.datasync()
      // Written through a handle to a file someone deleted (rm, a cleaner of old files), the bytes
      // are in no file: a flush must not report them durable. A size other than what this writer
      // put there means another program wrote to the file or truncated it (the lock is advisory):
      // the log is no longer this writer's alone. One fstat per sync that had writes.
      const stats = await handle.stat()
      const { file, id } = this.options
      if (stats.nlink === 0) {
        throw new JsonlPersistenceError(
          'WRITE_FAILED',
          `Session file ${file} was deleted while session "${id}" was being written: what was written to it since is in no file, and every later flush of this session fails. Load the session again to see what is on disk (nothing, unless the file was restored).`,
          { file },
        )
      }
      if (stats.size !== this.size) {
        throw new JsonlPersistenceError(
          'SESSION_CHANGED',
          `Session file ${file} changed on disk while session "${id}" was being written: it has ${stats.size} bytes where this writer put ${this.size} (another program wrote to it, or truncated it). Every later flush of this session fails; look at the file, then load the session again.`,
          { file },
        )
      }
    }
    if (this.directoryPending) {
      await syncNewFileDirectory(dirname(this.options.file))
      this.directoryPending = false
    }
  }

  /** Closes the file and releases the lock (both, whatever fails); throws the first failure. */
  async close(): Promise<void> {
    const handle = this.handle
    this.handle = undefined
    let failure: unknown
    try {
      await handle?.close()
    } catch (error) {
      const { file, id } = this.options
      failure = fsError(error, { operation: 'write', file, doing: `Closing session "${id}"`, consequence: 'Load the session again to see what is on disk.' })
    }
    const released = this.options.lock.releaseQuietly()
    if (failure !== undefined) throw failure
    if (released) throw released
  }

  /** Removes the file the failed first write created (best effort: the write's own error is what gets reported). */
  private async remove(): Promise<void> {
    const handle = this.handle
    this.handle = undefined
    await handle?.close().catch(() => {})
    try {
      await unlink(this.options.file)
      this.removed = true
    } catch {}
  }
}

/** Whether the first `written` bytes of `blocks` hold a newline: a complete line reached the file. */
function reachesNewline(blocks: readonly Buffer[], written: number): boolean {
  for (const block of blocks) {
    if (written <= 0) return false
    const newline = block.indexOf(NEWLINE)
    if (newline !== -1 && newline < written) return true
    written -= block.length
  }
  return false
}
