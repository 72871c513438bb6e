import Agents, { type Agent, type AgentHandle, type AgentOptions } from '@deepseek-ai/dsh-agent'
import AgentLoop, { type Durability } from '@deepseek-ai/dsh-agent-loop'
import Llm from '@deepseek-ai/dsh-llm'
import { ScriptedModel, type ScriptedModelOptions } from '@deepseek-ai/dsh-llm-scripted'
import Sessions, { SessionId } from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import Tools, { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { z } from 'zod'
import { Context } from './cordis'

/** A concurrency-safe tool that answers `echo: <text>`. */
export const echo = defineTool({
  name: 'echo',
  description: 'Echoes its text.',
  parameters: z.object({ text: z.string() }),
  isConcurrencySafe: () => true,
  execute: ({ text }) => `echo: ${text}`,
})

export interface SpineOptions {
  /** The scripted model's options (its script, chunking, model info…). */
  model?: ScriptedModelOptions
  maxParallelToolCalls?: number
  /** Tools registered on the root before the loop starts. */
  tools?: ToolDefinition<any>[]
  /** The loop's `durability` (default: the loop's default, `'step'`). */
  durability?: Durability
}

/**
 * The real spine (dsh-llm, dsh-session, dsh-tools, dsh-system-prompt,
 * dsh-agent, dsh-agent-loop: no mocks of our packages) on a fresh root
 * context, with a `ScriptedModel` registered as provider `scripted`. Sessions
 * live in memory unless the test mounts a persistence plugin on `root`.
 *
 * `agent(id)` creates an agent on session `id` (default model
 * `scripted/test-model`); its handle is kept in `handles` so the test can
 * dispose it.
 */
export async function spine(options: SpineOptions = {}) {
  const root = new Context()
  await root.plugin(Llm)
  await root.plugin(Sessions)
  await root.plugin(Tools)
  await root.plugin(SystemPrompt, { identity: 'You are a test agent.', persona: '' })
  await root.plugin(Agents)
  const model = new ScriptedModel(options.model ?? {})
  root.llm.registerAdapter(['scripted'], model)
  for (const tool of options.tools ?? []) root.tools.register(tool)
  const loop = root.plugin(AgentLoop, {
    maxParallelToolCalls: options.maxParallelToolCalls ?? 10,
    agents: [],
    ...(options.durability ? { durability: options.durability } : {}),
  })
  await loop
  const handles: AgentHandle[] = []
  return {
    root,
    model,
    loop,
    async agent(id = 'a', agentOptions: AgentOptions = { provider: 'scripted', model: 'test-model' }): Promise<Agent> {
      const handle = await root.agents.create({ sessionId: SessionId(id), agentOptions })
      handles.push(handle)
      return handle.agent
    },
    handles,
  }
}

/** What `spine()` resolves to. */
export type Spine = Awaited<ReturnType<typeof spine>>
