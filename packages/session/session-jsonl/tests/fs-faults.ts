/**
 * Injected file system failures, for machines where a real full disk (a small
 * tmpfs) or an immutable file (`chattr +i`) cannot be made, and for failures
 * no real setup produces on demand.
 *
 * A test file installs them with
 *
 * ```ts
 * vi.mock('node:fs', async (original) => (await import('./fs-faults')).faultyFs(await original()))
 * vi.mock('node:fs/promises', async (original) => (await import('./fs-faults')).faultyFsPromises(await original()))
 * ```
 *
 * which wraps the calls the backend makes; with no fault set, every call
 * goes through unchanged. This module must not import `node:fs` itself (it
 * would get the wrapped module).
 */

/** A disk under `prefix` with `free` bytes left: writes past it fail with `ENOSPC`, as a full disk does. */
interface Disk {
  prefix: string
  free: number
}

/** Opening `path` (or anything under it) for writing fails with `errno` (an immutable file: `EPERM`; a read-only mount: `EROFS`). */
interface Denial {
  path: string
  errno: string
  under: boolean
}

/** A call held until the test lets it go (`holdCall`). */
interface Hold {
  path: string
  kind: 'read' | 'write'
  reach(): void
  released: Promise<void>
  finish(): void
}

const state = {
  disks: [] as Disk[],
  denials: [] as Denial[],
  syncs: [] as Denial[],
  holds: [] as Hold[],
  injected: 0,
  calls: new Map<string, Calls>(),
}

/** A held call: `reached` once the backend is waiting in it, `finished` once it returned to the backend. */
export interface HeldCall {
  readonly reached: Promise<void>
  readonly finished: Promise<void>
  release(): void
}

/**
 * Holds the next `read` (or `write`) on a handle opened at `path` (through
 * `node:fs/promises`) until `release()`: for tests that must act while the
 * backend is inside that call. Only that one call is held.
 */
export function holdCall(path: string, kind: 'read' | 'write'): HeldCall {
  let reach!: () => void
  let release!: () => void
  let finish!: () => void
  const reached = new Promise<void>((resolve) => (reach = resolve))
  const released = new Promise<void>((resolve) => (release = resolve))
  const finished = new Promise<void>((resolve) => (finish = resolve))
  state.holds.push({ path, kind, reach, released, finish })
  return { reached, finished, release }
}

/** Waits in the call of `kind` at `path` if a test holds it, then runs it. */
async function held<T>(path: string, kind: Hold['kind'], call: () => Promise<T>): Promise<T> {
  const index = state.holds.findIndex((hold) => hold.path === path && hold.kind === kind)
  if (index < 0) return call()
  const [hold] = state.holds.splice(index, 1)
  hold!.reach()
  await hold!.released
  try {
    return await call()
  } finally {
    queueMicrotask(hold!.finish)
  }
}

/** The `write` and `sync`/`datasync` calls made on handles opened (through `node:fs/promises`) at one path. */
export interface Calls {
  writes: number
  syncs: number
}

/** The calls made at `path` so far (counted whether or not a fault is set). */
export function callsAt(path: string): Calls {
  return { ...(state.calls.get(path) ?? { writes: 0, syncs: 0 }) }
}

function count(path: string, kind: keyof Calls): void {
  let calls = state.calls.get(path)
  if (!calls) state.calls.set(path, (calls = { writes: 0, syncs: 0 }))
  calls[kind]++
}

/** Limits the bytes that can still be written under `prefix` (0: the disk is full). */
export function limitDisk(prefix: string, free: number): void {
  const disk = state.disks.find((entry) => entry.prefix === prefix)
  if (disk) disk.free = free
  else state.disks.push({ prefix, free })
}

/** Refuses to open `path` for writing with `errno`; with `under`, also every path that starts with it. */
export function denyWrites(path: string, errno = 'EPERM', under = false): void {
  state.denials.push({ path, errno, under })
}

/** Makes `sync`/`datasync` of a file opened at `path` fail with `errno` (an I/O error: `EIO`). */
export function failSyncs(path: string, errno = 'EIO'): void {
  state.syncs.push({ path, errno, under: false })
}

/** Removes every fault. */
export function clearFaults(): void {
  state.disks = []
  state.denials = []
  state.syncs = []
  state.holds = []
}

/** How many calls failed because of an injected fault so far. */
export function injectedFailures(): number {
  return state.injected
}

function systemError(errno: string, syscall: string, path: string | undefined): NodeJS.ErrnoException {
  state.injected++
  const error = new Error(`${errno}: injected failure, ${syscall}${path ? ` '${path}'` : ''}`) as NodeJS.ErrnoException
  error.code = errno
  error.syscall = syscall
  if (path !== undefined) error.path = path
  return error
}

function diskOf(path: string | undefined): Disk | undefined {
  return path === undefined ? undefined : state.disks.find((disk) => path.startsWith(disk.prefix))
}

function writes(flags: unknown): boolean {
  return typeof flags === 'string' && /[wa+]/.test(flags)
}

function checkOpen(path: unknown, flags: unknown, syscall: string): void {
  if (typeof path !== 'string' || !writes(flags)) return
  const denial = state.denials.find((entry) => entry.path === path || (entry.under && path.startsWith(entry.path)))
  if (denial) throw systemError(denial.errno, syscall, path)
}

/** How many of `length` bytes a write under `path` may write; throws `ENOSPC` when none. */
function allowance(path: string | undefined, length: number, syscall: string): number {
  const disk = diskOf(path)
  if (!disk || length === 0) return length
  if (disk.free <= 0) throw systemError('ENOSPC', syscall, path)
  const allowed = Math.min(length, disk.free)
  disk.free -= allowed
  return allowed
}

type Fs = typeof import('node:fs')
type FsPromises = typeof import('node:fs/promises')

/** `node:fs` with the faults applied to `openSync`, `writeSync` and `mkdirSync`. */
export function faultyFs(fs: Fs): Fs {
  const paths = new Map<number, string>()
  const openSync = ((path: string, flags: string = 'r', mode?: number) => {
    checkOpen(path, flags, 'open')
    const fd = fs.openSync(path, flags, mode)
    paths.set(fd, path)
    return fd
  }) as Fs['openSync']
  const closeSync: Fs['closeSync'] = (fd) => {
    paths.delete(fd)
    fs.closeSync(fd)
  }
  const writeSync = ((fd: number, data: Buffer | string, ...rest: unknown[]) => {
    const path = paths.get(fd)
    if (typeof data === 'string') {
      const bytes = Buffer.from(data)
      return fs.writeSync(fd, bytes, 0, allowance(path, bytes.length, 'write'))
    }
    const offset = (rest[0] as number | undefined) ?? 0
    const length = (rest[1] as number | undefined) ?? data.length - offset
    return fs.writeSync(fd, data, offset, allowance(path, length, 'write'), rest[2] as number | undefined)
  }) as Fs['writeSync']
  const mkdirSync = ((path: string, options?: unknown) => {
    const disk = diskOf(path)
    if (disk && disk.free <= 0 && !fs.existsSync(path)) throw systemError('ENOSPC', 'mkdir', path)
    return fs.mkdirSync(path, options as never)
  }) as Fs['mkdirSync']
  const wrapped = { ...fs, openSync, closeSync, writeSync, mkdirSync }
  return { ...wrapped, default: wrapped } as Fs
}

/** `node:fs/promises` with the faults applied to `open` and the handle's `write`, `sync` and `datasync`, and holds to `read` and `write`. */
export function faultyFsPromises(fs: FsPromises): FsPromises {
  const open = (async (path: string, flags?: string, mode?: number) => {
    checkOpen(path, flags, 'open')
    const handle = await fs.open(path, flags, mode)
    return new Proxy(handle, {
      get(target, key) {
        if (key === 'write') {
          return async (buffer: Buffer, offset = 0, length = buffer.length - offset, position?: number) => {
            count(path, 'writes')
            return held(path, 'write', () => target.write(buffer, offset, allowance(path, length, 'write'), position))
          }
        }
        if (key === 'read') {
          const read = target.read.bind(target) as (...args: unknown[]) => Promise<unknown>
          return (...args: unknown[]) => held(path, 'read', () => read(...args))
        }
        if (key === 'sync' || key === 'datasync') {
          return async () => {
            count(path, 'syncs')
            const failure = state.syncs.find((entry) => entry.path === path)
            if (failure) throw systemError(failure.errno, 'fsync', path)
            return key === 'sync' ? target.sync() : target.datasync()
          }
        }
        const value = Reflect.get(target, key, target) as unknown
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
      },
    })
  }) as FsPromises['open']
  const wrapped = { ...fs, open }
  return { ...wrapped, default: wrapped } as FsPromises
}
