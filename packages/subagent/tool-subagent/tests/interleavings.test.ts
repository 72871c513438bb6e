import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { settle } from '@deepseek-ai/dsh-testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Gates, harness, taskCall } from './helpers'

type Op =
  | { kind: 'spawn'; background: boolean }
  | { kind: 'answer' | 'fail' | 'kill'; child: number }
  | { kind: 'cancel-user' | 'cancel-parent' | 'dispose' | 'steer' }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('spawn' as const), background: fc.boolean() }),
  fc.record({ kind: fc.constantFrom('answer' as const, 'fail' as const, 'kill' as const), child: fc.nat(7) }),
  fc.constantFrom<Op>({ kind: 'cancel-user' }, { kind: 'cancel-parent' }, { kind: 'dispose' }, { kind: 'steer' }),
)

const text = (message: Message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')

describe('interleavings of foreground and background children with the parent stopping (R-SUB-1, R-SUB-4, R-SUB-5, R-TSK-2)', () => {
  it('whatever the order, and with or without a pause between steps: every run is closed once in the durable log, every call has one result, and no child outlives its parent', { timeout: 180_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(op, fc.boolean()), { minLength: 1, maxLength: 14 }), async (steps) => {
        const gates = new Gates()
        const h = await harness({
          respond: (request, who) => {
            if (who !== 'parent') return gates.hold(who, request)
            const last = text(request.messages.at(-1)!)
            const spawn = /^(fg|bg) (\d+)$/.exec(last)
            return spawn ? taskCall({ description: last, prompt: `child ${spawn[2]}`, background: spawn[1] === 'bg' }) : 'ok'
          },
        })
        const children = () => h.root.agents.list().filter((agent) => String(agent.id).includes('-sub-'))
        try {
          let parent: Agent = await h.agent()
          let spawned = 0
          for (const [step, pause] of steps) {
            switch (step.kind) {
              case 'spawn':
                parent.followup(`${step.background ? 'bg' : 'fg'} ${spawned++}`)
                break
              case 'answer':
                gates.open(`child ${step.child % Math.max(1, spawned)}`, `answer ${step.child}`)
                break
              case 'fail':
                gates.open(`child ${step.child % Math.max(1, spawned)}`, { error: { code: 'BAD_REQUEST', message: 'refused' } })
                break
              case 'kill':
                h.root.tasks.list(parent)[step.child % 4]?.cancel()
                break
              case 'steer':
                parent.steer('carry on')
                break
              case 'cancel-user':
                parent.cancel({ kind: 'user' })
                break
              case 'cancel-parent':
                parent.cancel({ kind: 'parent' })
                break
              case 'dispose':
                await h.disposeAgent(parent)
                expect(children()).toEqual([])
                expect(h.root.subagents.list()).toEqual([])
                parent = await h.resume()
                break
            }
            if (pause) await settle()
          }
          for (let k = 0; k < spawned; k++) gates.open(`child ${k}`, `answer ${k}`)
          await parent.whenIdle()
          await Promise.all(h.root.tasks.list().map((task) => task.result()))
          await Promise.all(h.root.subagents.list().map((run) => run.result()))
          await parent.whenIdle()
          await h.disposeAgent(parent)
          expect(children()).toEqual([])
          await h.expectClean()

          // The durable log: each started run closed exactly once, never as interrupted (no process died);
          // each task call answered exactly once.
          const log = (await h.root.sessionPersistence.load(parent.id)).events as AnySessionEvent[]
          const closes = new Map<string, string[]>()
          for (const event of log) {
            if (event.type === 'subagent/started') closes.set(event.data.runId, [])
            else if (event.type === 'subagent/finished') closes.get(event.data.runId)?.push(event.data.status)
          }
          expect([...closes.values()].filter((statuses) => statuses.length !== 1 || statuses[0] === 'interrupted')).toEqual([])
          const calls = log.flatMap((event) => (event.type === 'tool/call' && event.data.name === 'task' ? [String(event.data.callId)] : []))
          const results = log.flatMap((event) =>
            event.type === 'tool/result' ? event.data.message.content.flatMap((block) => (block.type === 'tool-result' ? [String(block.toolCallId)] : [])) : [],
          )
          expect(calls.map((id) => results.filter((callId) => callId === id).length)).toEqual(calls.map(() => 1))
        } finally {
          await h.dispose()
        }
      }),
      { numRuns: 40 },
    )
  })
})
