import type { Agent } from '@deepseek-ai/dsh-agent'
import type { Message } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'
import { settle } from '@deepseek-ai/dsh-testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Gates, harness, taskCall } from './helpers'

type Op = { kind: 'spawn' } | { kind: 'finish' | 'stop'; child: number } | { kind: 'cancel-user' | 'cancel-parent' | 'dispose' }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ kind: 'spawn' as const }),
  fc.record({ kind: fc.constantFrom('finish' as const, 'stop' as const), child: fc.nat(5) }),
  fc.constantFrom<Op>({ kind: 'cancel-user' }, { kind: 'cancel-parent' }, { kind: 'dispose' }),
)

const text = (message: Message) => message.content.map((block) => (block.type === 'text' ? block.text : '')).join('')

/** How many times the model-visible history carries task `id`'s notice (steering or injected). */
function seen(session: Session, id: string): number {
  const items = new Set<string>()
  let count = 0
  for (const event of session.events as AnySessionEvent[]) {
    if (event.type === 'inbox/enqueue' && event.data.message.metadata.task === id) items.add(event.data.message.id)
    else if (event.type === 'steering/message' && items.has(event.data.message.id as string)) count++
    else if (event.type === 'user/message' && (event.data.metadata?.task === id || items.has(event.data.message.id as string))) count++
  }
  return count
}

describe('properties (R-TSK-2, R-SUB-1, R-SUB-4)', () => {
  it('whatever the order of background spawns, answers, stops, cancels and disposals: each child task reaches the parent exactly once, and no child outlives its parent', { timeout: 120_000 }, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 16 }), async (ops) => {
        const gates = new Gates()
        const h = await harness({
          respond: (request, who) => {
            if (who !== 'parent') return gates.hold(who, request)
            const last = text(request.messages.at(-1)!)
            return last.startsWith('spawn ') ? taskCall({ description: last, prompt: `child ${last.slice(6)}`, background: true }) : 'ok'
          },
        })
        const children = () => h.root.agents.list().filter((agent) => String(agent.id).includes('-sub-'))
        try {
          let parent: Agent = await h.agent()
          let spawned = 0
          for (const step of ops) {
            switch (step.kind) {
              case 'spawn':
                parent.followup(`spawn ${spawned++}`)
                break
              case 'finish':
                gates.open(`child ${step.child % Math.max(1, spawned)}`, 'found it')
                break
              case 'stop':
                h.root.tasks.list(parent)[step.child]?.cancel()
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
            await settle()
          }
          for (let k = 0; k < spawned; k++) gates.open(`child ${k}`, 'found it')
          await parent.whenIdle()
          await Promise.all(h.root.tasks.list().map((task) => task.result()))
          await parent.whenIdle()
          parent.followup('Done?')
          await parent.whenIdle()
          const ids = parent.session.events.filter((event) => event.type === 'task/started').map((event) => (event.data as { id: string }).id)
          expect(ids.map((id) => [id, seen(parent.session, id)])).toEqual(ids.map((id) => [id, 1]))
          await h.disposeAgent(parent)
          expect(children()).toEqual([])
          await h.expectClean()
        } finally {
          await h.dispose()
        }
      }),
      { numRuns: 25 },
    )
  })
})
