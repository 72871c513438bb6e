import { Context } from 'cordis'
import { scoped } from '@deepseek-ai/dsh-scope'
import { SessionId } from '@deepseek-ai/dsh-session'
import type { Agent } from '@deepseek-ai/dsh-agent'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'

/** A stand-in agent: the services only read `id` and `ctx`. */
export function fakeAgent(root: Context, id: string): Agent {
  return { id: SessionId(id), ctx: scoped(root, id) } as unknown as Agent
}

/** A root context with `ctx.systemPrompt` mounted; the fiber is returned for config updates. */
export async function mountPrompt(config: SystemPrompt.Config = { identity: 'IDENTITY', persona: 'PERSONA' }) {
  const root = new Context()
  const fiber = root.plugin(SystemPrompt, config)
  await fiber
  return { root, fiber }
}

export const vars = { provider: 'scripted', model: 'demo', cwd: '/work/project' }
