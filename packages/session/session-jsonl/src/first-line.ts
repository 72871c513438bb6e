import { closeSync, openSync, readSync } from 'node:fs'
import { open } from 'node:fs/promises'

const PROBE = 16 * 1024
/** A `session/meta` line is small; a first line longer than this is not one. */
const MAX_FIRST_LINE = 1 << 20

/**
 * The first line of a file (without its newline), or `undefined` when the file
 * has no complete first line (empty, or its writer died mid-line). Reads only
 * as far as the first newline. Rejects with `ENOENT` for a missing file.
 */
export async function readFirstLine(path: string): Promise<string | undefined> {
  const handle = await open(path, 'r')
  try {
    const chunks: Buffer[] = []
    let total = 0
    while (total < MAX_FIRST_LINE) {
      const buffer = Buffer.allocUnsafe(PROBE)
      const { bytesRead } = await handle.read(buffer, 0, PROBE, total)
      if (bytesRead === 0) return undefined
      const newline = buffer.subarray(0, bytesRead).indexOf(0x0a)
      if (newline !== -1) {
        chunks.push(buffer.subarray(0, newline))
        return Buffer.concat(chunks).toString('utf8')
      }
      chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
    }
    return undefined
  } finally {
    await handle.close()
  }
}

/**
 * Whether the file may hold an event: `false` only when it provably has no
 * complete line (read to its end without a newline), which is what a writer
 * that died before its first write leaves behind. Synchronous, for
 * `session/created` listeners.
 */
export function mayHoldEventsSync(path: string): boolean {
  const fd = openSync(path, 'r')
  try {
    const buffer = Buffer.allocUnsafe(PROBE)
    let position = 0
    while (position < MAX_FIRST_LINE) {
      const bytesRead = readSync(fd, buffer, 0, PROBE, position)
      if (bytesRead === 0) return false
      if (buffer.subarray(0, bytesRead).indexOf(0x0a) !== -1) return true
      position += bytesRead
    }
    return true
  } finally {
    closeSync(fd)
  }
}
