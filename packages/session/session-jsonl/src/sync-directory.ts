import { closeSync, fsyncSync, openSync } from 'node:fs'
import { open } from 'node:fs/promises'

/**
 * Fsyncs a directory so a newly created entry in it survives a crash. Windows
 * cannot open directories for syncing; there the entry is made durable by the
 * file system's own journal, and the error is ignored.
 */
export async function syncDirectory(directory: string): Promise<void> {
  if (process.platform === 'win32') return
  const handle = await open(directory, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** `syncDirectory` for synchronous callers. */
export function syncDirectorySync(directory: string): void {
  if (process.platform === 'win32') return
  const fd = openSync(directory, 'r')
  try {
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
}
