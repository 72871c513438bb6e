import { stat } from 'node:fs/promises'
import { fileSystemError } from '../errors'
import type { ToolHost } from '../host'
import { notRegular, type WorkspacePath } from '../workspace'

/** Where a `glob` or `grep` starts: a directory, or (for `grep`) one regular file. */
export async function searchStart(host: ToolHost, path: string | undefined): Promise<{ start: WorkspacePath; isDirectory: boolean }> {
  const start = await host.workspace.existing(path ?? '.')
  try {
    const info = await stat(start.real)
    if (info.isDirectory()) return { start, isDirectory: true }
    if (info.isFile()) return { start, isDirectory: false }
    throw notRegular(start.shown, info)
  } catch (error) {
    throw fileSystemError(error, start.shown)
  }
}

/** `file` relative to the start of a search (`shown` is workspace-relative). */
export function relativeToStart(start: WorkspacePath, shown: string): string {
  return start.shown === '.' ? shown : shown === start.shown ? shown.slice(shown.lastIndexOf('/') + 1) : shown.slice(start.shown.length + 1)
}

/** ` under src` for a search that did not start at the root. */
export function underStart(start: WorkspacePath): string {
  return start.shown === '.' ? '' : ` under ${start.shown}`
}
