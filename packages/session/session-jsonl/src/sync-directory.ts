import { closeSync, fsyncSync, openSync } from 'node:fs'
import { open } from 'node:fs/promises'
import { dirname } from 'node:path'

/**
 * Directories this process created for session files whose own entry (in
 * their parent) has not been synced yet. Syncing a new file's directory makes
 * the file's entry durable, not the directory's: after a power cut a freshly
 * created `~/.dsh/sessions` could be gone with every file in it. The first
 * directory sync of a file below one of them syncs their parents too
 * (`syncNewDirectories`).
 */
const unsynced = new Set<string>()

/** Records the directories `mkdir -p` created, from the outermost (`first`, what `mkdirSync` returns) down to `directory`. */
export function createdDirectories(first: string, directory: string): void {
  for (let path = directory; ; path = dirname(path)) {
    unsynced.add(path)
    if (path === first || dirname(path) === path) break
  }
}

/**
 * Syncs the directory a new file was created in, and the parent of every
 * directory this process created on the way to it that is not synced yet,
 * innermost first (each entry is synced before the one holding it).
 */
export async function syncNewFileDirectory(directory: string): Promise<void> {
  await syncDirectory(directory)
  if (unsynced.size === 0) return
  for (let path = directory; unsynced.has(path); path = dirname(path)) {
    await syncDirectory(dirname(path))
    unsynced.delete(path)
  }
}

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
