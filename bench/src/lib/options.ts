/** Parsing of `pnpm bench`'s command-line values (kept apart from `main.ts` so that tests can call it). */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'

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
