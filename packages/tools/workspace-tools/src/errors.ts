import { ToolError } from '@deepseek-ai/dsh-tools'

declare module '@deepseek-ai/dsh-tools' {
  interface ToolErrorCodeMap {
    /** A workspace path leads out of the workspace: `..`, an absolute path elsewhere, or a symbolic link. */
    OUTSIDE_WORKSPACE: true
    /** A path no file system call should see: a NUL byte, empty, or longer than the system allows. */
    INVALID_PATH: true
    /** The path does not exist. */
    NOT_FOUND: true
    /** The path is a FIFO, socket or device: the tools touch regular files and directories only. */
    NOT_A_REGULAR_FILE: true
    /** A file tool was given a directory. */
    IS_A_DIRECTORY: true
    /** A directory tool was given a file. */
    NOT_A_DIRECTORY: true
    /** The file holds NUL bytes (or is not UTF-8, for an edit): the tools handle text only. */
    BINARY_FILE: true
    /** The file is larger than the tool reads or edits. */
    FILE_TOO_LARGE: true
    /** `edit_file`/`write_file` on a file the agent has not read (in full or in part) in this session. */
    NOT_READ: true
    /** `edit_file`/`write_file` on a file that changed on disk since the agent last read it. */
    STALE_FILE: true
    /** `edit_file`: the text to replace is not in the file. */
    NO_MATCH: true
    /** `edit_file`: the text to replace occurs more than once and `replace_all` is not set. */
    AMBIGUOUS_MATCH: true
    /** `grep`/`glob`: the pattern does not parse. */
    INVALID_PATTERN: true
    /** A file system call failed for another reason (permissions, I/O); the message names it. */
    FILE_SYSTEM: true
  }
}

/**
 * What a workspace tool throws: a `ToolError` whose code is one of the
 * workspace codes above (or a pipeline code such as `TIMEOUT`), with a
 * message in workspace-relative words. Never an absolute path of the machine:
 * the model sees only paths it could have written itself.
 */
export function workspaceError(code: ConstructorParameters<typeof ToolError>[0], message: string, cause?: unknown): ToolError {
  return new ToolError(code, message, cause === undefined ? undefined : { cause })
}

/** The errno code of a Node file system error, if it is one. */
export function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | null)?.code
  return typeof code === 'string' ? code : undefined
}

/**
 * Turns a file system error into a `ToolError` about `shown` (the path as the
 * model should read it). Node's own messages quote the absolute path
 * (`ENOENT: no such file or directory, open '/home/…'`): they never reach the
 * model. A `ToolError` passes through unchanged.
 */
export function fileSystemError(error: unknown, shown: string): ToolError {
  if (error instanceof ToolError) return error
  switch (errnoOf(error)) {
    case 'ENOENT':
      return workspaceError('NOT_FOUND', `${shown} does not exist`, error)
    case 'ENOTDIR':
      return workspaceError('NOT_FOUND', `${shown} does not exist (a part of the path is a file, not a directory)`, error)
    case 'ENAMETOOLONG':
      return workspaceError('INVALID_PATH', `${shown} is too long a path for this system`, error)
    case 'EISDIR':
      return workspaceError('IS_A_DIRECTORY', `${shown} is a directory`, error)
    case 'EACCES':
    case 'EPERM':
      return workspaceError('FILE_SYSTEM', `permission denied: ${shown}`, error)
    case 'ELOOP':
      return workspaceError('FILE_SYSTEM', `${shown} goes through too many symbolic links`, error)
    case 'ENXIO':
    case 'ENODEV':
      return workspaceError('NOT_A_REGULAR_FILE', `${shown} is not a regular file or directory`, error)
    case 'EEXIST':
      return workspaceError('FILE_SYSTEM', `${shown} already exists`, error)
    case 'ENOSPC':
      return workspaceError('FILE_SYSTEM', `no space left on the device for ${shown}`, error)
    case 'EFBIG':
      return workspaceError('FILE_SYSTEM', `${shown} would be larger than this process may write a file (EFBIG)`, error)
    case 'EDQUOT':
      return workspaceError('FILE_SYSTEM', `the disk quota is used up for ${shown}`, error)
    case 'EROFS':
      return workspaceError('FILE_SYSTEM', `${shown} is on a read-only file system`, error)
    case undefined: {
      // Not an errno error: its message may quote a machine path, so only a message without one is kept.
      const message = error instanceof Error ? error.message : String(error)
      return workspaceError('FILE_SYSTEM', message.includes('/') ? `${shown}: the file system call failed` : `${shown}: ${message}`, error)
    }
    default:
      return workspaceError('FILE_SYSTEM', `${shown}: the file system refused (${errnoOf(error)})`, error)
  }
}
