import { fork, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Context, type Fiber } from 'cordis'
import { afterEach, describe, expect, it } from 'vitest'
import { MessageId, createAssistantMessage, createUserMessage } from '@deepseek-ai/dsh-llm'
import { scoped } from '@deepseek-ai/dsh-scope'
import Sessions, { type AnySessionEvent, type Session } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence, { JsonlPersistenceError } from '@deepseek-ai/dsh-session-jsonl'
import { sid, tempDir } from './helpers'

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url))
const fibers: Fiber[] = []
const children: ChildProcess[] = []
const backends = new Map<Context, Fiber>()

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
})

/** Mounts the backend in `ctx` (disposed after the test). */
async function persist(ctx: Context, directory: string): Promise<Fiber> {
  const fiber = ctx.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })
  fibers.push(fiber)
  backends.set(ctx, fiber)
  await fiber
  return fiber
}

/** A Cordis app with ctx.sessions and (unless `persist` is false) the JSONL backend. */
async function app(directory: string, options: { persist?: boolean } = {}) {
  const ctx = new Context()
  fibers.push(ctx.plugin(Sessions))
  if (options.persist !== false) await persist(ctx, directory)
  return ctx
}

/** Disposes the backend of `ctx`, as a process exit would (after draining). */
const unplug = (ctx: Context) => backends.get(ctx)!.dispose()

const model = { kind: 'model', provider: 'scripted', model: 'demo' } as const

function turn(session: Session, n: number, chunks = 3): void {
  session.append('turn/start', { turn: n, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: createUserMessage(`q${n}`, { id: MessageId(`u${n}`) }) })
  session.append('step/start', { turn: n, step: 1 })
  const seqs: number[] = []
  for (let i = 0; i < chunks; i++) {
    seqs.push(session.append('assistant/chunk', { turn: n, step: 1, chunk: { type: 'text-delta', index: 0, text: `c${i}` } }).seq)
  }
  session.append('assistant/message', {
    turn: n,
    step: 1,
    message: createAssistantMessage('c0c1c2', { source: model, id: MessageId(`a${n}`) }),
    chunkSeqs: seqs,
    finishReason: { kind: 'stop' },
  })
  session.append('step/end', { turn: n, step: 1 })
  session.append('turn/end', { turn: n, reason: { kind: 'completed' } })
}

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line)) : [])
const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

function vetoOf(run: () => unknown): JsonlPersistenceError {
  try {
    run()
  } catch (error) {
    expect(error).toBeInstanceOf(JsonlPersistenceError)
    return error as JsonlPersistenceError
  }
  throw new Error('expected the publication to be vetoed')
}

describe('wiring: live sessions', () => {
  it('writes a live session behind its appends; ctx.sessions.flush makes it durable', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    const session = ctx.sessions.create(sid('live'), { cwd: '/repo' })
    turn(session, 1)
    const file = join(dir, 'live.jsonl')
    expect(lines(file)).toEqual([]) // still in memory: the timer is long and nobody flushed
    await ctx.sessions.flush(session)
    expect(lines(file)).toEqual(plain(session.events))
    turn(session, 2)
    expect(lines(file)).toHaveLength(10)
    await ctx.sessions.flush(session)
    expect(lines(file)).toEqual(plain(session.events))
  })

  it('the session/disposed drain writes what was never flushed and removes the lock', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    const session = ctx.sessions.prepare(sid('drained'))
    const detach = ctx.sessions.enter(session)
    turn(session, 1)
    expect(existsSync(join(dir, 'drained.jsonl.lock'))).toBe(true)
    detach()
    // load() waits for the background close of the disposed session.
    const loaded = await ctx.sessionPersistence.load(sid('drained'))
    expect(loaded.events).toEqual(plain(session.events))
    expect(existsSync(join(dir, 'drained.jsonl.lock'))).toBe(false)
  })

  it('resumes: a loaded session goes live and is continued after its loaded lines', async () => {
    const dir = tempDir()
    const first = await app(dir)
    const session = first.sessions.prepare(sid('resumed'))
    const detach = first.sessions.enter(session)
    turn(session, 1)
    await first.sessions.flush(session)
    detach()
    await unplug(first)

    const second = await app(dir)
    const loaded = await second.sessionPersistence.load(sid('resumed'))
    const resumed = second.sessions.prepare(sid('resumed'), { events: loaded.events })
    second.sessions.enter(resumed)
    turn(resumed, 2)
    await second.sessions.flush(resumed)
    expect(lines(join(dir, 'resumed.jsonl'))).toEqual(plain(resumed.events))
  })

  it('listens globally: sessions reach it even when it is mounted in an agent-scoped context', async () => {
    const dir = tempDir()
    const ctx = await app(dir, { persist: false })
    await persist(scoped(ctx, 'some-agent'), dir)
    const session = ctx.sessions.create(sid('other-agent'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    expect(lines(join(dir, 'other-agent.jsonl'))).toEqual(plain(session.events))
  })
})

describe('wiring: one writer per session (veto on session/created)', () => {
  it('a second live session with the same id in another app on the same directory is vetoed with SESSION_LOCKED', async () => {
    const dir = tempDir()
    const a = await app(dir)
    const b = await app(dir)
    const first = a.sessions.create(sid('shared'))
    const error = vetoOf(() => b.sessions.create(sid('shared')))
    expect(error.code).toBe('SESSION_LOCKED')
    expect(b.sessions.get(sid('shared'))).toBeUndefined()
    // The first writer is unaffected.
    turn(first, 1)
    await a.sessions.flush(first)
    expect(lines(join(dir, 'shared.jsonl'))).toEqual(plain(first.events))
  })

  it('a session another process writes is vetoed with SESSION_LOCKED naming that process', async () => {
    const dir = tempDir()
    const child = fork(join(repoRoot, 'packages/session/session-jsonl/tests/children/hold-lock.ts'), [dir, 'elsewhere'], {
      cwd: repoRoot,
      execArgv: ['--conditions=dsh-source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    children.push(child)
    await new Promise((resolve) => child.once('message', resolve))
    const ctx = await app(dir)
    const error = vetoOf(() => ctx.sessions.create(sid('elsewhere')))
    expect(error.code).toBe('SESSION_LOCKED')
    expect(error.message).toContain(`process ${child.pid}`)
  })

  it('a fresh session over an existing file is vetoed with SESSION_EXISTS, and the file is untouched', async () => {
    const dir = tempDir()
    const first = await app(dir)
    const session = first.sessions.create(sid('taken'))
    turn(session, 1)
    await first.sessions.flush(session)
    await unplug(first)
    const before = readFileSync(join(dir, 'taken.jsonl'))

    const second = await app(dir)
    expect(vetoOf(() => second.sessions.create(sid('taken'))).code).toBe('SESSION_EXISTS')
    expect(second.sessions.get(sid('taken'))).toBeUndefined()
    expect(readFileSync(join(dir, 'taken.jsonl'))).toEqual(before)
    expect(existsSync(join(dir, 'taken.jsonl.lock'))).toBe(false)
  })

  it('an id that is not a safe file name is vetoed with INVALID_SESSION_ID', async () => {
    const ctx = await app(tempDir())
    expect(vetoOf(() => ctx.sessions.create(sid('../escape'))).code).toBe('INVALID_SESSION_ID')
  })

  it('a publication vetoed by another listener leaves no file and frees the id', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    const dispose = ctx.on('session/created', () => {
      throw new Error('policy says no')
    })
    expect(() => ctx.sessions.create(sid('vetoed'))).toThrow('policy says no')
    dispose()
    await ctx.sessionPersistence.flush(sid('vetoed'))
    expect([existsSync(join(dir, 'vetoed.jsonl')), existsSync(join(dir, 'vetoed.jsonl.lock'))]).toEqual([false, false])
    const session = ctx.sessions.create(sid('vetoed'))
    turn(session, 1)
    await ctx.sessions.flush(session)
    expect(lines(join(dir, 'vetoed.jsonl'))).toEqual(plain(session.events))
  })
})

describe('wiring: late mounting and hot replacement', () => {
  it('takes on a session created before the plugin was mounted, from its first event', async () => {
    const dir = tempDir()
    const ctx = await app(dir, { persist: false })
    const session = ctx.sessions.create(sid('early'))
    turn(session, 1)
    await persist(ctx, dir)
    turn(session, 2)
    await ctx.sessions.flush(session)
    expect(lines(join(dir, 'early.jsonl'))).toEqual(plain(session.events))
  })

  it('a re-plugged backend continues the files of live sessions where the previous instance stopped', async () => {
    const dir = tempDir()
    const ctx = await app(dir, { persist: false })
    const session = ctx.sessions.create(sid('reloaded'))
    const first = await persist(ctx, dir)
    turn(session, 1)
    await first.dispose() // drains what was queued
    turn(session, 2) // no backend: not persisted yet
    await persist(ctx, dir)
    turn(session, 3)
    await ctx.sessions.flush(session)
    expect(lines(join(dir, 'reloaded.jsonl'))).toEqual(plain(session.events))
  })

  it('disposing the plugin removes all its listeners: later sessions leave no trace in the directory', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    const live = ctx.sessions.create(sid('before'))
    turn(live, 1)
    await unplug(ctx)
    turn(live, 2)
    const after = ctx.sessions.create(sid('after'))
    turn(after, 1)
    // The session the backend wrote says it is no longer written (issue 16); the one it never saw has nothing to say.
    await expect(ctx.sessions.flush(live)).rejects.toMatchObject({ code: 'PERSISTENCE_DETACHED' })
    await ctx.sessions.flush(after)
    expect(readdirSync(dir).sort()).toEqual(['before.jsonl'])
    expect(lines(join(dir, 'before.jsonl'))).toHaveLength(10)
  })
})

describe('wiring: failures', () => {
  it('a write error fails this flush and every later one with its typed cause; appends keep working in memory', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    const session = ctx.sessions.create(sid('broken'))
    turn(session, 1)
    // The file cannot be opened for appending: its path is taken by a directory.
    mkdirSync(join(dir, 'broken.jsonl'))
    const flushed = ctx.sessions.flush(session)
    await expect(flushed).rejects.toMatchObject({ code: 'FLUSH_FAILED' })
    // The only failing listener's typed error is the cause itself (and the one entry of `errors`).
    const { cause, errors } = (await flushed.catch((error) => error)) as { cause: unknown; errors: unknown[] }
    expect(errors).toEqual([cause])
    expect(cause).toMatchObject({ code: 'NOT_A_FILE', errno: 'EISDIR', file: join(dir, 'broken.jsonl') })
    turn(session, 2)
    expect(session.events).toHaveLength(19)
    await expect(ctx.sessions.flush(session)).rejects.toMatchObject({ code: 'FLUSH_FAILED' })
    rmSync(join(dir, 'broken.jsonl'), { recursive: true })
  })
})

describe('wiring: event types (R-PER-4)', () => {
  it('an event of a type registered ignorable is marked in the file and loads without the registration', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    ctx.sessions.registerType('jsonl-test/goal' as never, { ignorable: true })
    ctx.sessions.registerType('jsonl-test/strict' as never, {})
    const session = ctx.sessions.create(sid('typed'))
    session.append('jsonl-test/goal' as never, { goal: 'ship' } as never)
    await ctx.sessions.flush(session)
    expect(lines(join(dir, 'typed.jsonl'))[1]).toMatchObject({ type: 'jsonl-test/goal', seq: 1, data: { goal: 'ship' }, ignorable: true })
    const detached = ctx.sessions.get(sid('typed'))!
    expect(detached).toBe(session)

    const strict = ctx.sessions.create(sid('strict'))
    strict.append('jsonl-test/strict' as never, { x: 1 } as never)
    await ctx.sessions.flush(strict)

    // A process without the registrations:
    const other = await app(dir)
    await unplug(ctx)
    const loaded = await other.sessionPersistence.load(sid('typed'))
    expect(loaded.events[1]).toEqual({ type: 'jsonl-test/goal', seq: 1, time: session.events[1]!.time, data: { goal: 'ship' }, ignorable: true })
    await expect(other.sessionPersistence.load(sid('strict'))).rejects.toMatchObject({ code: 'UNKNOWN_TYPE', line: 2 })

    // With the registration, the strict type loads.
    other.sessions.registerType('jsonl-test/strict' as never, {})
    expect((await other.sessionPersistence.load(sid('strict'))).events[1]).toMatchObject({ type: 'jsonl-test/strict', data: { x: 1 } })
  })
})
