import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import RegistryPairing from '@deepseek-ai/dsh-agent/invariant'
import RequestReconstruction from '@deepseek-ai/dsh-agent-loop/invariant'
import Invariants from '@deepseek-ai/dsh-invariants'
import type { ScriptTurn } from '@deepseek-ai/dsh-llm-scripted'
import { memoryPersistence, SessionId } from '@deepseek-ai/dsh-session'
import LogStructure from '@deepseek-ai/dsh-session/invariant'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { spine } from './harness'

const echo = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ text }) => `echo: ${text}`,
})

/** The real spine with every invariant companion mounted, under the `throw` policy. */
async function companions(script: ScriptTurn[]) {
  const harness = await spine({ tools: [echo], model: { script } })
  const { root } = harness
  await root.plugin(Invariants, { policy: 'throw' })
  await root.plugin(memoryPersistence)
  await root.plugin(LogStructure)
  await root.plugin(RegistryPairing)
  await root.plugin(RequestReconstruction)
  return harness
}

describe('every invariant companion on a real spine', () => {
  it('finds nothing over create, turns, cancel, a vetoed publication, dispose, resume and owner unload', async () => {
    const { root, agent, model, handles, loop } = await companions([
      { toolCalls: [{ name: 'echo', arguments: { text: 'x' } }, { name: 'echo', arguments: { text: 'y' } }], answer: 'one' },
      'cut short',
      'two',
      'three',
    ])
    const a = await agent('a')
    a.followup('first')
    a.steer('steering')
    await a.whenIdle()

    const held = model.control()
    a.followup('cancel me')
    await held.started
    await held.text('partial')
    a.cancel({ kind: 'user' })
    await a.whenIdle()

    // A publication vetoed by a created listener rolls back with paired notifications.
    const veto = root.on('agent/created', (subject) => {
      if (subject.id === 'vetoed') throw new Error('not this one')
    })
    await expect(agent('vetoed')).rejects.toThrow('not this one')
    veto()

    await handles[0]!.dispose()
    const resumed = await root.agents.resume({ resumeSessionId: SessionId('a'), agentOptions: { provider: 'scripted', model: 'test-model' } })
    resumed.agent.followup('again')
    await resumed.agent.whenIdle()

    const b = await agent('b')
    b.followup('in b')
    await b.whenIdle()
    expect(await root.invariants.check()).toEqual([])

    // Unloading the loop disposes every agent it still drives.
    await loop.dispose()
    expect(root.agents.list()).toEqual([])
    expect(await root.invariants.check()).toEqual([])
    expect(root.invariants.violations).toEqual([])
    expect([model.calls, model.remaining]).toEqual([6, 0])
  })
})
