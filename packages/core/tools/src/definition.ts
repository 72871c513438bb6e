import { deepFreeze, type JsonSchema, type ToolSchema } from '@deepseek-ai/dsh-llm'
import { TOOL_EFFECTS } from './effect'
import { ToolError } from './errors'
import type { ToolDefinition } from './types'

/** The tool names every provider we target accepts. */
const NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** The longest delay a Node timer holds; a longer one fires after 1 ms (with a warning). */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1

/**
 * Checks a definition and returns the frozen `ToolSchema` the model will see:
 * exactly `{ name, description, parameters }`, with `parameters` in its wire
 * form (a JSON round trip, so what the registry hands out is byte-for-byte
 * what an adapter serializes). Throws `INVALID_DEFINITION`.
 */
export function schemaOf(definition: ToolDefinition): ToolSchema {
  if (definition === null || typeof definition !== 'object') {
    throw new ToolError('INVALID_DEFINITION', 'a tool definition must be an object')
  }
  const { name, description, parameters } = definition
  if (typeof name !== 'string' || !NAME.test(name)) {
    throw new ToolError('INVALID_DEFINITION', `tool name ${JSON.stringify(name)} must match ${NAME.source}`)
  }
  if (typeof description !== 'string') {
    throw new ToolError('INVALID_DEFINITION', `tool "${name}" needs a string description`)
  }
  if (typeof definition.execute !== 'function') {
    throw new ToolError('INVALID_DEFINITION', `tool "${name}" needs an execute function`)
  }
  for (const key of ['validate', 'isConcurrencySafe', 'finalizeContent'] as const) {
    if (definition[key] !== undefined && typeof definition[key] !== 'function') {
      throw new ToolError('INVALID_DEFINITION', `tool "${name}": ${key} must be a function`)
    }
  }
  const timeout = definition.timeoutMs
  if (timeout !== undefined && !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout >= 0 && timeout <= MAX_TIMEOUT_MS)) {
    throw new ToolError('INVALID_DEFINITION', `tool "${name}": timeoutMs must be a number of milliseconds from 0 (no deadline) to ${MAX_TIMEOUT_MS}`)
  }
  const effect = definition.effect
  if (effect !== undefined && !TOOL_EFFECTS.includes(effect)) {
    throw new ToolError('INVALID_DEFINITION', `tool "${name}": effect must be one of ${TOOL_EFFECTS.join(', ')} (or left out, which counts as execute)`)
  }
  let wire: unknown
  try {
    wire = JSON.parse(JSON.stringify(parameters))
  } catch (error) {
    throw new ToolError('INVALID_DEFINITION', `tool "${name}": parameters must be plain JSON`, { cause: error })
  }
  if (wire === null || typeof wire !== 'object' || Array.isArray(wire)) {
    throw new ToolError('INVALID_DEFINITION', `tool "${name}": parameters must be a JSON Schema object`)
  }
  return deepFreeze({ name, description, parameters: wire as JsonSchema })
}
