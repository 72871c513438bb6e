import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { initiator, withInitiator } from '@deepseek-ai/dsh-agent'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { deferred, spine } from '@deepseek-ai/dsh-testkit'

/**
 * The drain runs every turn, tool and maintenance task inside
 * `withInitiator(agent)`: `initiator()` names the agent whose loop runs the
 * calling code. The loop is written as phases that continue synchronously and
 * chain on the first promise, so this pins that the context reaches every
 * phase before and after each wait, whoever woke the drain and whoever
 * settled the promise the loop waited for (here: the test, with no initiator,
 * or another agent).
 */
describe('the initiator context (withInitiator)', () => {
  it('reaches every phase of a turn, its tool bodies and maintenance tasks, before and after each wait', async () => {
    const seen: string[] = []
    const note = (what: string) => void seen.push(`${what}: ${initiator()?.id ?? 'none'}`)
    const gate = deferred()
    const slow = defineTool({
      name: 'slow',
      description: 'Waits for the test.',
      parameters: z.object({}),
      execute: async () => {
        note('tool body')
        await gate.promise
        note('tool body after its wait')
        return 'ok'
      },
    })
    const { agent, root, model } = await spine({
      tools: [slow],
      model: { script: [{ toolCalls: [{ name: 'slow', arguments: {} }] }, 'done'] },
    })
    const a = await agent('a')
    const b = await agent('b')
    root.on('agent/prompt-submit', async (_agent, _content, _source, _signal, next) => {
      note('prompt-submit')
      const decision = await next()
      note('prompt-submit after next')
      return decision
    })
    root.on('agent/pre-step', async (_agent, turn, step) => {
      note(`pre-step ${turn}.${step}`)
      await null
      note(`pre-step ${turn}.${step} after a wait`)
    })
    root.on('llm/stream', (_call, next) => {
      note('llm/stream')
      return next()
    })
    root.on('tools/pre-execute', async (_invocation, next) => {
      note('tools/pre-execute')
      return next()
    })
    root.on('agent/turn-continuation', async (_agent, turn, _fallback, _signal, next) => {
      const decision = await next()
      note(`turn-continuation ${turn}`)
      return decision
    })
    root.on('agent/post-step', (_agent, turn, step) => note(`post-step ${turn}.${step}`))
    root.on('session/event', (session, event) => {
      // The loop's own writes (an enqueue is written by the caller of followup, in the caller's context).
      if (session.id === 'a' && event.type !== 'inbox/enqueue') note(event.type)
    })

    // The first model call streams from the test's hand: its chunks arrive on promises the test settles.
    const call = model.control(0)
    withInitiator(b, () => a.followup('go'))
    await call.started
    await call.release()
    gate.resolve()
    await a.whenIdle()
    const task = withInitiator(b, () =>
      a.runMaintenance(async () => {
        note('maintenance task')
        await null
        note('maintenance task after a wait')
        return 'compacted'
      }),
    )
    expect(await task).toBe('compacted')
    await a.whenIdle()

    const foreign = seen.filter((line) => !line.endsWith(': a'))
    expect(foreign).toEqual([])
    // Every phase was reached (the context of each was checked above).
    const phases = new Set(seen.map((line) => line.slice(0, line.lastIndexOf(':'))))
    for (const phase of [
      'inbox/dequeue',
      'turn/start',
      'prompt-submit',
      'prompt-submit after next',
      'pre-step 1.1',
      'pre-step 1.1 after a wait',
      'step/start',
      'user/message',
      'request/header',
      'llm/stream',
      'assistant/chunk',
      'assistant/message',
      'tools/pre-execute',
      'tool/call',
      'tool body',
      'tool body after its wait',
      'tool/result',
      'post-step 1.1',
      'step/end',
      'turn-continuation 1',
      'pre-step 1.2',
      'pre-step 1.2 after a wait',
      'post-step 1.2',
      'turn/end',
      'maintenance task',
      'maintenance task after a wait',
    ]) {
      expect(phases, phase).toContain(phase)
    }
  })
})
