import { execFileSync } from 'node:child_process'
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MessageId, createAssistantMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import Sessions, { SessionId, type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence, { JsonlPersistenceError } from '@deepseek-ai/dsh-session-jsonl'
import { clearFaults, denyWrites, failSyncs, injectedFailures, limitDisk } from './fs-faults'
import { addTextTurn, logBuilder, sid } from './helpers'

vi.mock('node:fs', async (original) => (await import('./fs-faults')).faultyFs(await original()))
vi.mock('node:fs/promises', async (original) => (await import('./fs-faults')).faultyFsPromises(await original()))

const cleanups: Array<() => unknown> = []
afterEach(async () => {
  clearFaults()
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-jsonl-fail-'))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** Runs `command`; whether it worked (as root, on a kernel and file system that allow it). */
function tryRun(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/** Whether this machine lets the tests mount a small tmpfs (root in a container that allows mounts). */
const TMPFS = (() => {
  const probe = mkdtempSync(join(tmpdir(), 'dsh-jsonl-probe-'))
  const mounted = tryRun('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', probe])
  if (mounted) tryRun('umount', [probe])
  rmSync(probe, { recursive: true, force: true })
  return mounted
})()

/** Whether `chattr +i` works on files in the temporary directory here. */
const CHATTR = (() => {
  const probe = mkdtempSync(join(tmpdir(), 'dsh-jsonl-probe-'))
  const file = join(probe, 'f')
  writeFileSync(file, 'x')
  const works = tryRun('chattr', ['+i', file])
  if (works) tryRun('chattr', ['-i', file])
  rmSync(probe, { recursive: true, force: true })
  return works
})()

/** A session directory on a disk that `fill()` makes full and `free()` frees again. */
interface Disk {
  dir: string
  fill(): void
  free(): void
}

/** A 512 KiB tmpfs, filled by a file that takes every free byte. */
function tmpfsDisk(): Disk {
  const mountpoint = mkdtempSync(join(tmpdir(), 'dsh-jsonl-tmpfs-'))
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=512k', 'tmpfs', mountpoint])
  cleanups.push(() => {
    execFileSync('umount', [mountpoint])
    rmSync(mountpoint, { recursive: true, force: true })
  })
  const dir = join(mountpoint, 'sessions')
  mkdirSync(dir)
  const filler = join(mountpoint, 'filler')
  return {
    dir,
    fill() {
      const block = Buffer.alloc(4096, 1)
      let size = 0
      for (;;) {
        try {
          writeFileSync(filler, block, { flag: 'a' })
          size += block.length
        } catch (error) {
          expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC')
          break
        }
      }
      expect(size).toBeGreaterThan(0)
    },
    free: () => rmSync(filler, { force: true }),
  }
}

/** The same, injected: writes under the directory fail with ENOSPC once it is "full". */
function injectedDisk(): Disk {
  const dir = join(tempDir(), 'sessions')
  mkdirSync(dir)
  return { dir, fill: () => limitDisk(dir, 0), free: () => limitDisk(dir, Number.POSITIVE_INFINITY) }
}

/** A Cordis app with ctx.sessions and the backend, with the backend's warnings collected. */
async function app(dir: string, flushIntervalMs = 60_000) {
  const ctx = new Context()
  const warnings: unknown[] = []
  // Cordis logs an error's cause before it: keep the backend's own reports.
  ctx.logger.exporter({
    export: (message) => {
      const [first] = message.args
      if (message.type === 'warn' && message.name === 'session-jsonl' && (first instanceof JsonlPersistenceError || typeof first === 'string')) warnings.push(first)
    },
  })
  const sessions = ctx.plugin(Sessions)
  const backend = ctx.plugin(JsonlSessionPersistence, { directory: dir, flushIntervalMs })
  await backend
  cleanups.push(async () => {
    await backend.dispose()
    await sessions.dispose()
  })
  return { ctx, persistence: ctx.sessionPersistence as JsonlSessionPersistence, warnings }
}

const model = { kind: 'model', provider: 'scripted', model: 'demo' } as const

/** One closed turn with `chunks` streamed chunks of about 100 bytes each. */
function turn(session: Session, n: number, chunks = 3): void {
  session.append('turn/start', { turn: n, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: createUserMessage(`q${n}`, { id: MessageId(`u${n}`) }) })
  session.append('step/start', { turn: n, step: 1 })
  const seqs: number[] = []
  for (let i = 0; i < chunks; i++) {
    seqs.push(session.append('assistant/chunk', { turn: n, step: 1, chunk: { type: 'text-delta', index: 0, text: `chunk ${i} `.padEnd(60, '.') } }).seq)
  }
  session.append('assistant/message', {
    turn: n,
    step: 1,
    message: createAssistantMessage('answer', { source: model, id: MessageId(`a${n}`) }),
    chunkSeqs: seqs,
    finishReason: { kind: 'stop' },
  })
  session.append('step/end', { turn: n, step: 1 })
  session.append('turn/end', { turn: n, reason: { kind: 'completed' } })
}

const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

/** What `promise` rejected with: a `JsonlPersistenceError`, or (through `ctx.sessions.flush`) its `FLUSH_FAILED` wrapper's only cause (`cause`, and alone in `errors`). */
async function rejection(promise: Promise<unknown>): Promise<JsonlPersistenceError> {
  let error: unknown
  try {
    await promise
  } catch (caught) {
    error = caught
  }
  if ((error as { code?: unknown })?.code === 'FLUSH_FAILED') {
    const { cause, errors } = error as { cause: unknown; errors: unknown[] }
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBe(cause)
    error = cause
  }
  expect(error).toBeInstanceOf(JsonlPersistenceError)
  return error as JsonlPersistenceError
}

/** Synchronous variant for vetoed publications. */
function thrown(run: () => unknown): JsonlPersistenceError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(JsonlPersistenceError)
    return error as JsonlPersistenceError
  }
  throw new Error('expected a throw')
}

/** Files left in `dir` other than session logs: lock files, temporary lock files, sidecars. */
const leftovers = (dir: string) => readdirSync(dir).filter((name) => !name.endsWith('.jsonl'))

const disks = [
  TMPFS ? { name: 'a real 512 KiB tmpfs', make: tmpfsDisk } : { name: 'injected ENOSPC (this machine cannot mount a tmpfs)', make: injectedDisk },
  { name: 'injected ENOSPC', make: injectedDisk },
]

describe.each(disks)('a full disk: $name', ({ make }) => {
  it('fails the flush with NO_SPACE naming the file, and every later flush of the session (sticky, also once space is back)', async () => {
    const disk = make()
    const { ctx, persistence, warnings } = await app(disk.dir)
    const session = ctx.sessions.prepare(sid('s'))
    const detach = ctx.sessions.enter(session)
    turn(session, 1)
    await ctx.sessions.flush(session)
    const durable = plain(session.events)

    disk.fill()
    // Larger than what the last page of the file may still hold.
    turn(session, 2, 200)
    const error = await rejection(ctx.sessions.flush(session))
    const file = join(disk.dir, 's.jsonl')
    expect({ code: error.code, errno: error.errno, file: error.file }).toEqual({ code: 'NO_SPACE', errno: 'ENOSPC', file })
    expect(error.message).toContain(file)
    expect(error.message).not.toContain('chunk 0') // never data from the log

    // Sticky: the next flush, the direct flush, and a flush after space came back all reject the same way.
    expect(await rejection(ctx.sessions.flush(session))).toBe(error)
    expect(await rejection(persistence.flush(sid('s')))).toBe(error)
    disk.free()
    turn(session, 3)
    expect(await rejection(ctx.sessions.flush(session))).toBe(error)
    // The session itself still works in memory.
    expect(session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 3 } })

    // Disposing it closes the file and removes the lock (load waits for that); nothing is left behind.
    detach()
    // What was flushed before the failure loads back; anything after it only as a prefix of the log.
    const loaded = await persistence.load(sid('s'))
    expect(loaded.events.slice(0, durable.length)).toEqual(durable)
    const survived = loaded.events.length - loaded.repairs.length
    expect(loaded.events.slice(0, survived)).toEqual(plain(session.events).slice(0, survived))
    // Logged once, when it happened (the close that rejected with it at the disposal adds nothing).
    expect(warnings).toEqual([error])
    // A write the full disk cut short may have left a torn tail: the load kept it in a sidecar.
    expect(leftovers(disk.dir)).toEqual(loaded.warnings.map((warning) => `s.jsonl.torn-${warning.sidecar!.split('.torn-')[1]}`))
  })

  it('vetoes a session created on a full disk with NO_SPACE, leaving no temporary lock file behind', async () => {
    const disk = make()
    const { ctx, persistence } = await app(disk.dir)
    disk.fill()
    const error = thrown(() => ctx.sessions.create(sid('fresh')))
    expect({ code: error.code, file: error.file }).toEqual({ code: 'NO_SPACE', file: join(disk.dir, 'fresh.jsonl.lock') })
    expect(ctx.sessions.get(sid('fresh'))).toBeUndefined()
    const direct = await rejection(persistence.append(sid('direct'), logBuilder().events))
    expect(direct.code).toBe('NO_SPACE')
    expect(readdirSync(disk.dir)).toEqual([])
    // Once space is back, the same ids work.
    disk.free()
    const session = ctx.sessions.create(sid('fresh'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    expect(readFileSync(join(disk.dir, 'fresh.jsonl'), 'utf8').trimEnd().split('\n')).toHaveLength(session.events.length)
  })

  it('a fresh session whose first write fails leaves no file: nothing of it is on disk (issue 16)', async () => {
    const disk = make()
    const { ctx, warnings } = await app(disk.dir)
    const session = ctx.sessions.create(sid('fresh'))
    turn(session, 1)
    disk.fill()
    const error = await rejection(ctx.sessions.flush(session))
    expect(error.code).toBe('NO_SPACE')
    expect(error.message).toContain('its file was removed')
    // Only the lock of the live session is left, no empty fresh.jsonl; the session lives on in memory.
    expect(readdirSync(disk.dir)).toEqual(['fresh.jsonl.lock'])
    expect(warnings).toEqual([error])
    disk.free()
    turn(session, 2)
    expect(await rejection(ctx.sessions.flush(session))).toBe(error)
    expect(session.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 2 } })
  })

  it('logs a write-behind failure when it happens (no flush waiting), and the next flush rejects with it', async () => {
    const disk = make()
    const { ctx, warnings } = await app(disk.dir, 1)
    const session = ctx.sessions.create(sid('behind'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    disk.fill()
    turn(session, 2, 200)
    // The timer writes (without a flush) and fails: the failure is logged at once.
    await vi.waitFor(() => expect(warnings).toEqual([expect.objectContaining({ code: 'NO_SPACE' })]), { timeout: 20_000, interval: 5 })
    disk.free()
    expect(await rejection(ctx.sessions.flush(session))).toBe(warnings[0])
  })
})


describe('failures only injection can time', () => {
  it('a torn tail that cannot be copied to its sidecar is not cut: the load fails typed, the file is untouched, no half sidecar stays', async () => {
    const disk = injectedDisk()
    const log = logBuilder()
    addTextTurn(log, 1)
    const events = log.events
    const file = join(disk.dir, 's.jsonl')
    writeFileSync(file, events.map((event) => JSON.stringify(event) + '\n').join('') + '{"type":"turn/start","seq":'.padEnd(2000, 'x'))
    const before = readFileSync(file)
    const { persistence } = await app(disk.dir)
    // Room for the lock file, not for the 2000 bytes of the sidecar.
    limitDisk(disk.dir, 500)
    const error = await rejection(persistence.load(sid('s')))
    expect({ code: error.code, errno: error.errno }).toEqual({ code: 'NO_SPACE', errno: 'ENOSPC' })
    expect(error.file).toMatch(/s\.jsonl\.torn-\d+$/)
    expect(readFileSync(file)).toEqual(before)
    expect(leftovers(disk.dir)).toEqual([])
    // With space, the same load cuts the tail into a sidecar and succeeds.
    disk.free()
    const loaded = await persistence.load(sid('s'))
    expect(loaded.warnings.map((warning) => warning.code)).toEqual(['TORN_TAIL'])
    expect(readFileSync(loaded.warnings[0]!.sidecar!)).toEqual(before.subarray(before.lastIndexOf(0x0a) + 1))
  })

  it('an fsync that fails (EIO) fails the flush with WRITE_FAILED, sticky like any write failure', async () => {
    const dir = tempDir()
    const { ctx, persistence } = await app(dir)
    const session = ctx.sessions.create(sid('eio'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    turn(session, 2)
    const file = join(dir, 'eio.jsonl')
    failSyncs(file, 'EIO')
    const error = await rejection(ctx.sessions.flush(session))
    expect({ code: error.code, errno: error.errno, file: error.file }).toEqual({ code: 'WRITE_FAILED', errno: 'EIO', file })
    expect(error.message).toContain('system error EIO')
    // The data may even be on disk now; the writer cannot know, so it never reports success again.
    clearFaults()
    expect(await rejection(persistence.flush(sid('eio')))).toBe(error)
    expect(await rejection(ctx.sessions.flush(session))).toBe(error)
  })

  it('a session file deleted while it is written (rm, a cleaner) fails the next flush with WRITE_FAILED instead of reporting events durable that no file holds', async () => {
    const dir = tempDir()
    const { ctx, persistence, warnings } = await app(dir)
    const session = ctx.sessions.create(sid('gone'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    const file = join(dir, 'gone.jsonl')
    rmSync(file)
    turn(session, 2)
    const error = await rejection(ctx.sessions.flush(session))
    expect({ code: error.code, file: error.file }).toEqual({ code: 'WRITE_FAILED', file })
    expect(error.message).toBe(
      `Session file ${file} was deleted while session "gone" was being written: what was written to it since is in no file, and every later flush of this session fails. Load the session again to see what is on disk (nothing, unless the file was restored).`,
    )
    expect(warnings).toEqual([error])
    expect(await rejection(persistence.flush(sid('gone')))).toBe(error)
  })

  it('a session file another program wrote to or truncated while it is written fails the next flush with SESSION_CHANGED (two writers, caught)', async () => {
    for (const meddle of ['append', 'truncate'] as const) {
      const dir = tempDir()
      const { ctx, persistence } = await app(dir)
      const session = ctx.sessions.create(sid('shared'))
      turn(session, 1)
      await ctx.sessions.flush(session)
      const file = join(dir, 'shared.jsonl')
      const size = statSync(file).size
      if (meddle === 'append') appendFileSync(file, '{"type":"turn/start","seq":99,"time":1,"data":{"turn":9,"trigger":{"kind":"prompt"}}}\n')
      else truncateSync(file, 0)
      const foreign = statSync(file).size
      turn(session, 2)
      const error = await rejection(ctx.sessions.flush(session))
      expect({ code: error.code, file: error.file }).toEqual({ code: 'SESSION_CHANGED', file })
      const expected = size + (statSync(file).size - foreign)
      expect(error.message).toBe(
        `Session file ${file} changed on disk while session "shared" was being written: it has ${statSync(file).size} bytes where this writer put ${expected} (another program wrote to it, or truncated it). Every later flush of this session fails; look at the file, then load the session again.`,
      )
      expect(await rejection(persistence.flush(sid('shared')))).toBe(error)
    }
  })

  it('a first write cut short before its first newline removes the file it created (issue 16)', async () => {
    const dir = tempDir()
    const { ctx } = await app(dir)
    const session = ctx.sessions.create(sid('short'))
    turn(session, 1)
    // Ten bytes of the session/meta line fit, no newline.
    limitDisk(dir, 10)
    const error = await rejection(ctx.sessions.flush(session))
    expect(error.code).toBe('NO_SPACE')
    expect(readdirSync(dir)).toEqual(['short.jsonl.lock'])
  })

  it('a partial write (the disk fills mid-batch) fails the flush like a full one', async () => {
    const dir = tempDir()
    const { ctx } = await app(dir)
    const session = ctx.sessions.create(sid('partial'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    turn(session, 2)
    limitDisk(dir, 10)
    const error = await rejection(ctx.sessions.flush(session))
    expect(error.code).toBe('NO_SPACE')
    // The ten bytes that fit are on disk: a torn tail the next load cuts into a sidecar.
    expect(readFileSync(join(dir, 'partial.jsonl'), 'utf8').endsWith('\n')).toBe(false)
  })
})

/** A file made immutable (`chattr +i`), undone after the test; injected `EPERM` where chattr does not work. */
function immutable(file: string): string {
  if (CHATTR) {
    execFileSync('chattr', ['+i', file])
    cleanups.push(() => tryRun('chattr', ['-i', file]))
    return 'chattr +i'
  }
  denyWrites(file, 'EPERM')
  return 'injected EPERM'
}

describe(`an immutable session file (${CHATTR ? 'chattr +i' : 'injected EPERM: chattr does not work here'})`, () => {
  it('a resumed session whose file cannot be written fails its flush with PERMISSION_DENIED naming the file', async () => {
    const dir = tempDir()
    const first = await app(dir)
    const session = first.ctx.sessions.prepare(sid('frozen'))
    const detach = first.ctx.sessions.enter(session)
    turn(session, 1)
    await first.ctx.sessions.flush(session)
    detach()
    const loaded = await first.persistence.load(sid('frozen'))
    const file = join(dir, 'frozen.jsonl')
    immutable(file)

    const resumed = first.ctx.sessions.prepare(sid('frozen'), { events: loaded.events })
    first.ctx.sessions.enter(resumed)
    turn(resumed, 2)
    const error = await rejection(first.ctx.sessions.flush(resumed))
    expect({ code: error.code, errno: error.errno, file: error.file }).toEqual({ code: 'PERMISSION_DENIED', errno: 'EPERM', file })
    expect(error.message).toContain(file)
    expect(await rejection(first.ctx.sessions.flush(resumed))).toBe(error)
  })
})

describe('every file system failure is a typed JsonlPersistenceError naming its path (no raw errno)', () => {
  it('a directory where the session file should be is NOT_A_FILE everywhere, never SESSION_NOT_FOUND', async () => {
    const dir = tempDir()
    const file = join(dir, 'dir.jsonl')
    mkdirSync(file)
    const { ctx, persistence } = await app(dir)
    const expected = { code: 'NOT_A_FILE', file }
    const pick = (error: JsonlPersistenceError) => ({ code: error.code, file: error.file })
    expect(pick(await rejection(persistence.load(sid('dir'))))).toEqual(expected)
    expect(pick(await rejection(persistence.exists(sid('dir'))))).toEqual(expected)
    expect(pick(await rejection(persistence.delete(sid('dir'))))).toEqual(expected)
    expect(pick(await rejection(persistence.append(sid('dir'), logBuilder().events)))).toEqual(expected)
    expect(pick(thrown(() => ctx.sessions.create(sid('dir'))))).toEqual(expected)
    // A listing skips it (it is not a session), and nothing else was left behind.
    expect(await persistence.list()).toEqual([])
    expect(readdirSync(dir)).toEqual(['dir.jsonl'])
  })

  it('a file where the session directory should be is NOT_A_DIRECTORY, for the directory and below it', async () => {
    const parent = tempDir()
    const dir = join(parent, 'sessions')
    writeFileSync(dir, 'not a directory')
    const { ctx, persistence } = await app(dir)
    const pick = (error: JsonlPersistenceError) => ({ code: error.code, file: error.file })
    const expected = { code: 'NOT_A_DIRECTORY', file: dir }
    expect(pick(thrown(() => ctx.sessions.create(sid('s'))))).toEqual(expected)
    expect(pick(await rejection(persistence.append(sid('s'), logBuilder().events)))).toEqual(expected)
    expect(pick(await rejection(persistence.load(sid('s'))))).toEqual(expected)
    expect(pick(await rejection(persistence.delete(sid('s'))))).toEqual(expected)
    expect(pick(await rejection(persistence.list()))).toEqual(expected)
    // Below a file: the lookup of the session file fails with ENOTDIR.
    const below = await rejection(persistence.exists(sid('s')))
    expect({ code: below.code, errno: below.errno, file: below.file }).toEqual({ code: 'NOT_A_DIRECTORY', errno: 'ENOTDIR', file: join(dir, 's.jsonl') })

    const deeper = await app(join(dir, 'deeper'))
    const error = thrown(() => deeper.ctx.sessions.create(sid('s')))
    expect({ code: error.code, errno: error.errno }).toEqual({ code: 'NOT_A_DIRECTORY', errno: 'ENOTDIR' })
  })

  it('a directory where the lock file should be is NOT_A_FILE naming the lock', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 's.jsonl.lock'))
    const { persistence } = await app(dir)
    const error = await rejection(persistence.append(sid('s'), logBuilder().events))
    expect({ code: error.code, file: error.file }).toEqual({ code: 'NOT_A_FILE', file: join(dir, 's.jsonl.lock') })
    expect(readdirSync(dir)).toEqual(['s.jsonl.lock'])
  })

  it(`a directory nobody may write into is PERMISSION_DENIED, and nothing is left behind (${CHATTR ? 'chattr +i' : 'injected EPERM'})`, async () => {
    const dir = tempDir()
    const { ctx, persistence } = await app(dir)
    if (CHATTR) {
      execFileSync('chattr', ['+i', dir])
      cleanups.push(() => tryRun('chattr', ['-i', dir]))
    } else {
      denyWrites(dir, 'EPERM', true)
    }
    const error = thrown(() => ctx.sessions.create(sid('s')))
    expect({ code: error.code, errno: error.errno }).toEqual({ code: 'PERMISSION_DENIED', errno: 'EPERM' })
    expect(error.file!.startsWith(join(dir, 's.jsonl.lock'))).toBe(true)
    expect((await rejection(persistence.append(sid('s'), logBuilder().events))).code).toBe('PERMISSION_DENIED')
    expect(readdirSync(dir)).toEqual([])
  })

  it('the injected faults above were real failures of the calls the backend makes (the fault layer is wired)', async () => {
    const dir = tempDir()
    const { persistence } = await app(dir)
    const before = injectedFailures()
    limitDisk(dir, 0)
    expect((await rejection(persistence.append(sid('s'), logBuilder().events))).code).toBe('NO_SPACE')
    expect(injectedFailures()).toBe(before + 1)
  })
})
