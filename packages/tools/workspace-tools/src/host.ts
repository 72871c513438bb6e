import type { FileHandle } from 'node:fs/promises'
import type { WorkspaceLimits } from './config'
import type { FileLocks } from './file-locks'
import type { ReadLedger } from './read-ledger'
import type { WalkOptions } from './walk'
import type { Workspace } from './workspace'

/** What every tool of the package shares: the workspace, the read ledger and the limits. */
export interface ToolHost {
  readonly workspace: Workspace
  readonly ledger: ReadLedger
  /** One change at a time per file (by real path), across agents. */
  readonly locks: FileLocks
  readonly limits: WorkspaceLimits
  /** The walk options of `glob` and `grep` for one call. */
  walkOptions(signal: AbortSignal): WalkOptions
}

/** Reads a whole open file into memory (its size is already checked against the cap). */
export async function readAll(handle: FileHandle, size: number, signal?: AbortSignal): Promise<Buffer> {
  // Read up to one byte past the size fstat gave: a file that grew since is cut there, not read without bound.
  const buffer = Buffer.alloc(size + 1)
  let filled = 0
  while (filled < buffer.length) {
    signal?.throwIfAborted()
    const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled)
    if (bytesRead === 0) break
    filled += bytesRead
  }
  return buffer.subarray(0, Math.min(filled, size))
}
