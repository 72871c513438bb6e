// What a resumed agent keeps from its log: parked inbox items stay parked until a wakeup, a fork
// child does not inherit its parent's pending items, and the logged reasoning effort holds while the route does.
import { describe, expect, it } from 'vitest'
import { SessionId, memoryPersistence, MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { spine, transcript } from '@deepseek-ai/dsh-testkit'

const id = SessionId('a')
const opts = { provider: 'scripted', model: 'test-model' }

describe('resume keeps what is parked parked (R-LIFE-7)', () => {
  it('steering pending at a crash stays parked until a wakeup, then is served first', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['cut'] } })
    await first.root.plugin(memoryPersistence, { backend })
    const a = (await first.root.agents.create({ sessionId: id, agentOptions: opts })).agent
    const call = first.model.control()
    a.followup('first')
    await call.started
    a.steer('steer me later')
    await first.root.sessions.flush(a.session)
    // The process dies mid-turn: crash repair closes the open turn on load.
    const second = await spine({ model: { script: ['after wakeup'] } })
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await second.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    await resumed.whenIdle()
    expect(second.model.calls).toBe(0)
    expect(resumed.inbox.nextStep).toHaveLength(1)
    resumed.steer('now')
    await resumed.whenIdle()
    expect(transcript(second.model.requests[0]!.messages).slice(-2)).toEqual(['user: steer me later', 'user: now'])
  })

  it('a fork child resumed later does not inherit the parent\'s pending items', async () => {
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['parent answer'] } })
    await first.root.plugin(memoryPersistence, { backend })
    const parent = (await first.root.agents.create({ sessionId: id, agentOptions: opts })).agent
    parent.followup('question')
    await parent.whenIdle()
    parent.queue('the parent\'s own pending work')
    const forked = first.root.sessions.fork(parent.session)
    const child = await first.root.agents.create({ sessionId: SessionId('child'), agentOptions: opts, meta: { parentSession: id }, seed: forked.events.slice(1) })
    expect(child.agent.inbox.nextTurn).toEqual([])
    await first.root.sessions.flush(child.agent.session)
    const second = await spine()
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await second.root.agents.resume({ resumeSessionId: SessionId('child'), agentOptions: opts })).agent
    expect(resumed.inbox).toEqual({ nextTurn: [], nextStep: [] })
  })
})

describe('resume keeps the logged reasoning effort while the route holds (R-LOOP-6)', () => {
  it('a restored reasoning effort holds while the route does', async () => {
    const models = [{ id: 'test-model', reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'low' }]
    const backend = new MemorySessionPersistence()
    const first = await spine({ model: { script: ['one'], models } })
    await first.root.plugin(memoryPersistence, { backend })
    const handle = await first.root.agents.create({ sessionId: id, agentOptions: { ...opts, reasoningEffort: 'high' } })
    handle.agent.followup('q')
    await handle.agent.whenIdle()
    await handle.dispose()
    const second = await spine({ model: { script: ['two', 'three'], models } })
    await second.root.plugin(memoryPersistence, { backend: backend.reopen() })
    const resumed = (await second.root.agents.resume({ resumeSessionId: id, agentOptions: opts })).agent
    resumed.followup('q2')
    resumed.followup('q3')
    await resumed.whenIdle()
    expect(second.model.requests.map((request) => request.reasoningEffort)).toEqual(['high', 'high'])
  })
})
