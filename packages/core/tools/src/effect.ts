/**
 * What a tool call does to the world, as policies see it: `read` only looks
 * (files, state), `write` changes files or state, `execute` runs arbitrary
 * code or commands, `network` talks to other machines. Permission modes and
 * rules key on it (plan mode lets only `read` through; the default mode asks
 * for `write` and `execute`).
 */
export type ToolEffect = 'read' | 'write' | 'execute' | 'network'

/** Every effect, from the least to the most consequential. */
export const TOOL_EFFECTS: readonly ToolEffect[] = Object.freeze(['read', 'write', 'network', 'execute'])

/**
 * The effect a policy must assume for `definition`: its declared `effect`,
 * or `execute` when it declares none (or something that is not an effect).
 * An undeclared tool could do anything, so it is treated as the most
 * consequential kind.
 */
export function effectOf(definition: { readonly effect?: ToolEffect }): ToolEffect {
  const effect = definition.effect
  return effect !== undefined && TOOL_EFFECTS.includes(effect) ? effect : 'execute'
}
