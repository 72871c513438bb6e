import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import type { AgentError } from '@deepseek-ai/dsh-agent'
import { persistLiveSessions, type AnySessionEvent, type LiveSessionBackend, type LiveWriter } from '@deepseek-ai/dsh-session'
import { spine, trace } from '@deepseek-ai/dsh-testkit'

/** A minimal claiming backend on dsh-session's live wiring: every event is "durable" as soon as it is queued. */
function storingPlugin(stored: Map<string, AnySessionEvent[]>) {
  const backend: LiveSessionBackend<LiveWriter> = {
    name: 'test-store',
    open: (session) => {
      const events = stored.get(session.id) ?? []
      stored.set(session.id, events)
      return {
        get nextSeq() {
          return events.length
        },
        failed: undefined,
        enqueue: (event) => void events.push(event),
        flush: async () => {},
      }
    },
    close: async () => {},
    drop: async () => {},
    closeAll: async () => {},
    refusal: (_session, cause) => cause as Error,
    warn: () => {},
  }
  return { name: 'test-store', apply: (ctx: Context) => void persistLiveSessions(ctx, backend) }
}

describe('unplugging only the persistence plugin fails the agent loudly (issue 16)', () => {
  it('the next flush rejects with PERSISTENCE_DETACHED, and the refused-write rule fails the agent with PERSISTENCE_FAILED', async () => {
    const { agent, root, model } = await spine({ model: { script: ['one', 'two'] } })
    const stored = new Map<string, AnySessionEvent[]>()
    const persistence = root.plugin(storingPlugin(stored))
    await persistence
    const a = await agent()
    const reports: Array<{ turn: number; code: unknown; causeCode: unknown }> = []
    root.on('agent/error', (_agent, turn, _step, error) => {
      reports.push({ turn, code: (error as AgentError).code, causeCode: ((error as AgentError).cause as { code?: unknown } | undefined)?.code })
    })
    a.followup('first')
    await a.whenIdle()
    expect(stored.get('a')).toEqual([...a.session.events])

    await persistence.dispose()
    a.followup('second')
    await a.whenIdle()
    expect(reports).toEqual([{ turn: 2, code: 'PERSISTENCE_FAILED', causeCode: 'PERSISTENCE_DETACHED' }])
    // The turn that would have been stored nowhere never reaches the model: the admission's flush
    // failed while its first step was being prepared, so the step closed before its request left.
    expect(trace(a.session).slice(9)).toEqual([
      'turn/end 1 completed',
      'inbox/enqueue next-turn "second"',
      'inbox/dequeue',
      'turn/start 2 prompt',
      'step/start 2.1',
      'user/message "second"',
      'step/end 2.1',
      'turn/end 2 error PERSISTENCE_FAILED',
    ])
    expect(model.calls).toBe(1)
    // What the backend stored ends with the first turn: everything after the unplug is in memory only.
    const firstTurn = a.session.events.findIndex((event) => event.type === 'turn/end') + 1
    expect(stored.get('a')).toEqual(a.session.events.slice(0, firstTurn))
    expect(() => a.followup('third')).toThrow(expect.objectContaining({ code: 'PERSISTENCE_FAILED' }))
  })
})
