import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { IgnoreFile, isIgnored } from './gitignore'
import { compareNames } from './text'
import type { Workspace, WorkspacePath } from './workspace'

/** The largest ignore file read; a larger one is skipped whole. */
const MAX_IGNORE_FILE_BYTES = 256 * 1024

/** What a walk visits and how far it goes. */
export interface WalkOptions {
  /** Checked between directories: an abort ends the walk with the signal's reason. */
  readonly signal: AbortSignal
  /** Honour `.gitignore` files and `.git/info/exclude`. */
  readonly gitignore: boolean
  /** Directory names never descended into (an explicit start inside one is still walked). */
  readonly skipDirectories: ReadonlySet<string>
  /** The most directory entries looked at; past it the walk stops and `truncated` is set. */
  readonly maxEntries: number
}

/** A regular file found by a walk. */
export interface WalkedFile {
  /** Workspace-relative, `/`-separated. */
  readonly shown: string
  readonly real: string
}

/**
 * A depth-first walk of a workspace directory, in name order (UTF-16 code
 * units: byte-stable results). It yields regular files only, and never
 * follows a symbolic link (one could lead out of the workspace, or loop).
 * Ignored files and directories are not yielded or entered; the start
 * itself is walked even when ignored (an explicit request wins, as in
 * ripgrep). Unreadable directories are skipped.
 */
export class Walk {
  /** Set when the walk stopped at `maxEntries`. */
  truncated = false
  private entries = 0

  constructor(
    private readonly workspace: Workspace,
    private readonly options: WalkOptions,
  ) {}

  async *files(start: WorkspacePath, isDirectory: boolean): AsyncGenerator<WalkedFile> {
    if (!isDirectory) {
      yield { shown: start.shown, real: start.real }
      return
    }
    const stack = this.options.gitignore ? await this.ancestorRules(start) : []
    yield* this.directory(start.real, start.shown === '.' ? '' : start.shown, stack)
  }

  private async *directory(real: string, prefix: string, inherited: readonly IgnoreFile[]): AsyncGenerator<WalkedFile> {
    this.options.signal.throwIfAborted()
    let stack = inherited
    if (this.options.gitignore) {
      const own = await this.readIgnoreFile(join(real, '.gitignore'), prefix)
      if (own) stack = [...inherited, own]
    }
    let names
    try {
      names = await readdir(real, { withFileTypes: true })
    } catch {
      return
    }
    names.sort((a, b) => compareNames(a.name, b.name))
    for (const entry of names) {
      if (++this.entries > this.options.maxEntries) {
        this.truncated = true
        return
      }
      const shown = prefix === '' ? entry.name : `${prefix}/${entry.name}`
      if (entry.isDirectory()) {
        if (this.options.skipDirectories.has(entry.name) || isIgnored(stack, shown, true)) continue
        yield* this.directory(join(real, entry.name), shown, stack)
        if (this.truncated) return
      } else if (entry.isFile()) {
        if (!isIgnored(stack, shown, false)) yield { shown, real: join(real, entry.name) }
      }
    }
  }

  /** `.git/info/exclude` and the `.gitignore` of every directory from the root down to (not including) `start`. */
  private async ancestorRules(start: WorkspacePath): Promise<IgnoreFile[]> {
    const stack: IgnoreFile[] = []
    const exclude = await this.readIgnoreFile(join(this.workspace.realRoot, '.git', 'info', 'exclude'), '')
    if (exclude) stack.push(exclude)
    if (start.shown === '.') return stack
    const names = start.shown.split('/')
    for (let depth = 0; depth < names.length; depth++) {
      const base = names.slice(0, depth).join('/')
      const file = await this.readIgnoreFile(join(this.workspace.realRoot, ...names.slice(0, depth), '.gitignore'), base)
      if (file) stack.push(file)
    }
    return stack
  }

  /** An ignore file's rules, or undefined when it is missing, empty, not a regular file, too large or unreadable. */
  private async readIgnoreFile(real: string, base: string): Promise<IgnoreFile | undefined> {
    let file
    try {
      file = await this.workspace.openToRead({ shown: base, real, exists: true })
    } catch {
      return undefined
    }
    try {
      if (file.info.size > MAX_IGNORE_FILE_BYTES) return undefined
      const rules = IgnoreFile.parse(await file.handle.readFile('utf8'), base)
      return rules.empty ? undefined : rules
    } catch {
      return undefined
    } finally {
      await file.handle.close().catch(() => {})
    }
  }
}
