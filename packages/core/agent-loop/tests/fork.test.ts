import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import type { Agent, AgentHandle } from '@deepseek-ai/dsh-agent'
import { SessionId, memoryPersistence, MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { spine, trace, transcript } from '@deepseek-ai/dsh-testkit'

const opts = { provider: 'scripted', model: 'test-model' }

/** The READMEs that document forking an agent; each holds the same sample, marked by a comment naming this file. */
const READMES = ['../README.md', '../README.zh-CN.md', '../../agent/README.md', '../../agent/README.zh-CN.md']

/** The first ```ts block after the line that names this test file. */
function forkSample(readme: string): string {
  const text = readFileSync(fileURLToPath(new URL(readme, import.meta.url)), 'utf8')
  const marker = text.indexOf('tests/fork.test.ts')
  expect(marker, `${readme} has no fork sample marked for tests/fork.test.ts`).toBeGreaterThan(-1)
  const start = text.indexOf('```ts\n', marker) + '```ts\n'.length
  return text.slice(start, text.indexOf('```', start))
}

/** Runs the README's sample (plain JavaScript) with `ctx`, `parent` and `SessionId` in scope; returns its `child`. */
async function runSample(code: string, ctx: Context, parent: Agent): Promise<AgentHandle> {
  const AsyncFunction = Object.getPrototypeOf(async () => {}).constructor as new (...args: string[]) => (...values: unknown[]) => Promise<AgentHandle>
  return new AsyncFunction('ctx', 'parent', 'SessionId', `${code}\nreturn child`)(ctx, parent, SessionId)
}

/** A parent agent `p` with one finished turn. */
async function parentWithOneTurn(world: Awaited<ReturnType<typeof spine>>, agentOptions: Record<string, string> = opts) {
  const parent = await world.agent('p', agentOptions)
  parent.followup('parent question')
  await parent.whenIdle()
  return parent
}

describe('forking an agent (issue 15.5, R-SES-6)', () => {
  it('the README sample (the same in every README) forks an agent: one session/meta of its own, the parent link, the parent history first', async () => {
    const samples = READMES.map(forkSample)
    expect(new Set(samples).size).toBe(1)
    const world = await spine({ model: { script: ['parent answer', 'child answer'] } })
    const parent = await parentWithOneTurn(world)
    const parentLog = [...parent.session.events]
    const child = await runSample(samples[0]!, world.root, parent)
    world.handles.push(child)
    expect(child.agent.id).toBe('p-try-2')
    expect(child.agent.session.meta).toEqual({ parentSession: 'p', seedLength: parentLog.length, createdAt: expect.any(Number), version: 1 })
    expect(child.agent.session.events.filter((event) => event.type === 'session/meta')).toHaveLength(2) // its own, then the parent's (copied)
    expect(child.agent.session.events.slice(1, 1 + parentLog.length)).toEqual(parentLog.map((event) => ({ ...event, seq: event.seq + 1 })))
    expect(transcript(world.model.requests[1]!.messages)).toEqual([
      'user: parent question',
      'assistant: parent answer',
      'user: Try the other approach.',
    ])
    expect(trace(child.agent.session, 1 + parentLog.length).filter((line) => line.startsWith('turn/'))).toEqual([
      'turn/start 2 prompt',
      'turn/end 2 completed',
    ])
    // The parent is untouched.
    expect(parent.session.events).toEqual(parentLog)
  })

  it("a fork at an earlier boundary, with the child's own cwd; a meta.parentSession that contradicts the fork is refused", async () => {
    const world = await spine({ model: { script: ['one', 'two', 'child'] } })
    const parent = await parentWithOneTurn(world)
    const boundary = parent.session.events.length
    parent.followup('second question')
    await parent.whenIdle()
    const forked = world.root.sessions.fork(parent.session, boundary)
    await expect(
      world.root.agents.create({ sessionId: SessionId('c'), seed: forked.events, meta: { parentSession: SessionId('someone-else') }, agentOptions: opts }),
    ).rejects.toMatchObject({ code: 'INVALID_ARGUMENT', message: expect.stringContaining('they fork "p", but meta.parentSession says "someone-else"') })
    const child = await world.root.agents.create({ sessionId: SessionId('c'), seed: forked.events, meta: { cwd: '/worktree' }, agentOptions: opts })
    expect(child.agent.session.meta).toEqual({ cwd: '/worktree', parentSession: 'p', seedLength: boundary, createdAt: expect.any(Number), version: 1 })
    child.agent.followup('child question')
    await child.agent.whenIdle()
    expect(transcript(world.model.requests[2]!.messages)).toEqual(['user: parent question', 'assistant: one', 'user: child question'])
    await child.dispose()
  })

  it('the explicit form (the prefix without the fork\'s meta, and meta.parentSession) builds the same child', async () => {
    const world = await spine({ model: { script: ['one'] } })
    const parent = await parentWithOneTurn(world)
    const forked = world.root.sessions.fork(parent.session)
    const obvious = await world.root.agents.create({ sessionId: SessionId('obvious'), seed: forked.events, agentOptions: opts })
    const explicit = await world.root.agents.create({ sessionId: SessionId('explicit'), seed: forked.events.slice(1), meta: { parentSession: parent.id }, agentOptions: opts })
    expect(explicit.agent.session.events.slice(1)).toEqual(obvious.agent.session.events.slice(1))
    expect({ ...explicit.agent.session.meta, createdAt: 0 }).toEqual({ ...obvious.agent.session.meta, createdAt: 0 })
    await obvious.dispose()
    await explicit.dispose()
  })
})

describe('R-LOOP-6 for forks: a seeded child restores the logged reasoning effort on the same route, as a resume does', () => {
  const models = [
    { id: 'test-model', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' },
    { id: 'other', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' },
  ]

  it('R-LOOP-6: same route: the fork child requests with the effort of the seed\'s last header and logs no new header', async () => {
    const world = await spine({ model: { script: ['one', 'child'], models } })
    const parent = await parentWithOneTurn(world, { ...opts, reasoningEffort: 'high' })
    const child = await world.root.agents.create({ sessionId: SessionId('c'), seed: world.root.sessions.fork(parent.session).events, agentOptions: opts })
    child.agent.followup('child question')
    await child.agent.whenIdle()
    expect(world.model.requests.map((request) => request.reasoningEffort)).toEqual(['high', 'high'])
    expect(trace(child.agent.session).filter((line) => line.startsWith('request/header'))).toEqual(['request/header initial scripted/test-model high'])
    await child.dispose()
  })

  it('R-LOOP-6: another route: the effort is not carried over; the child resolves its own and logs a change header', async () => {
    const world = await spine({ model: { script: ['one', 'child'], models } })
    const parent = await parentWithOneTurn(world, { ...opts, reasoningEffort: 'high' })
    const child = await world.root.agents.create({
      sessionId: SessionId('c'),
      seed: world.root.sessions.fork(parent.session).events,
      agentOptions: { provider: 'scripted', model: 'other' },
    })
    child.agent.followup('child question')
    await child.agent.whenIdle()
    expect(world.model.requests.map((request) => request.reasoningEffort)).toEqual(['high', 'low'])
    expect(trace(child.agent.session).filter((line) => line.startsWith('request/header'))).toEqual([
      'request/header initial scripted/test-model high',
      'request/header change scripted/other low',
    ])
    await child.dispose()
  })

  it('R-LOOP-6: a fork child resumed later restores the same way (the header it logged, or the seed\'s)', async () => {
    const backend = new MemorySessionPersistence()
    const world = await spine({ model: { script: ['one'], models } })
    await world.root.plugin(memoryPersistence, { backend })
    const parent = await parentWithOneTurn(world, { ...opts, reasoningEffort: 'high' })
    const child = await world.root.agents.create({ sessionId: SessionId('c'), seed: world.root.sessions.fork(parent.session).events, agentOptions: opts })
    await child.dispose()
    const later = await spine({ model: { script: ['resumed'], models } })
    await later.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = await later.root.agents.resume({ resumeSessionId: SessionId('c'), agentOptions: opts })
    resumed.agent.followup('q')
    await resumed.agent.whenIdle()
    expect(later.model.requests[0]!.reasoningEffort).toBe('high')
    expect(resumed.agent.session.meta.parentSession).toBe('p')
  })
})
