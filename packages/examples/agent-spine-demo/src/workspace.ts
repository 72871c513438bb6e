import { lstat, realpath, stat } from 'node:fs/promises'
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path'
import { ToolError } from '@deepseek-ai/dsh-tools'

declare module '@deepseek-ai/dsh-tools' {
  interface ToolErrorCodeMap {
    /** A workspace tool was given a path that does not exist. */
    NOT_FOUND: true
  }
}

/**
 * The directory the workspace tools are confined to, and the one place that
 * turns a path the model wrote into a file system path.
 *
 * Contract: every path is relative to the workspace root (an absolute path is
 * accepted only when it lies inside the root). A path is denied, with a
 * `ToolError` of code `DENIED` whose message says why, when
 * - it climbs out of the root through `..`;
 * - it is absolute and outside the root;
 * - it, or the nearest existing directory above a file about to be written,
 *   resolves through a symbolic link to a place outside the root.
 * A path that does not exist fails with `NOT_FOUND`. Checks and the file
 * operation that follows are separate system calls: a process that swaps a
 * directory for a symlink in between is outside this contract.
 */
export class Workspace {
  private constructor(
    /** The root as given (absolute). */
    readonly root: string,
    /** The root with every symlink resolved: the boundary the checks compare against. */
    readonly realRoot: string,
  ) {}

  /** Opens `root` (resolved against the process's working directory); it must be an existing directory. */
  static async open(root: string): Promise<Workspace> {
    const absolute = resolve(root)
    let real: string
    try {
      real = await realpath(absolute)
    } catch {
      throw new ToolError('NOT_FOUND', `the workspace directory ${absolute} does not exist`)
    }
    if (!(await stat(real)).isDirectory()) throw new ToolError('TOOL_ERROR', `the workspace ${absolute} is not a directory`)
    return new Workspace(absolute, real)
  }

  /** `path` as the model should read it back: relative to the root, with `/` separators (`.` for the root). */
  display(absolute: string): string {
    const rel = relative(this.root, absolute)
    if (rel === '') return '.'
    return sep === '/' ? rel : rel.split(sep).join('/')
  }

  /** Resolves a path that must exist (to read or list). Throws `DENIED` or `NOT_FOUND`. */
  async existing(path: string): Promise<string> {
    const absolute = this.lexical(path)
    let real: string
    try {
      real = await realpath(absolute)
    } catch (error) {
      if (isMissing(error)) throw new ToolError('NOT_FOUND', `no such file or directory: ${path}`)
      throw error
    }
    if (!this.inside(real)) throw escapes(path, 'through a symbolic link')
    return absolute
  }

  /**
   * Resolves a path about to be written: the file may not exist yet, but the
   * nearest existing directory above it must be inside the root, and so must
   * the file itself when it exists (a symlink to the outside is denied, and so
   * is a dangling one, whose target a write would create). Throws `DENIED`.
   */
  async writable(path: string): Promise<string> {
    const absolute = this.lexical(path)
    let exists = true
    try {
      await lstat(absolute)
    } catch (error) {
      if (!isMissing(error)) throw error
      exists = false
    }
    if (exists) {
      let real: string
      try {
        real = await realpath(absolute)
      } catch (error) {
        if (isMissing(error)) throw new ToolError('DENIED', `${path} is a symbolic link to a file that does not exist; write to its target instead`)
        throw error
      }
      if (!this.inside(real)) throw escapes(path, 'through a symbolic link')
      return absolute
    }
    for (let dir = dirname(absolute); ; dir = dirname(dir)) {
      let real: string | undefined
      try {
        real = await realpath(dir)
      } catch (error) {
        if (!isMissing(error)) throw error
      }
      if (real !== undefined) {
        if (!this.inside(real)) throw escapes(path, 'through a symbolic link')
        return absolute
      }
      if (dirname(dir) === dir) throw escapes(path, '')
    }
  }

  /** The lexical checks: no NUL byte, no climbing out through `..`, no absolute path outside the root. */
  private lexical(path: string): string {
    if (path.includes('\0')) throw new ToolError('DENIED', 'a path cannot contain a NUL byte')
    const absolute = resolve(this.root, path)
    if (this.insideLexically(absolute)) return absolute
    if (isAbsolute(path)) {
      throw new ToolError('DENIED', `${path} is an absolute path outside the workspace; use a path relative to the workspace root`)
    }
    throw escapes(path, "through '..'")
  }

  private insideLexically(absolute: string): boolean {
    return within(this.root, absolute) || within(this.realRoot, absolute)
  }

  private inside(real: string): boolean {
    return within(this.realRoot, real)
  }
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

function escapes(path: string, how: string): ToolError {
  return new ToolError('DENIED', `${path} is outside the workspace${how ? ` (it leads out ${how})` : ''}; tools can only reach files inside the workspace`)
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return code === 'ENOENT' || code === 'ENOTDIR'
}
