import type { ToolSchema } from '@deepseek-ai/dsh-llm'
import type { Agent } from '@deepseek-ai/dsh-agent'

/**
 * The variables of one agent's prompt. The loop supplies `provider`, `model`
 * and `cwd` per agent and step; callers may add any other string variables
 * for their sections. Values that are `undefined` count as absent.
 */
export interface PromptVars {
  readonly provider: string
  readonly model: string
  readonly cwd?: string
  readonly [name: string]: string | undefined
}

interface SectionBase {
  /** The section's identity: a newer registration of the same name shadows an older one (agent-local over global). */
  name: string
  /** Sections are rendered in ascending `order`, then by `name`. Built-ins: identity 0, persona 100, environment 1000. */
  order: number
}

/** A section with fixed text. */
export interface TextSection extends SectionBase {
  text: string
}

/**
 * A section rendered from the variables. `render` must be a pure function of
 * `vars`: the output is cached per agent until a section, the config, the
 * visible tools or the variables change, so anything else it reads is frozen
 * at the first render. Return `''` to leave the section out.
 */
export interface RenderedSection extends SectionBase {
  render(vars: PromptVars): string
}

/** A piece of the system prompt, registered with `ctx.systemPrompt.section()`. */
export type PromptSection = TextSection | RenderedSection

/**
 * The request prefix of one step: the system text and the tool schemas the
 * model sees. Frozen. Listeners of `system-prompt/assemble` return a new one
 * instead of changing it.
 */
export interface AssembledContext {
  readonly system: string
  readonly tools: readonly ToolSchema[]
}

/** What `system-prompt/change` reports. */
export interface SystemPromptChange {
  /** What changed: a section, the identity/persona config, or the visible tools. */
  readonly reason: 'section' | 'config' | 'tools'
  /** The agent the change is local to; absent when it may affect every agent. */
  readonly agentId?: Agent['id']
  /** The section or tool name, when one registration changed. */
  readonly name?: string
}
