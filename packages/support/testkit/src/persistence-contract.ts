/**
 * The contract every `SessionPersistence` backend must pass (R-PER-1…4).
 *
 * A backend's test file calls `describePersistenceContract(name, harness)`;
 * the kit's own tests run it against dsh-session's `MemorySessionPersistence`
 * (storage only, and mounted with `memoryPersistence`), dsh-session-jsonl
 * runs it on JSONL files:
 *
 * ```ts
 * import { describePersistenceContract } from '@deepseek-ai/dsh-testkit'
 * describePersistenceContract('jsonl', async () => ({ backend, reopen, ctx, cleanup }))
 * ```
 *
 * The storage half talks to the backend directly. The wiring half runs when
 * the harness provides a `ctx` with `ctx.sessions` and the backend's plugin
 * mounted: it drives real sessions and checks that the backend follows them
 * through `session/created`, `session/event`, `session/flush` and
 * `session/disposed`.
 */
import { afterEach, describe, expect, it } from 'vitest'
import { CallId, createAssistantMessage, createToolResultMessage, createUserMessage, MessageId, type ContentBlock } from '@deepseek-ai/dsh-llm'
import Sessions, { repairSession, SessionId, type AnySessionEvent, type Session, type SessionPersistence } from '@deepseek-ai/dsh-session'
import { Context } from './cordis'

export interface PersistenceHarness {
  /** A fresh backend over empty storage. */
  backend: SessionPersistence
  /**
   * A new backend instance over the same storage, as a restarted process
   * sees it (a crash loses whatever was not flushed). Each call may return a
   * new instance.
   */
  reopen(): SessionPersistence | Promise<SessionPersistence>
  /**
   * Optional: a context with dsh-session and the backend's plugin mounted,
   * whose `ctx.sessionPersistence` is this backend. Enables the wiring tests.
   */
  ctx?: Context
  /** Releases whatever the harness holds (temporary directories, plugins). */
  cleanup?(): void | Promise<void>
  /**
   * Optional, for backends whose storage can be damaged the way a crash or a
   * hand edit damages a file. Enables the damage tests.
   */
  damage?: {
    /** Leaves an unfinished record after the stored (flushed, released) log of `id`, as a crash mid-write does. */
    tearTail(id: SessionId): void | Promise<void>
    /** Replaces the last stored record of `id` by a complete record that does not parse, as a bad hand edit does. */
    corruptLastRecord(id: SessionId): void | Promise<void>
  }
}

const model = { kind: 'model', provider: 'test', model: 'm' } as const

/** Builds logs through a real store, so every log is one dsh-session accepts. */
async function logBuilder() {
  const root = new Context()
  await root.plugin(Sessions)
  return {
    root,
    session(id: string, meta?: { cwd?: string; parentSession?: string }): Session {
      return root.sessions.prepare(SessionId(id), meta ? { meta: meta as never } : {})
    },
  }
}

function closedTurn(session: Session, turn: number): void {
  session.append('turn/start', { turn, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: createUserMessage(`question ${turn}`, { id: MessageId(`u${turn}`) }) })
  session.append('step/start', { turn, step: 1 })
  const chunk = session.append('assistant/chunk', { turn, step: 1, chunk: { type: 'text-delta', index: 0, text: `answer ${turn}` } })
  session.append('assistant/message', {
    turn,
    step: 1,
    message: createAssistantMessage(`answer ${turn}`, { source: model, id: MessageId(`a${turn}`) }),
    chunkSeqs: [chunk.seq],
    usage: { inputTokens: 10, outputTokens: 2 },
    finishReason: { kind: 'stop' },
  })
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: { kind: 'completed' } })
}

/** Turn `turn` left open in step 1, whose answer made calls a, b, c; only a was called and answered, b called. */
function crashedTurn(session: Session, turn: number): void {
  session.append('turn/start', { turn, trigger: { kind: 'prompt' } })
  session.append('user/message', { message: createUserMessage('do three things', { id: MessageId(`u${turn}`) }) })
  session.append('step/start', { turn, step: 1 })
  const calls: ContentBlock[] = ['a', 'b', 'c'].map((id) => ({ type: 'tool-call', id: CallId(id), name: `tool-${id}`, arguments: '{}' }))
  session.append('assistant/message', {
    turn,
    step: 1,
    message: createAssistantMessage(calls, { source: model, id: MessageId(`a${turn}`) }),
    chunkSeqs: [],
    finishReason: { kind: 'tool-calls' },
  })
  session.append('tool/call', { turn, step: 1, callId: CallId('a'), name: 'tool-a', arguments: '{}' })
  session.append('tool/result', { turn, step: 1, message: createToolResultMessage({ callId: CallId('a'), content: 'ok', id: MessageId('ra') }) })
  session.append('tool/call', { turn, step: 1, callId: CallId('b'), name: 'tool-b', arguments: '{}' })
}

/** What a log looks like after a JSON round trip: the form every backend returns. */
const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

async function write(backend: SessionPersistence, session: Session, batch = 3): Promise<void> {
  for (let i = 0; i < session.events.length; i += batch) await backend.append(session.id, session.events.slice(i, i + batch))
  await backend.flush(session.id)
}

export function describePersistenceContract(
  name: string,
  makeHarness: () => PersistenceHarness | Promise<PersistenceHarness>,
): void {
  describe(`SessionPersistence contract: ${name}`, () => {
    let harness: PersistenceHarness | undefined
    const open = async () => (harness = await makeHarness())
    afterEach(async () => {
      await harness?.cleanup?.()
      harness = undefined
    })

    it('round-trips a flushed log: load returns every event, in seq order, with nothing repaired', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-a', { cwd: '/repo' })
      closedTurn(session, 1)
      closedTurn(session, 2)
      await write(backend, session)
      const loaded = await backend.load(session.id)
      expect(loaded).toEqual({ id: session.id, events: plain(session.events), repairs: [], warnings: [] })
    })

    it('keeps the order of appends across batches and does not mix sessions', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const a = logs.session('contract-a')
      const b = logs.session('contract-b')
      closedTurn(a, 1)
      closedTurn(b, 1)
      closedTurn(b, 2)
      for (let i = 0; i < Math.max(a.events.length, b.events.length); i++) {
        if (a.events[i]) await backend.append(a.id, [a.events[i]!])
        if (b.events[i]) await backend.append(b.id, [b.events[i]!])
      }
      await backend.flush(a.id)
      await backend.flush(b.id)
      expect((await backend.load(a.id)).events).toEqual(plain(a.events))
      expect((await backend.load(b.id)).events).toEqual(plain(b.events))
    })

    it('everything flushed survives a restart (R-PER-1)', async () => {
      const h = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-a')
      closedTurn(session, 1)
      await write(h.backend, session)
      const written = session.events.length
      closedTurn(session, 2)
      await h.backend.append(session.id, session.events.slice(written))
      await h.backend.flush(session.id)
      const restarted = await h.reopen()
      expect((await restarted.load(session.id)).events).toEqual(plain(session.events))
    })

    it('refuses a new log over a stored id it has not loaded (SESSION_EXISTS, at append or at flush) and keeps the stored log', async () => {
      const h = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-taken')
      closedTurn(session, 1)
      await write(h.backend, session)
      const restarted = await h.reopen()
      const fresh = logs.session('contract-taken')
      for (const turn of [1, 2]) closedTurn(fresh, turn)
      // A backend may refuse the append itself (a file it did not load) or the write (a row that exists).
      const refusal = await restarted
        .append(fresh.id, fresh.events)
        .then(() => restarted.flush(fresh.id))
        .then(() => undefined, (error: unknown) => error)
      expect(refusal).toMatchObject({ code: 'SESSION_EXISTS' })
      expect((await restarted.load(session.id)).events).toEqual(plain(session.events))
    })

    it('refuses an append that does not continue the log (a gap) with INVALID_APPEND, queueing nothing', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-gap')
      closedTurn(session, 1)
      await backend.append(session.id, session.events.slice(0, 3))
      await expect(backend.append(session.id, session.events.slice(4))).rejects.toMatchObject({ code: 'INVALID_APPEND' })
      await backend.append(session.id, session.events.slice(3))
      await backend.flush(session.id)
      expect((await backend.load(session.id)).events).toEqual(plain(session.events))
    })

    it('a load reads what was appended before it, flushed or not', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-pending')
      closedTurn(session, 1)
      await backend.append(session.id, session.events)
      expect(await backend.load(session.id)).toEqual({ id: session.id, events: plain(session.events), repairs: [], warnings: [] })
    })

    it('rejects load (and delete) of an unknown id with SESSION_NOT_FOUND', async () => {
      const { backend } = await open()
      await expect(backend.load(SessionId('contract-missing'))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
      await expect(backend.delete(SessionId('contract-missing'))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    })

    it('lists stored sessions with their cheap metadata, and answers exists without loading', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const parent = logs.session('contract-parent', { cwd: '/repo' })
      closedTurn(parent, 1)
      const child = logs.root.sessions.fork(parent, undefined, 'contract-child')
      const before = Date.now()
      await write(backend, parent)
      await write(backend, child)
      const listed = (await backend.list()).sort((x, y) => (x.id < y.id ? -1 : 1))
      expect(listed).toEqual([
        { id: 'contract-child', createdAt: child.meta.createdAt, updatedAt: expect.any(Number), cwd: '/repo', parentSession: 'contract-parent' },
        { id: 'contract-parent', createdAt: parent.meta.createdAt, updatedAt: expect.any(Number), cwd: '/repo' },
      ])
      expect(listed.every((info) => info.updatedAt >= before - 1000)).toBe(true)
      expect(await backend.exists(parent.id)).toBe(true)
      expect(await backend.exists(SessionId('contract-missing'))).toBe(false)
    })

    it('deletes a stored session: it no longer exists, loads or lists', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const keep = logs.session('contract-keep')
      const drop = logs.session('contract-drop')
      await write(backend, keep)
      await write(backend, drop)
      await backend.delete(drop.id)
      expect(await backend.exists(drop.id)).toBe(false)
      await expect(backend.load(drop.id)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
      expect((await backend.list()).map((info) => info.id)).toEqual(['contract-keep'])
    })

    it('repairs a crash inside a step on load (R-PER-3): missing calls and INTERRUPTED results in model order, then step/end and turn/end', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-a')
      closedTurn(session, 1)
      crashedTurn(session, 2)
      await write(backend, session)
      const loaded = await backend.load(session.id)
      const plan = repairSession(session.events)
      expect(loaded.repairs).toEqual(plan.repairs)
      expect(loaded.repairs.map((repair) => [repair.seq, repair.type])).toEqual([
        [15, 'tool/result'],
        [16, 'tool/call'],
        [17, 'tool/result'],
        [18, 'step/end'],
        [19, 'turn/end'],
      ])
      expect(loaded.events.slice(0, 15)).toEqual(plain(session.events))
      expect(loaded.events.slice(15).map(({ time: _time, ...event }) => event)).toEqual(plain(plan.events).map(({ time: _time, ...event }) => event))
      // The repaired log is a valid session log: it loads and its next request is valid.
      const resumed = logs.root.sessions.prepare(SessionId('contract-resumed'), { events: loaded.events })
      expect(resumed.position).toEqual({ lastTurn: 2, lastStep: 0 })
    })

    it('repairs an open turn without an open step with turn/end{interrupted}', async () => {
      const { backend } = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-a')
      session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
      session.append('user/message', { message: createUserMessage('hello', { id: MessageId('u1') }) })
      await write(backend, session)
      const loaded = await backend.load(session.id)
      expect(loaded.repairs).toEqual([{ seq: 3, type: 'turn/end', detail: 'closed turn 1 as interrupted' }])
      expect(loaded.events[3]).toMatchObject({ type: 'turn/end', seq: 3, data: { turn: 1, reason: { kind: 'interrupted' } } })
    })

    it('loading the same id twice gives the same log; the repairs were made durable once', async () => {
      const h = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-a')
      crashedTurn(session, 1)
      await write(h.backend, session)
      const first = await h.backend.load(session.id)
      const second = await h.backend.load(session.id)
      expect(second.events).toEqual(first.events)
      expect(second.repairs).toEqual([])
      const restarted = await h.reopen()
      const third = await restarted.load(session.id)
      expect(third.events).toEqual(first.events)
      expect(third.repairs).toEqual([])
    })

    it('two loads of a crashed session at once store its repair once: the second finds the repaired log', async () => {
      const h = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-twice')
      crashedTurn(session, 1)
      await write(h.backend, session)
      const [first, second] = await Promise.all([h.backend.load(session.id), h.backend.load(session.id)])
      expect([first.repairs.length, second.repairs]).toEqual([5, []])
      expect(second.events).toEqual(first.events)
    })

    it('an abandoned load (its signal aborted) rejects with the signal reason, writes no repair, and holds nothing: the next load proceeds', async () => {
      const h = await open()
      const logs = await logBuilder()
      const session = logs.session('contract-abandoned')
      crashedTurn(session, 1)
      await write(h.backend, session)
      const reason = new Error('the owner of the resume unloaded')
      await expect(h.backend.load(session.id, { signal: AbortSignal.abort(reason) })).rejects.toBe(reason)
      // Nothing was repaired by the abandoned load, and nothing of it is still held.
      const loaded = await h.backend.load(session.id)
      expect(loaded.events.slice(0, session.events.length)).toEqual(plain(session.events))
      expect(loaded.repairs.map((repair) => repair.type)).toEqual(['tool/result', 'tool/call', 'tool/result', 'step/end', 'turn/end'])
    })

    describe('damaged storage', () => {
      const damaged = async () => {
        const h = await open()
        if (!h.damage) return undefined
        return { ...h, damage: h.damage }
      }

      it('drops only an unfinished tail, and says so in a structured warning', async () => {
        const h = await damaged()
        if (!h) return
        const logs = await logBuilder()
        const session = logs.session('contract-torn')
        closedTurn(session, 1)
        await write(h.backend, session)
        const restarted = await h.reopen()
        await h.damage.tearTail(session.id)
        const loaded = await restarted.load(session.id)
        expect(loaded.events).toEqual(plain(session.events))
        expect(loaded.repairs).toEqual([])
        expect(loaded.warnings).toHaveLength(1)
        const [warning] = loaded.warnings
        expect(warning).toEqual({
          code: expect.any(String),
          message: expect.any(String),
          ...(warning!.file === undefined ? {} : { file: expect.any(String) }),
          ...(warning!.line === undefined ? {} : { line: session.events.length + 1 }),
          ...(warning!.sidecar === undefined ? {} : { sidecar: expect.any(String) }),
        })
        // What was cut is gone for good from the log: the next load finds nothing to report.
        expect(await restarted.load(session.id)).toEqual({ id: session.id, events: plain(session.events), repairs: [], warnings: [] })
      })

      it('never drops a complete record: a last record that does not parse is CORRUPT_SESSION, and the log is kept', async () => {
        const h = await damaged()
        if (!h) return
        const logs = await logBuilder()
        const session = logs.session('contract-corrupt')
        closedTurn(session, 1)
        await write(h.backend, session)
        const restarted = await h.reopen()
        await h.damage.corruptLastRecord(session.id)
        await expect(restarted.load(session.id)).rejects.toMatchObject({ code: 'CORRUPT_SESSION' })
        // Refusing changed nothing: the same refusal again, not a silently shortened log.
        await expect(restarted.load(session.id)).rejects.toMatchObject({ code: 'CORRUPT_SESSION' })
      })
    })

    describe('wiring to ctx.sessions', () => {
      const wired = async () => {
        const h = await open()
        if (!h.ctx) return undefined
        return { ...h, ctx: h.ctx }
      }

      it('a live session is durable once ctx.sessions.flush resolves', async () => {
        const h = await wired()
        if (!h) return
        const session = h.ctx.sessions.prepare(SessionId('contract-live'), { meta: { cwd: '/repo' } })
        h.ctx.sessions.enter(session)
        closedTurn(session, 1)
        closedTurn(session, 2)
        await h.ctx.sessions.flush(session)
        const restarted = await h.reopen()
        expect((await restarted.load(session.id)).events).toEqual(plain(session.events))
      })

      it('a resumed session is written after its loaded events, never twice', async () => {
        const h = await wired()
        if (!h) return
        const first = h.ctx.sessions.prepare(SessionId('contract-resume'))
        const detachFirst = h.ctx.sessions.enter(first)
        closedTurn(first, 1)
        await h.ctx.sessions.flush(first)
        detachFirst()
        const loaded = await h.ctx.sessionPersistence.load(first.id)
        const resumed = h.ctx.sessions.prepare(first.id, { events: loaded.events })
        const detach = h.ctx.sessions.enter(resumed)
        closedTurn(resumed, 2)
        await h.ctx.sessions.flush(resumed)
        detach()
        const restarted = await h.reopen()
        const reloaded = await restarted.load(first.id)
        expect(reloaded.events).toEqual(plain(resumed.events))
        expect(reloaded.events.map((event) => event.seq)).toEqual(resumed.events.map((_event, index) => index))
      })

      it('refuses to load a session that is live in this process (SESSION_LOCKED): one writer per session', async () => {
        const h = await wired()
        if (!h) return
        const session = h.ctx.sessions.prepare(SessionId('contract-live-load'))
        const detach = h.ctx.sessions.enter(session)
        closedTurn(session, 1)
        await h.ctx.sessions.flush(session)
        await expect(h.ctx.sessionPersistence.load(session.id)).rejects.toMatchObject({ code: 'SESSION_LOCKED' })
        detach()
        await h.ctx.sessionPersistence.flush(session.id)
        expect((await h.ctx.sessionPersistence.load(session.id)).events).toEqual(plain(session.events))
      })

      it('a publication another listener vetoes stores nothing: the id stays free', async () => {
        const h = await wired()
        if (!h) return
        const veto = h.ctx.on('session/created', () => {
          throw new Error('policy says no')
        })
        expect(() => h.ctx.sessions.create(SessionId('contract-vetoed'))).toThrow('policy says no')
        veto()
        // Waits for the backend to let go of the dropped writer; it may report the write it dropped.
        await h.ctx.sessionPersistence.flush(SessionId('contract-vetoed')).catch(() => {})
        expect(await h.ctx.sessionPersistence.exists(SessionId('contract-vetoed'))).toBe(false)
        const session = h.ctx.sessions.create(SessionId('contract-vetoed'))
        closedTurn(session, 1)
        await h.ctx.sessions.flush(session)
        expect((await (await h.reopen()).load(session.id)).events).toEqual(plain(session.events))
      })

      it('refuses to delete a session that is live in this process (SESSION_LIVE)', async () => {
        const h = await wired()
        if (!h) return
        const session = h.ctx.sessions.prepare(SessionId('contract-busy'))
        const detach = h.ctx.sessions.enter(session)
        closedTurn(session, 1)
        await h.ctx.sessions.flush(session)
        await expect(h.ctx.sessionPersistence.delete(session.id)).rejects.toMatchObject({ code: 'SESSION_LIVE' })
        detach()
        await h.ctx.sessionPersistence.delete(session.id)
        expect(await h.ctx.sessionPersistence.exists(session.id)).toBe(false)
      })
    })
  })
}
