import { workspaceError } from '../errors'
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
 * The file is rewritten in place, so its mode, owner and hard links stay.
 */
export async function storeFile(host: ToolHost, target: WorkspacePath, bytes: Uint8Array, agent: string, tool: string): Promise<void> {
  const { handle } = await host.workspace.openToWrite(target, `; ${tool} writes files, not directories`)
  try {
    await handle.truncate(0)
    let written = 0
    while (written < bytes.length) {
      const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, written)
      written += bytesWritten
    }
  } finally {
    await handle.close()
  }
  host.ledger.remember(agent, target.real, bytes)
}
