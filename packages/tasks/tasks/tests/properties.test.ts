import type { Agent } from '@deepseek-ai/dsh-agent'
import { MemorySessionPersistence } from '@deepseek-ai/dsh-session'
import { settle } from '@deepseek-ai/dsh-testkit'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { gate, harness, holdTool, seen, spec, textOf, work, type Work } from './helpers'

type Op =
  | { kind: 'start' }
  | { kind: 'finish' | 'fail' | 'stop'; task: number }
  | { kind: 'prompt' | 'release' | 'cancel-user' | 'cancel-parent' | 'dispose' }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.constant({ kind: 'start' as const }),
  fc.record({ kind: fc.constantFrom('finish' as const, 'fail' as const, 'stop' as const), task: fc.nat(7) }),
  fc.constantFrom<Op>({ kind: 'prompt' }, { kind: 'release' }, { kind: 'cancel-user' }, { kind: 'cancel-parent' }, { kind: 'dispose' }),
)

describe('properties (R-TSK-1, R-TSK-2)', () => {
  it('whatever the order of starts, ends, stops, cancels, disposals and resumes: every task reaches the model exactly once, and none outlives its owner', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 24 }), async (ops) => {
        let g = gate()
        const h = await harness({
          backend: new MemorySessionPersistence(),
          tools: [holdTool(() => g)],
          respond: (request) => (textOf(request.messages.at(-1)!) === 'Hold on.' ? { toolCalls: [{ name: 'hold', arguments: {} }] } : 'ok'),
        })
        try {
          let owner: Agent = await h.agent()
          const works: { w: Work; owner: Agent; settled: boolean }[] = []
          for (const step of ops) {
            const entry = 'task' in step ? works[step.task % Math.max(1, works.length)] : undefined
            switch (step.kind) {
              case 'start': {
                const w = work()
                const record = { w, owner, settled: false }
                void w.settled.then(() => (record.settled = true))
                works.push(record)
                h.root.tasks.start(spec(owner, w, `job ${works.length}`))
                break
              }
              case 'finish':
                entry?.w.finish('done')
                break
              case 'fail':
                entry?.w.fail(new Error('broke'))
                break
              case 'stop':
                if (entry) h.root.tasks.list(entry.owner).find((task) => task.title === `job ${works.indexOf(entry) + 1}`)?.cancel()
                break
              case 'prompt':
                if (owner.status === 'idle') {
                  g = gate()
                  owner.followup('Hold on.')
                }
                break
              case 'release':
                g.open.resolve()
                break
              case 'cancel-user':
                owner.cancel({ kind: 'user' })
                break
              case 'cancel-parent':
                owner.cancel({ kind: 'parent' })
                break
              case 'dispose': {
                const gone = owner
                await h.disposeAgent(gone)
                // Nothing of it runs any more: every task's work settled before the disposal did.
                expect(works.filter((record) => record.owner === gone && !record.settled)).toEqual([])
                expect(h.root.tasks.list().filter((task) => task.owner === gone)).toEqual([])
                owner = await h.resume()
                break
              }
            }
            await settle()
          }
          g.open.resolve()
          for (const record of works) record.w.finish('done')
          await Promise.all(h.root.tasks.list().map((task) => task.result()))
          await owner.whenIdle()
          owner.followup('Done?')
          await owner.whenIdle()
          // The log holds the whole session (a resumed owner continues it): every task's notice, once.
          expect(works.map((_, index) => seen(owner.session, `task-${index + 1}`))).toEqual(works.map(() => 1))
          // And a resume now delivers nothing more.
          await h.disposeAgent(owner)
          const last = await h.resume()
          last.followup('Still done?')
          await last.whenIdle()
          expect(works.map((_, index) => seen(last.session, `task-${index + 1}`))).toEqual(works.map(() => 1))
          await h.expectClean()
        } finally {
          await h.dispose()
        }
      }),
      { numRuns: 40 },
    )
  })
})
