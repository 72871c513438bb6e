import { existsSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import AgentSpine, { type SpineConfig } from '@deepseek-ai/dsh-agent-spine'
import type { Agent } from '@deepseek-ai/dsh-agent'
import ScriptedPlugin from '@deepseek-ai/dsh-llm-scripted'
import { SessionId, type AnySessionEvent } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { defineTool } from '@deepseek-ai/dsh-tools'
import { deferred } from '@deepseek-ai/dsh-testkit'
import { readEvents, tempDir, trace } from './helpers'

/** Lets the event loop turn `turns` times, I/O included (no timers: nothing here depends on speed). */
async function stopSlowly(turns = 2000): Promise<void> {
  for (let i = 0; i < turns; i++) await new Promise((resolve) => setImmediate(resolve))
}

const plain = (events: readonly AnySessionEvent[]) => JSON.parse(JSON.stringify(events)) as AnySessionEvent[]

type Order = 'persistence first' | 'spine first'
type Kind = 'programmatic agent' | 'config agent'

/**
 * The whole app of a user: the spine bundle, JSONL persistence (mounted before
 * or after the spine), the scripted model, and a tool that holds until its
 * call is aborted. The agent is asked to call the tool; once the call is
 * running, the test disposes the app's root.
 */
async function appWithHeldTool(directory: string, order: Order, kind: Kind) {
  const root = new Context()
  const spineConfig: SpineConfig.Input = {
    defaultModel: { provider: 'scripted', model: 'demo' },
    invariants: { policy: 'throw' },
    agents: kind === 'config agent' ? [{ id: 'configured', sessionId: 'configured-session' }] : [],
  }
  const persistence = () => root.plugin(JsonlSessionPersistence, { directory, flushIntervalMs: 60_000 })
  const spine = () => root.plugin(AgentSpine, spineConfig)
  if (order === 'persistence first') {
    await persistence()
    await spine()
  } else {
    await spine()
    await persistence()
  }
  const started = deferred()
  root.tools.register(
    defineTool({
      name: 'hold',
      description: 'Waits until it is cancelled.',
      parameters: z.object({}),
      // Like a real tool, it takes a while to stop once aborted (here: some turns of the event loop,
      // with I/O in between), so the loop is still settling when everything else has unloaded.
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => void stopSlowly().then(() => reject(signal.reason)), { once: true })
          started.resolve()
        }),
    }),
  )
  await root.plugin(ScriptedPlugin, { script: [{ toolCalls: [{ name: 'hold' }], answer: 'Never reached.' }] })
  let agent: Agent
  if (kind === 'programmatic agent') {
    agent = (await root.agents.create({ sessionId: SessionId('programmatic-session') })).agent
  } else {
    // A config agent has no handle: it is found in the registry once the loop has started it.
    const created = deferred<Agent>()
    const found = root.agents.list()[0]
    if (found) created.resolve(found)
    else root.on('agent/created', (agent) => created.resolve(agent))
    agent = await created.promise
  }
  agent.followup('Hold on.')
  await started.promise
  return { root, agent }
}

const cases: Array<[Order, Kind]> = [
  ['persistence first', 'programmatic agent'],
  ['spine first', 'programmatic agent'],
  ['persistence first', 'config agent'],
  ['spine first', 'config agent'],
]

describe('disposing the whole app mid-turn keeps the tail on disk', () => {
  it.each(cases)('%s, %s: the file holds exactly the log in memory', async (order, kind) => {
    const directory = tempDir('dsh-shutdown-')
    const { root, agent } = await appWithHeldTool(directory, order, kind)
    const session = agent.session

    // The whole app goes, mid-turn, while the tool call is running.
    await root.fiber.dispose()

    // In memory the loop settled the turn: the aborted call got its result, the turn its end.
    expect(trace(session.events)).toEqual([
      'turn/start 1 prompt',
      'step/start 1.1',
      'user/message "Hold on."',
      expect.stringMatching(/^assistant\/chunk ×\d+$/),
      'assistant/message tool-calls calls hold',
      'tool/call hold',
      expect.stringMatching(/^tool\/result /),
      'step/end 1.1',
      'turn/end 1 aborted',
    ])
    // On disk: the same log, every event, nothing more; the writer let go of the file.
    const file = join(directory, `${session.id}.jsonl`)
    expect(readEvents(file)).toEqual(plain(session.events))
    expect(readdirSync(directory).sort()).toEqual([`${session.id}.jsonl`])
    expect(existsSync(`${file}.lock`)).toBe(false)
  })
})
