import AgentRegistry from '@deepseek-ai/dsh-agent'
import RegistryPairingInvariant from '@deepseek-ai/dsh-agent/invariant'
import AgentDefaultModel from '@deepseek-ai/dsh-agent-default-model'
import AgentLoop from '@deepseek-ai/dsh-agent-loop'
import RequestReconstructionInvariant from '@deepseek-ai/dsh-agent-loop/invariant'
import LogStructureInvariant from '@deepseek-ai/dsh-session/invariant'
import Invariants from '@deepseek-ai/dsh-invariants'
import LlmService from '@deepseek-ai/dsh-llm'
import LlmRetry from '@deepseek-ai/dsh-llm-retry'
import SessionStore from '@deepseek-ai/dsh-session'
import SystemPrompt from '@deepseek-ai/dsh-system-prompt'
import ToolRegistry from '@deepseek-ai/dsh-tools'
import { SpineConfig } from './config'
import type { Context } from './cordis'

/**
 * The plugins the spine mounts, in mounting order. Services come first, in
 * dependency order; then the policies that listen to the loop's checkpoints
 * (default model, retry), the invariant service and the three invariant
 * companions that give it something to check (the log's structure, the
 * registry's pairing rules, and "model-visible means logged": every request
 * the loop sent rebuilt from the log alone); the loop comes last, so
 * every listener is in place before any agent (a config agent included) can
 * start, and it is the first part to start unloading when the spine unloads
 * (Cordis unloads a fiber's children in reverse order, concurrently).
 */
export const SPINE_PACKAGES = Object.freeze([
  '@deepseek-ai/dsh-llm',
  '@deepseek-ai/dsh-session',
  '@deepseek-ai/dsh-system-prompt',
  '@deepseek-ai/dsh-tools',
  '@deepseek-ai/dsh-agent',
  '@deepseek-ai/dsh-agent-default-model',
  '@deepseek-ai/dsh-llm-retry',
  '@deepseek-ai/dsh-invariants',
  '@deepseek-ai/dsh-session/invariant',
  '@deepseek-ai/dsh-agent/invariant',
  '@deepseek-ai/dsh-agent-loop/invariant',
  '@deepseek-ai/dsh-agent-loop',
] as const)

/**
 * The spine bundle: one plugin that mounts every package an agent needs
 * (`ctx.llm`, `ctx.sessions`, `ctx.systemPrompt`, `ctx.tools`, `ctx.agents`,
 * `ctx.agentDefaultModel`, `ctx.llmRetry`, `ctx.invariants` with the session,
 * agent and loop invariant companions, `ctx.agentLoop`) in the order of
 * `SPINE_PACKAGES`, and forwards its config to them. Violations go where the
 * `invariants.policy` says (default `log`) and are emitted as
 * `invariants/violation`.
 *
 * It deliberately mounts no model adapter, no persistence backend and no
 * tools: those are the application's choices, plugged next to the bundle.
 * Awaiting the fiber resolves once every part is active; a part that fails to
 * start (a bad config) rejects it. Disposing the fiber unloads all of them;
 * an application that persists sessions should dispose its agent handles
 * first, so the last turn's events reach the backend before it closes.
 */
export const AgentSpine = {
  name: 'dsh-agent-spine',
  Config: SpineConfig,
  async apply(ctx: Context, config: SpineConfig): Promise<void> {
    await ctx.plugin(LlmService)
    await ctx.plugin(SessionStore)
    await ctx.plugin(SystemPrompt, config.systemPrompt)
    await ctx.plugin(ToolRegistry)
    await ctx.plugin(AgentRegistry)
    await ctx.plugin(AgentDefaultModel, config.defaultModel)
    await ctx.plugin(LlmRetry, config.retry)
    await ctx.plugin(Invariants, config.invariants)
    await ctx.plugin(LogStructureInvariant)
    await ctx.plugin(RegistryPairingInvariant)
    await ctx.plugin(RequestReconstructionInvariant)
    await ctx.plugin(AgentLoop, { maxParallelToolCalls: config.maxParallelToolCalls, durability: config.durability, agents: config.agents })
  },
}
