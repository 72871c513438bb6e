import type { Agent } from '@deepseek-ai/dsh-agent'
import type { AssembledContext, PromptVars, SystemPromptChange } from './types'

type Awaitable<T> = T | Promise<T>

declare module 'cordis' {
  interface Events {
    /**
     * The authoritative assembly seam, run on every
     * `assembleContextFor(agent, vars)` call, scope-filtered by the agent.
     * The innermost step returns the rendered sections and the agent's visible
     * tools. A listener may return a different `{ system, tools }` (never
     * messages: the request's history is not its to change) and owns the
     * protocol coherence of what it returns (tool names the history refers to,
     * KV-cache stability: anything that varies per step breaks the provider's
     * prefix cache from the first changed token). A throw rejects the
     * assembly, which fails the loop's turn.
     * @mode waterfall
     */
    'system-prompt/assemble'(agent: Agent, vars: PromptVars, next: () => Promise<AssembledContext>): Awaitable<AssembledContext>
    /**
     * Something the assembled prompt depends on changed: a section was added
     * or removed (`reason: 'section'`), the identity/persona config changed
     * (`'config'`), or the visible tools changed (`'tools'`, forwarded from
     * `tools/change` and from the tools service being mounted or unmounted).
     * Scope-filtered by `change.agentId` when the change is agent-local.
     * Listener failures are contained.
     * @mode emit
     */
    'system-prompt/change'(change: SystemPromptChange): void
  }
}

export {}
