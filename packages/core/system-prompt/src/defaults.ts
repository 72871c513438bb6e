import type { PromptSection, PromptVars } from './types'

/**
 * The harness identity: who the model is and how it acts. Deployments replace
 * it with the `identity` config; one agent can shadow it with an agent-local
 * section named `identity`.
 */
export const DEFAULT_IDENTITY =
  "You are dsh, an AI agent working in the user's workspace. You act through the tools provided with " +
  'this request, and a tool result is the only evidence of what a tool did.'

/**
 * The deployment persona: tone and working habits. Replaced by the `persona`
 * config, or per agent by an agent-local section named `persona`.
 */
export const DEFAULT_PERSONA =
  'Be concise and direct. Look before you change anything, prefer small steps that are easy to undo, and ' +
  'say plainly what you did and what you could not do.'

/** The orders of the built-in sections; plugin sections pick orders around them. */
export const BUILTIN_ORDER = Object.freeze({ identity: 0, persona: 100, environment: 1000 })

/**
 * The built-in `environment` section: the working directory and the model
 * route, from the variables the loop supplies. Lines for absent variables are
 * left out; with none, so is the section.
 */
export function renderEnvironment(vars: PromptVars): string {
  const lines: string[] = []
  if (vars.cwd) lines.push(`- Working directory: ${vars.cwd}`)
  if (vars.model) lines.push(vars.provider ? `- Model: ${vars.model} (${vars.provider})` : `- Model: ${vars.model}`)
  return lines.length ? `Environment:\n${lines.join('\n')}` : ''
}

/** The built-in sections for a config; any registered section of the same name shadows one. */
export function builtinSections(identity: string, persona: string): readonly PromptSection[] {
  return Object.freeze([
    Object.freeze({ name: 'identity', order: BUILTIN_ORDER.identity, text: identity }),
    Object.freeze({ name: 'persona', order: BUILTIN_ORDER.persona, text: persona }),
    Object.freeze({ name: 'environment', order: BUILTIN_ORDER.environment, render: renderEnvironment }),
  ])
}
