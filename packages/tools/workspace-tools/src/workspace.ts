import { constants, type Stats } from 'node:fs'
import { lstat, mkdir, open, readlink, realpath, stat, type FileHandle } from 'node:fs/promises'
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path'
import { errnoOf, fileSystemError, workspaceError } from './errors'
import { clipText } from './text'

/** The longest path Linux accepts (`PATH_MAX` less the terminating NUL), in bytes. */
export const MAX_PATH_BYTES = 4095
/** The longest single name Linux accepts (`NAME_MAX`), in bytes. */
export const MAX_NAME_BYTES = 255

/** How long a path the model wrote may be when an error quotes it back. */
const QUOTED_PATH_CHARS = 120

/**
 * Opens never wait on anything: `O_NONBLOCK` makes opening a FIFO with no
 * writer (or a device) return at once, so the kind of file can be checked
 * with `fstat` before anything reads it. `O_NOFOLLOW` refuses a final
 * component that became a symbolic link after the path was resolved.
 */
const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW
const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NONBLOCK | constants.O_NOCTTY | constants.O_NOFOLLOW

/** A path the model wrote, checked and resolved inside the workspace. */
export interface WorkspacePath {
  /** The path as the model should read it back: relative to the root, `/`-separated, `.` for the root. */
  readonly shown: string
  /** The real path (every symbolic link resolved); for a file about to be created, its real parent joined with the new names. */
  readonly real: string
  /** Whether something exists at the path. */
  readonly exists: boolean
}

/** An open regular file, checked to lie inside the workspace. */
export interface OpenFile {
  readonly handle: FileHandle
  readonly info: Stats
}

/**
 * The directory the tools are confined to, and the one place that turns a
 * path the model wrote into a file system path.
 *
 * Contract (every refusal is a `ToolError` whose message speaks in
 * workspace-relative words, never quoting a machine path the model did not
 * write):
 * - `INVALID_PATH`: empty, a NUL byte, a name over 255 bytes or a path over
 *   4095 bytes (before any system call could answer `ENAMETOOLONG`).
 * - `OUTSIDE_WORKSPACE`: the path climbs out through `..`, is absolute and
 *   elsewhere, or resolves through a symbolic link (of the file or of any
 *   directory on the way) to a place outside. An absolute path inside the
 *   workspace is accepted (models write them; refusing costs a round trip
 *   and protects nothing).
 * - `NOT_FOUND` for a missing path that must exist.
 * - Opening never blocks and only regular files are opened for content
 *   (`NOT_A_REGULAR_FILE` for a FIFO, socket or device; `IS_A_DIRECTORY`);
 *   where `/proc` exists, the opened descriptor's real path is checked
 *   against the root once more, which closes the window between resolving
 *   and opening for reads and writes of existing files.
 */
export class Workspace {
  private constructor(
    /** The root as given (absolute). */
    readonly root: string,
    /** The root with every symbolic link resolved: the boundary every check compares against. */
    readonly realRoot: string,
  ) {}

  /** Opens `root` (resolved against the process's working directory); it must be an existing directory. */
  static async open(root: string): Promise<Workspace> {
    const absolute = resolve(root)
    let real: string
    try {
      real = await realpath(absolute)
    } catch {
      throw new WorkspaceRootError(`the workspace directory ${absolute} does not exist`)
    }
    if (!(await stat(real)).isDirectory()) throw new WorkspaceRootError(`the workspace ${absolute} is not a directory`)
    return new Workspace(absolute, real)
  }

  /** `absolute` (under the root as given or its real path) as the model should read it. */
  show(absolute: string): string {
    const base = within(this.root, absolute) ? this.root : this.realRoot
    const rel = relative(base, absolute)
    if (rel === '') return '.'
    return sep === '/' ? rel : rel.split(sep).join('/')
  }

  /** Whether a real path (symbolic links resolved) lies inside the workspace. */
  contains(real: string): boolean {
    return within(this.realRoot, real)
  }

  /**
   * Resolves a path that must exist (to read, list or search). Throws
   * `INVALID_PATH`, `OUTSIDE_WORKSPACE` or `NOT_FOUND`.
   */
  async existing(path: string): Promise<WorkspacePath> {
    const absolute = this.lexical(path)
    const shown = this.show(absolute)
    let real: string
    try {
      real = await realpath(absolute)
    } catch (error) {
      throw fileSystemError(error, shown)
    }
    if (!this.contains(real)) throw leadsOut(shown, 'through a symbolic link')
    return { shown, real, exists: true }
  }

  /**
   * Resolves a path about to be written: it may not exist yet, but the
   * nearest existing directory above it must resolve inside, and so must the
   * file when it exists. A symbolic link whose target is missing is refused
   * (writing through it would create a file wherever it points). Throws
   * `INVALID_PATH` or `OUTSIDE_WORKSPACE`.
   */
  async writable(path: string): Promise<WorkspacePath> {
    const absolute = this.lexical(path)
    const shown = this.show(absolute)
    let exists = true
    try {
      await lstat(absolute)
    } catch (error) {
      if (errnoOf(error) !== 'ENOENT') throw fileSystemError(error, shown)
      exists = false
    }
    if (exists) {
      let real: string
      try {
        real = await realpath(absolute)
      } catch (error) {
        if (errnoOf(error) === 'ENOENT') {
          throw workspaceError('INVALID_PATH', `${shown} is a symbolic link to a file that does not exist; write to the path it points to instead`)
        }
        throw fileSystemError(error, shown)
      }
      if (!this.contains(real)) throw leadsOut(shown, 'through a symbolic link')
      return { shown, real, exists: true }
    }
    for (let dir = dirname(absolute); ; dir = dirname(dir)) {
      let real: string | undefined
      try {
        real = await realpath(dir)
      } catch (error) {
        if (errnoOf(error) !== 'ENOENT') throw fileSystemError(error, shown)
      }
      if (real !== undefined) {
        if (!this.contains(real)) throw leadsOut(shown, 'through a symbolic link')
        return { shown, real: join(real, relative(dir, absolute)), exists: false }
      }
      if (dirname(dir) === dir) throw leadsOut(shown, '')
    }
  }

  /**
   * Opens a regular file to read, without blocking on whatever is there.
   * Throws `IS_A_DIRECTORY` (its message ending with `directoryHint`),
   * `NOT_A_REGULAR_FILE`, `OUTSIDE_WORKSPACE` or a file system error about
   * `path.shown`. The caller closes the handle.
   */
  async openToRead(path: WorkspacePath, directoryHint = ''): Promise<OpenFile> {
    let handle: FileHandle
    try {
      handle = await open(path.real, READ_FLAGS)
    } catch (error) {
      throw openFailure(error, path.shown)
    }
    return this.checked(handle, path.shown, directoryHint)
  }

  /**
   * Opens a regular file to write, creating it (and missing directories
   * above it) when it does not exist; nothing is truncated yet. Throws like
   * `openToRead`. The caller closes the handle.
   */
  async openToWrite(path: WorkspacePath, directoryHint = ''): Promise<OpenFile> {
    let handle: FileHandle
    try {
      if (!path.exists) await mkdir(dirname(path.real), { recursive: true })
      handle = await open(path.real, WRITE_FLAGS, 0o666)
    } catch (error) {
      if (errnoOf(error) === 'EISDIR') throw workspaceError('IS_A_DIRECTORY', `${path.shown} is a directory${directoryHint}`, error)
      throw openFailure(error, path.shown)
    }
    return this.checked(handle, path.shown, directoryHint)
  }

  /** The kind check (`fstat`) and the descriptor check (`/proc`), closing the handle on a refusal. */
  private async checked(handle: FileHandle, shown: string, directoryHint: string): Promise<OpenFile> {
    try {
      const info = await handle.stat()
      if (info.isDirectory()) throw workspaceError('IS_A_DIRECTORY', `${shown} is a directory${directoryHint}`)
      if (!info.isFile()) throw notRegular(shown, info)
      let real: string | undefined
      try {
        real = await readlink(`/proc/self/fd/${handle.fd}`)
      } catch {
        // No /proc (not Linux, or not mounted): the path checks before opening stand alone.
      }
      if (real !== undefined && real.startsWith('/') && !this.contains(real)) throw leadsOut(shown, 'through a symbolic link')
      return { handle, info }
    } catch (error) {
      await handle.close().catch(() => {})
      throw fileSystemError(error, shown)
    }
  }

  /** The lexical checks: not empty, no NUL byte, not overlong, no climbing out, no absolute path elsewhere. */
  private lexical(path: string): string {
    if (path === '') throw workspaceError('INVALID_PATH', 'the path is empty; use "." for the workspace root')
    if (path.includes('\0')) throw workspaceError('INVALID_PATH', `the path ${quotePath(path)} contains a NUL byte`)
    const bytes = Buffer.byteLength(path)
    const longest = Math.max(...path.split('/').map((name) => Buffer.byteLength(name)))
    if (bytes > MAX_PATH_BYTES || longest > MAX_NAME_BYTES) throw tooLong(path, bytes, longest)
    const absolute = resolve(this.root, path)
    const inside = within(this.root, absolute) || within(this.realRoot, absolute)
    if (!inside) {
      if (isAbsolute(path)) {
        throw workspaceError('OUTSIDE_WORKSPACE', `${quotePath(path)} is an absolute path outside the workspace; use a path relative to the workspace root`)
      }
      throw leadsOut(quotePath(path), "through '..'")
    }
    if (Buffer.byteLength(absolute) > MAX_PATH_BYTES) throw tooLong(path, bytes, longest)
    return absolute
  }
}

/** The workspace root given to the plugin is unusable: a configuration error, thrown when the plugin starts. */
export class WorkspaceRootError extends Error {
  override readonly name = 'WorkspaceRootError'
  readonly code = 'WORKSPACE_ROOT'
}

/** A path the model wrote, clipped for an error message. */
export function quotePath(path: string): string {
  return clipText(path, QUOTED_PATH_CHARS)
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path)
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel))
}

function leadsOut(shown: string, how: string) {
  return workspaceError(
    'OUTSIDE_WORKSPACE',
    `${shown} is outside the workspace${how ? ` (it leads out ${how})` : ''}; the tools only reach files inside the workspace`,
  )
}

function tooLong(path: string, bytes: number, longest: number) {
  return workspaceError(
    'INVALID_PATH',
    `the path ${quotePath(path)} is too long (${longest > MAX_NAME_BYTES ? `a name of ${longest} bytes` : `${bytes} bytes`}; ` +
      `a name may have at most ${MAX_NAME_BYTES} bytes and a whole path ${MAX_PATH_BYTES})`,
  )
}

/** The kind of a file that is neither regular nor a directory, in a refusal. */
export function notRegular(shown: string, info: Stats) {
  const kind = info.isFIFO()
    ? 'a FIFO (named pipe)'
    : info.isSocket()
      ? 'a socket'
      : info.isCharacterDevice() || info.isBlockDevice()
        ? 'a device'
        : info.isSymbolicLink()
          ? 'a symbolic link'
          : 'not a regular file'
  return workspaceError('NOT_A_REGULAR_FILE', `${shown} is ${kind}; the tools only read and write regular files and list directories`)
}

function openFailure(error: unknown, shown: string) {
  // O_NOFOLLOW met a symbolic link where the resolved path had none: it was swapped in after the checks.
  if (errnoOf(error) === 'ELOOP') return workspaceError('OUTSIDE_WORKSPACE', `${shown} was replaced by a symbolic link while it was being opened`, error)
  // A FIFO opened to write without O_NONBLOCK would wait for a reader; with it, no reader is ENXIO.
  if (errnoOf(error) === 'ENXIO') return workspaceError('NOT_A_REGULAR_FILE', `${shown} is a FIFO (named pipe) or a device; the tools only read and write regular files`, error)
  return fileSystemError(error, shown)
}
