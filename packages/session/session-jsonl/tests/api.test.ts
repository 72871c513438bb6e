import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { homedir, hostname } from 'node:os'
import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Sessions, { type AnySessionEvent } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence, { JsonlPersistenceError, isSafeSessionId } from '@deepseek-ai/dsh-session-jsonl'
import { addTextTurn, logBuilder, mount, sid, tempDir } from './helpers'

async function failure(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(JsonlPersistenceError)
    const { code, message } = error as JsonlPersistenceError
    return { code, message }
  }
  throw new Error('expected a rejection')
}

function closedLog(createdAt = 1_764_480_000_000, cwd = '/work') {
  const log = logBuilder(createdAt)
  ;(log.events[0]!.data as { cwd?: string }).cwd = cwd
  addTextTurn(log, 1)
  return log.events
}

describe('config', () => {
  it('resolves ~ to the home directory and relative paths to absolute ones', async () => {
    const root = new Context()
    await root.plugin(JsonlSessionPersistence, { directory: '~/.dsh-test-never-written/sessions' })
    expect((root.sessionPersistence as JsonlSessionPersistence).directory).toBe(join(homedir(), '.dsh-test-never-written/sessions'))
    expect(existsSync(join(homedir(), '.dsh-test-never-written'))).toBe(false) // created on first write only

    const other = new Context()
    await other.plugin(JsonlSessionPersistence, { directory: 'rel/dir' })
    expect((other.sessionPersistence as JsonlSessionPersistence).directory).toBe(join(process.cwd(), 'rel/dir'))
  })

  it('refuses an empty or blank directory with NOT_A_DIRECTORY and provides nothing (resolved, it is the working directory: sessions would land in the project)', async () => {
    for (const directory of ['', '  ']) {
      const root = new Context()
      const error = await Promise.resolve(root.plugin(JsonlSessionPersistence, { directory })).then(
        () => undefined,
        (failure: unknown) => failure,
      )
      expect(error).toBeInstanceOf(JsonlPersistenceError)
      expect(error).toMatchObject({
        code: 'NOT_A_DIRECTORY',
        message: `The session directory is empty (directory: ${JSON.stringify(directory)}); configure where session files live, e.g. "~/.dsh/sessions". An empty path would put them in the working directory (${process.cwd()}).`,
      })
      expect(root.get('sessionPersistence')).toBeUndefined()
    }
  })

  it('refuses a flushIntervalMs longer than a Node timer holds (2^31 − 1 ms: a longer one fires after 1 ms, a write per event) and provides nothing', async () => {
    const root = new Context()
    const error = await Promise.resolve(root.plugin(JsonlSessionPersistence, { directory: tempDir(), flushIntervalMs: 2 ** 31 })).then(
      () => undefined,
      (failure: unknown) => failure,
    )
    expect(String((error as Error | undefined)?.message)).toContain('flushIntervalMs expected number <= 2147483647 but got 2147483648')
    expect(root.get('sessionPersistence')).toBeUndefined()
    await root.plugin(JsonlSessionPersistence, { directory: tempDir(), flushIntervalMs: 2 ** 31 - 1 })
    expect(root.get('sessionPersistence')).toBeDefined()
  })

  it('creates a missing directory (and its parents) on first write', async () => {
    const dir = join(tempDir(), 'a', 'b')
    const { backend } = await mount(dir)
    await backend.append(sid('s'), closedLog())
    await backend.flush(sid('s'))
    expect(statSync(dir).isDirectory()).toBe(true)
  })
})

describe('session ids', () => {
  it('accepts plain file names and refuses anything else with INVALID_SESSION_ID', async () => {
    expect(['a', 'agent-session-3f1c', 'A.b_c-1', 'x'.repeat(200)].map(isSafeSessionId)).toEqual([true, true, true, true])
    const refused = ['', '.hidden', '-x', '../up', 'a/b', 'a\\b', 'a b', 'x'.repeat(201), 'CON', 'nul.txt', 'é']
    expect(refused.map(isSafeSessionId)).toEqual(refused.map(() => false))

    const { backend } = await mount(tempDir())
    const operations: Array<() => Promise<unknown>> = [
      () => backend.append(sid('../up'), closedLog()),
      () => backend.load(sid('../up')),
      () => backend.exists(sid('a/b')),
      () => backend.delete(sid('.x')),
      () => backend.flush(sid('')),
    ]
    for (const operation of operations) {
      const error = await failure(Promise.resolve().then(operation))
      expect(error.code).toBe('INVALID_SESSION_ID')
    }
  })

  it('writes, lists, loads and deletes a session whose id has the longest allowed length (200), also past a stale lock', async () => {
    const dir = tempDir()
    const id = sid(`${'a'.repeat(190)}-${'0'.repeat(9)}`)
    expect(id.length).toBe(200)
    const root = new Context()
    await root.plugin(Sessions)
    await root.plugin(JsonlSessionPersistence, { directory: dir, flushIntervalMs: 60_000 })
    // A live session: its lock is taken in session/created (the lock file's temporary name must fit too).
    const session = root.sessions.create(id)
    await root.sessions.flush(session)
    const events = [...session.events]
    await root.fiber.dispose()
    expect(readFileSync(join(dir, `${id}.jsonl`), 'utf8').split('\n').length).toBe(2)

    // A lock left by a dead process is recovered under the breaker lock, whose temporary file is named the same way.
    writeFileSync(join(dir, `${id}.jsonl.lock`), JSON.stringify({ pid: 2 ** 22 + 1, hostname: hostname(), token: 'dead', acquiredAt: 0 }))
    const { backend } = await mount(dir)
    expect((await backend.list()).map((info) => info.id)).toEqual([id])
    expect(await backend.load(id)).toEqual({ id, events, repairs: [], warnings: [] })
    await backend.delete(id)
    expect(readdirSync(dir)).toEqual([])
  })
})

describe('append', () => {
  it('refuses events that do not continue the log, and queues nothing', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    const events = closedLog()
    expect((await failure(backend.append(sid('s'), events.slice(1)))).code).toBe('INVALID_APPEND')
    const noMeta = events.slice(1, 3).map((event, seq) => ({ ...event, seq })) as AnySessionEvent[]
    expect(await failure(backend.append(sid('s'), noMeta))).toEqual({
      code: 'INVALID_APPEND',
      message: 'Cannot append to session "s": seq 0 must be its session/meta. Nothing was queued.',
    })

    await backend.append(sid('s'), events.slice(0, 3))
    const gap = [events[3]!, { ...events[4]!, seq: 9 }] as AnySessionEvent[]
    expect(await failure(backend.append(sid('s'), gap))).toEqual({
      code: 'INVALID_APPEND',
      message: 'Cannot append to session "s": expected seq 4, got 9 (appends must continue the log without gaps). Nothing was queued.',
    })
    const cyclic = { ...events[3]!, data: {} as Record<string, unknown> }
    cyclic.data.self = cyclic.data
    expect((await failure(backend.append(sid('s'), [cyclic as AnySessionEvent]))).code).toBe('INVALID_APPEND')

    await backend.append(sid('s'), events.slice(3))
    await backend.release(sid('s'))
    expect((await backend.load(sid('s'))).events).toEqual(events)
  })

  it('refuses to start a new log over an existing file it has not loaded (SESSION_EXISTS)', async () => {
    const dir = tempDir()
    const first = await mount(dir)
    await first.backend.append(sid('s'), closedLog())
    await first.dispose()
    const { backend } = await mount(dir)
    const error = await failure(backend.append(sid('s'), closedLog()))
    expect(error.code).toBe('SESSION_EXISTS')
    // After a load it continues the file where it ends.
    const loaded = await backend.load(sid('s'))
    const next = logBuilder()
    addTextTurn(next, 2)
    const more = next.events.slice(1).map((event, i) => ({ ...event, seq: loaded.events.length + i })) as AnySessionEvent[]
    await backend.append(sid('s'), more)
    await backend.release(sid('s'))
    expect((await backend.load(sid('s'))).events).toEqual([...loaded.events, ...more])
  })

  it('after a load, an append that does not start where the file ends is INVALID_APPEND naming the seq to start from (a retry of a batch whose flush failed part way)', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    const log = logBuilder()
    addTextTurn(log, 1)
    const firstTurn = log.events.length
    addTextTurn(log, 2)
    await backend.append(sid('s'), log.events.slice(0, firstTurn))
    await backend.release(sid('s'))
    expect((await backend.load(sid('s'))).events).toEqual(log.events.slice(0, firstTurn))
    // The caller retries from two events back (a batch it believes failed): the file already holds them.
    expect(await failure(backend.append(sid('s'), log.events.slice(firstTurn - 2)))).toEqual({
      code: 'INVALID_APPEND',
      message: `Cannot append to session "s": its file holds ${firstTurn} events (seq 0 to ${firstTurn - 1}) as this process last loaded or wrote it, so the next append must start at seq ${firstTurn}, not ${firstTurn - 2}. Nothing was queued.`,
    })
    await backend.append(sid('s'), log.events.slice(firstTurn))
    await backend.release(sid('s'))
    expect((await backend.load(sid('s'))).events).toEqual(log.events)
  })

  it('refuses to continue a file that changed on disk since it was loaded (SESSION_CHANGED)', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    await backend.append(sid('s'), closedLog())
    await backend.release(sid('s'))
    const loaded = await backend.load(sid('s'))
    appendFileSync(backend.fileOf(sid('s')), JSON.stringify({ ...loaded.events[1], seq: loaded.events.length }) + '\n')
    const error = await failure(backend.append(sid('s'), [{ ...loaded.events[1]!, seq: loaded.events.length }]))
    expect(error.code).toBe('SESSION_CHANGED')
  })

  it('starts over a file whose writer died before writing one complete line', async () => {
    const dir = tempDir()
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 's.jsonl'), '{"type":"sess')
    const { backend } = await mount(dir)
    await backend.append(sid('s'), closedLog())
    await backend.flush(sid('s'))
    expect(readFileSync(join(dir, 's.jsonl'), 'utf8')).toBe(closedLog().map((event) => JSON.stringify(event) + '\n').join(''))
  })
})

describe('list, exists, delete', () => {
  it('list() returns cheap metadata from each first line and stat, newest first, skipping non-sessions', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    await backend.append(sid('old'), closedLog(1000, '/old'))
    await backend.append(sid('new'), closedLog(2000, '/new'))
    await backend.release(sid('old'))
    await backend.release(sid('new'))
    utimesSync(join(dir, 'old.jsonl'), 10, 10)
    utimesSync(join(dir, 'new.jsonl'), 20, 20)
    writeFileSync(join(dir, 'notes.txt'), 'hello')
    writeFileSync(join(dir, 'garbage.jsonl'), 'not json\n')
    writeFileSync(join(dir, 'empty.jsonl'), '')
    writeFileSync(join(dir, '.hidden.jsonl'), JSON.stringify(closedLog()[0]) + '\n')
    // Appended in this process, not written yet: listed from memory.
    await backend.append(sid('pending'), closedLog(3000))

    const listed = await backend.list()
    expect(listed.map(({ updatedAt, ...rest }) => rest)).toEqual([
      { id: 'pending', createdAt: 3000, cwd: '/work' },
      { id: 'new', createdAt: 2000, cwd: '/new' },
      { id: 'old', createdAt: 1000, cwd: '/old' },
    ])
    expect(listed.slice(1).map((info) => info.updatedAt)).toEqual([20_000, 10_000])
  })

  it('list() of a directory that does not exist yet is empty', async () => {
    const { backend } = await mount(join(tempDir(), 'missing'))
    expect(await backend.list()).toEqual([])
  })

  it('exists() answers from the first line, without loading', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    expect(await backend.exists(sid('s'))).toBe(false)
    await backend.append(sid('s'), closedLog())
    expect(await backend.exists(sid('s'))).toBe(true)
    await backend.release(sid('s'))
    expect(await backend.exists(sid('s'))).toBe(true)
  })

  it('delete() removes the file, then the id is not found', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    await backend.append(sid('s'), closedLog())
    await backend.flush(sid('s'))
    await backend.delete(sid('s'))
    expect([existsSync(join(dir, 's.jsonl')), existsSync(join(dir, 's.jsonl.lock'))]).toEqual([false, false])
    expect(await backend.exists(sid('s'))).toBe(false)
    expect((await failure(backend.load(sid('s')))).code).toBe('SESSION_NOT_FOUND')
    expect((await failure(backend.delete(sid('s')))).code).toBe('SESSION_NOT_FOUND')
    // The id can be used afresh.
    await backend.append(sid('s'), closedLog())
    await backend.release(sid('s'))
    expect((await backend.load(sid('s'))).events).toEqual(closedLog())
  })

  it('delete() of events appended but not written yet drops them', async () => {
    const dir = tempDir()
    const { backend } = await mount(dir)
    await backend.append(sid('s'), closedLog())
    await backend.delete(sid('s'))
    expect(await backend.exists(sid('s'))).toBe(false)
    expect(existsSync(join(dir, 's.jsonl'))).toBe(false)
  })
})
