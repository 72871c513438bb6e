import { Context } from 'cordis'
import { scoped } from '@deepseek-ai/dsh-scope'
import { SessionId } from '@deepseek-ai/dsh-session'
import type { Agent } from '@deepseek-ai/dsh-agent'

/** A stand-in agent: the registry only reads `id` and `ctx`. */
export function fakeAgent(root: Context, id: string): Agent {
  return { id: SessionId(id), ctx: scoped(root, id) } as unknown as Agent
}
