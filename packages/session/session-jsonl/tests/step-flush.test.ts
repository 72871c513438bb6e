import { join } from 'node:path'
import { Context } from 'cordis'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { MessageId, createUserMessage } from '@deepseek-ai/dsh-llm'
import Sessions from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { callsAt } from './fs-faults'
import { sid, tempDir } from './helpers'

// Only counted here: every call goes through unchanged.
vi.mock('node:fs/promises', async (original) => (await import('./fs-faults')).faultyFsPromises(await original()))

const fibers: Array<{ dispose(): unknown }> = []
afterEach(async () => {
  for (const fiber of fibers.splice(0).reverse()) await fiber.dispose()
})

async function app(directory: string, flushIntervalMs = 60_000) {
  const ctx = new Context()
  fibers.push(ctx.plugin(Sessions))
  const backend = ctx.plugin(JsonlSessionPersistence, { directory, flushIntervalMs })
  fibers.push(backend)
  await backend
  return ctx
}

/**
 * The loop's per-step checkpoint (`ctx.sessions.flush` before each request)
 * must cost one write and one fsync when something is pending, and no system
 * call at all when nothing is. Counted, not timed: the bench measures time.
 */
describe('the per-step flush', () => {
  it('writes a step with one write and one fsync, and does nothing when nothing is pending', async () => {
    const dir = tempDir()
    const ctx = await app(dir)
    const file = join(dir, 'steps.jsonl')
    const session = ctx.sessions.create(sid('steps'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    await ctx.sessions.flush(session)
    expect(callsAt(file)).toEqual({ writes: 1, syncs: 1 })
    // The first flush also synced the new file's directory entry, once.
    expect(callsAt(dir)).toEqual({ writes: 0, syncs: 1 })

    for (let step = 1; step <= 3; step++) {
      session.append('step/start', { turn: 1, step })
      session.append('user/message', { message: createUserMessage(`input ${step}`, { id: MessageId(`u${step}`) }) })
      session.append('request/header', { provider: 'p', model: 'm', system: 's', tools: [], reason: step === 1 ? 'initial' : 'change' })
      await ctx.sessions.flush(session)
      // Nothing appended since: the next checkpoints cost no system call.
      await ctx.sessions.flush(session)
      await ctx.sessions.flush(session)
      session.append('step/end', { turn: 1, step })
    }
    // Three steps: one write + one fsync each (step/end rides with the next step's batch).
    expect(callsAt(file)).toEqual({ writes: 4, syncs: 4 })
    expect(callsAt(dir)).toEqual({ writes: 0, syncs: 1 })
  })

  it('the first flush into a session directory it created also syncs the entries of the directories it created (a power cut keeps them)', async () => {
    const root = tempDir()
    const dir = join(root, 'home', 'sessions')
    const ctx = await app(dir)
    const session = ctx.sessions.create(sid('first'))
    await ctx.sessions.flush(session)
    // `home` is an entry of the temp dir, `sessions` of `home`, the file of `sessions`: each is synced once.
    expect([callsAt(root), callsAt(join(root, 'home')), callsAt(dir)]).toEqual([
      { writes: 0, syncs: 1 },
      { writes: 0, syncs: 1 },
      { writes: 0, syncs: 1 },
    ])
    // A second session in the same directory syncs only its own entry.
    const second = ctx.sessions.create(sid('second'))
    await ctx.sessions.flush(second)
    expect([callsAt(root), callsAt(join(root, 'home')), callsAt(dir)].map((calls) => calls.syncs)).toEqual([1, 1, 2])
  })

  it('only fsyncs what the write-behind timer already wrote', async () => {
    const dir = tempDir()
    const ctx = await app(dir, 1)
    const file = join(dir, 'timed.jsonl')
    const session = ctx.sessions.create(sid('timed'))
    session.append('turn/start', { turn: 1, trigger: { kind: 'prompt' } })
    await vi.waitFor(() => expect(callsAt(file).writes).toBe(1), { timeout: 20_000, interval: 5 })
    await ctx.sessions.flush(session)
    expect(callsAt(file)).toEqual({ writes: 1, syncs: 1 })
  })
})
