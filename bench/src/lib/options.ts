/** Parsing of `pnpm bench`'s command-line values (kept apart from `main.ts` so that tests can call it). */
import { closeSync, existsSync, mkdirSync, openSync, statSync, unlinkSync } from 'node:fs'
import { dirname, resolve } from 'node:path'

/** What `--node` names: a Node major to fetch (`scripts/node-binary.mjs`), or a binary's path. */
export type NodeOption = { kind: 'major'; major: string } | { kind: 'path'; path: string }

/**
 * `--node 24` (or `v24`) asks for a major; anything else must be the path of
 * an existing file (resolved against the working directory).
 */
export function parseNodeOption(value: string, exists: (path: string) => boolean = existsSync): NodeOption {
  const trimmed = value.trim()
  if (/^v?\d+$/.test(trimmed)) return { kind: 'major', major: trimmed.replace(/^v/, '') }
  if (trimmed === '') throw new Error('--node needs a path to a Node binary or a major version (e.g. --node 24)')
  const path = resolve(trimmed)
  if (!exists(path)) throw new Error(`--node ${value}: no such file; give the path of a Node binary or a major version (e.g. --node 24)`)
  return { kind: 'path', path }
}

/** A positive integer option, or a message naming the flag. */
export function positiveInteger(flag: string, value: string): number {
  const n = Number(value)
  if (!(Number.isSafeInteger(n) && n > 0)) throw new Error(`${flag} must be a positive integer (got ${value})`)
  return n
}

/**
 * `--out file`, checked before anything runs: its directory is created and
 * the file opened for writing (and removed again when it did not exist), so
 * that a path that cannot be written fails at once, not after the whole
 * bench has run. Returns the absolute path.
 */
export function outputFile(value: string): string {
  const path = resolve(value)
  const existed = existsSync(path)
  if (existed && statSync(path).isDirectory()) throw new Error(`--out ${value}: is a directory; give the path of the JSON file to write`)
  try {
    mkdirSync(dirname(path), { recursive: true })
    closeSync(openSync(path, 'a'))
    if (!existed) unlinkSync(path)
  } catch (error) {
    throw new Error(`--out ${value}: cannot be written (${error instanceof Error ? error.message : String(error)})`)
  }
  return path
}
