import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Agents, { agentEvents, type Agent } from '@deepseek-ai/dsh-agent'
import RegistryPairing, { REGISTRY_PAIRING } from '@deepseek-ai/dsh-agent/invariant'
import Invariants, { InvariantError, type InvariantPolicy } from '@deepseek-ai/dsh-invariants'
import { scoped } from '@deepseek-ai/dsh-scope'
import Sessions, { SessionId } from '@deepseek-ai/dsh-session'

interface Setup {
  policy?: InvariantPolicy
  sessions?: boolean
  /** Runs on the root before the companion is mounted. */
  before?: (root: Context) => void
}

async function setup({ policy = 'collect', sessions = true, before }: Setup = {}) {
  const root = new Context()
  await root.plugin(Agents)
  if (sessions) await root.plugin(Sessions)
  await root.plugin(Invariants, { policy })
  before?.(root)
  await root.plugin(RegistryPairing)
  return root
}

/** An agent as a driver builds it: a private session of the same id, entered into the store. */
function prepared(root: Context, id: string, enterSession = true) {
  const session = root.get('sessions')?.prepare(id)
  const detachSession = session && enterSession ? root.sessions.enter(session) : () => {}
  const agent = { id: SessionId(id), ctx: scoped(root, id), session } as unknown as Agent
  return { agent, detachSession }
}

function violation(id: string, event: string, message: string) {
  return { invariant: REGISTRY_PAIRING, message: `agent ${JSON.stringify(id)}: ${message}`, details: { agent: id, event } }
}

describe('dsh-agent/invariant on healthy lifecycles', () => {
  it('finds nothing over create, notifications, detach in order, and id reuse', async () => {
    const root = await setup()
    for (let life = 0; life < 2; life++) {
      const { agent, detachSession } = prepared(root, 'a')
      const detach = root.agents.enter(agent)
      const events = agentEvents(root, agent)
      events.emit('agent/session-start', 'startup')
      events.emit('agent/status', 'running')
      events.emit('agent/status', 'idle')
      detach()
      detachSession()
    }
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
  })

  it('a publication vetoed by a listener registered before the companion stays paired', async () => {
    const root = await setup({
      before: (root) =>
        root.on('agent/created', () => {
          throw new Error('vetoed')
        }),
    })
    const { agent, detachSession } = prepared(root, 'a')
    expect(() => root.agents.enter(agent)).toThrow('vetoed')
    detachSession()
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
  })

  it('takes agents already live when it is mounted as announced', async () => {
    const root = new Context()
    await root.plugin(Agents)
    await root.plugin(Sessions)
    await root.plugin(Invariants, { policy: 'collect' })
    const { agent, detachSession } = prepared(root, 'early')
    const detach = root.agents.enter(agent)
    await root.plugin(RegistryPairing)
    agentEvents(root, agent).emit('agent/status', 'running')
    expect(await root.invariants.check()).toEqual([])
    detach()
    detachSession()
    expect(root.invariants.violations).toEqual([])
  })

  it('without ctx.sessions, checks the registry alone', async () => {
    const root = await setup({ sessions: false })
    const agent = { id: SessionId('a'), ctx: scoped(root, 'a'), session: { id: 'a' } } as unknown as Agent
    const detach = root.agents.enter(agent)
    expect(await root.invariants.check()).toEqual([])
    detach()
    expect(root.invariants.violations).toEqual([])
  })
})

describe('dsh-agent/invariant finds each seeded fault', () => {
  it('agent/disposed without agent/created, and twice', async () => {
    const root = await setup()
    const { agent } = prepared(root, 'a')
    agentEvents(root, agent).emit('agent/disposed')
    agentEvents(root, agent).emit('agent/disposed')
    expect(root.invariants.violations).toEqual([
      violation('a', 'agent/disposed', 'agent/disposed without agent/created'),
      violation('a', 'agent/disposed', 'agent/disposed twice'),
    ])
  })

  it('agent/created twice, after agent/disposed, and while another agent with the id is live', async () => {
    const root = await setup()
    const first = prepared(root, 'a')
    const detach = root.agents.enter(first.agent)
    root.emit('agent/created', first.agent)
    const impostor = { ...first.agent } as Agent
    root.emit('agent/created', impostor)
    detach()
    root.emit('agent/created', first.agent)
    expect(root.invariants.violations).toEqual([
      violation('a', 'agent/created', 'agent/created twice'),
      violation('a', 'agent/created', 'agent/created while another agent with this id is live (not disposed)'),
      violation('a', 'agent/created', 'agent/created after its agent/disposed'),
    ])
  })

  it('a notification before agent/created or after agent/disposed', async () => {
    const root = await setup()
    const { agent } = prepared(root, 'a')
    const events = agentEvents(root, agent)
    events.emit('agent/inbox/enqueue', {} as never)
    const detach = root.agents.enter(agent)
    events.emit('agent/status', 'running')
    detach()
    events.emit('agent/status', 'idle')
    events.emit('agent/error', 1, undefined, new Error('late'))
    expect(root.invariants.violations).toEqual([
      violation('a', 'agent/inbox/enqueue', 'agent/inbox/enqueue before agent/created'),
      violation('a', 'agent/status', 'agent/status after agent/disposed'),
      violation('a', 'agent/error', 'agent/error after agent/disposed'),
    ])
  })

  it('the session detached before its agent: reported at both ends and by check()', async () => {
    const root = await setup()
    const { agent, detachSession } = prepared(root, 'a')
    const detach = root.agents.enter(agent)
    detachSession()
    expect(await root.invariants.check()).toEqual([violation('a', 'check', 'its session is not the live session of this id in ctx.sessions')])
    detach()
    expect(root.invariants.violations).toEqual([
      violation('a', 'session/disposed', 'its session was disposed before agent/disposed'),
      violation('a', 'check', 'its session is not the live session of this id in ctx.sessions'),
      violation('a', 'agent/disposed', 'agent/disposed after its session left ctx.sessions (the agent must be detached first)'),
    ])
  })

  it('an agent announced with a session that is not live', async () => {
    const root = await setup()
    const { agent } = prepared(root, 'a', false)
    root.agents.enter(agent)
    expect(root.invariants.violations).toEqual([
      violation('a', 'agent/created', 'agent/created while its session is not the live session of this id in ctx.sessions'),
    ])
  })

  it('check(): the registry holds a disposed agent, or misses an announced one', async () => {
    const root = await setup({ sessions: false })
    const held = { id: SessionId('held'), ctx: scoped(root, 'held') } as unknown as Agent
    const missing = { id: SessionId('missing'), ctx: scoped(root, 'missing') } as unknown as Agent
    root.agents.enter(held)
    agentEvents(root, held).emit('agent/disposed')
    root.emit('agent/created', missing)
    expect(await root.invariants.check()).toEqual([
      violation('missing', 'check', 'announced and not disposed, but ctx.agents does not hold it'),
      violation('held', 'check', 'ctx.agents still holds it after agent/disposed'),
    ])
  })

  it('under throw, an eager finding never vetoes the dispatch; check() rejects with it', async () => {
    const root = await setup({ policy: 'throw' })
    const first = prepared(root, 'a')
    root.agents.enter(first.agent)
    expect(() => root.emit('agent/created', first.agent)).not.toThrow()
    expect(root.invariants.violations).toEqual([])
    const error = await root.invariants.check().then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(error).toBeInstanceOf(InvariantError)
    expect((error as InvariantError).violations).toEqual([violation('a', 'agent/created', 'agent/created twice')])
    expect(await root.invariants.check()).toEqual([])
  })
})
