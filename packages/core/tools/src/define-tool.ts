import { z } from 'zod'
import type { ContentBlock, JsonSchema, JsonValue } from '@deepseek-ai/dsh-llm'
import { ToolError } from './errors'
import type { ToolEffect } from './effect'
import { plainObjectCheck } from './plain-object-check'
import type { ToolDefinition, ToolOutput, ToolRunContext } from './types'

/** A zod object schema of any shape and unknown-key mode. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ZodObjectSchema = z.ZodObject<any, any>

/** What `defineTool` takes: a `ToolDefinition` whose `parameters` is a zod object schema. */
export interface DefineToolOptions<S extends ZodObjectSchema> {
  name: string
  /** What the tool does and when to use it, for the model. */
  description: string
  /** The arguments. Unknown top-level keys are refused unless the schema is `z.looseObject`. */
  parameters: S
  execute(args: z.output<S>, run: ToolRunContext): ToolOutput | Promise<ToolOutput>
  isConcurrencySafe?(args: z.output<S>): boolean
  finalizeContent?(output: ToolOutput, run: ToolRunContext): readonly ContentBlock[]
  timeoutMs?: number
  /** What a call does, for permission policies; undeclared counts as `execute`. */
  effect?: ToolEffect
}

/**
 * Builds a `ToolDefinition` from a zod object schema: `execute` receives the
 * parsed, typed arguments; `parameters` is the JSON Schema of the schema's
 * input (zod 4's `z.toJSONSchema`, deterministic, so the same schema always
 * gives the same bytes); `validate` runs the schema before the body and its
 * issues become the `INVALID_ARGUMENTS` result.
 *
 * Validation is strict: unknown top-level keys are refused (`additionalProperties:
 * false` in the schema) unless the schema opts out with `z.looseObject`, so a
 * misspelt argument is reported to the model instead of silently ignored.
 * Refinements must be synchronous.
 *
 * The JSON Schema leaves out what costs tokens and tells the model nothing:
 * the `$schema` URI, and the ±2^53 bounds zod puts on every integer.
 */
export function defineTool<S extends ZodObjectSchema>(options: DefineToolOptions<S>): ToolDefinition<z.output<S>> {
  const { parameters, ...rest } = options
  if (!(parameters instanceof z.ZodObject)) {
    throw new ToolError('INVALID_DEFINITION', `defineTool("${String(options?.name)}"): parameters must be a zod object schema`)
  }
  const schema: ZodObjectSchema = parameters._zod.def.catchall === undefined ? parameters.strict() : parameters
  let json: JsonSchema
  try {
    json = tidy(z.toJSONSchema(schema, { io: 'input' }) as JsonSchema, true) as JsonSchema
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error)
    throw new ToolError('INVALID_DEFINITION', `defineTool("${options.name}"): the schema has no JSON Schema form (${detail})`, {
      cause: error,
    })
  }
  // Plain parameters (strings, numbers, booleans) are checked in one loop; zod decides the rest and every refusal.
  const plain = plainObjectCheck(schema)
  return {
    ...rest,
    parameters: json,
    validate(args: unknown): z.output<S> {
      if (plain) {
        const checked = plain(args)
        if (checked !== undefined) return checked as z.output<S>
      }
      const parsed = schema.safeParse(args)
      if (parsed.success) return parsed.data as z.output<S>
      throw new ToolError('INVALID_ARGUMENTS', describeIssues(parsed.error.issues))
    },
  }
}

/** `path: message` per issue, joined with `; ` (e.g. `limit: Too small: expected number to be >=1`). */
function describeIssues(issues: readonly z.core.$ZodIssue[]): string {
  return issues
    .map((issue) => (issue.path.length ? `${issue.path.map(String).join('.')}: ${issue.message}` : issue.message))
    .join('; ')
}

function tidy(value: JsonValue, top: boolean): JsonValue {
  if (Array.isArray(value)) return value.map((item) => tidy(item, false))
  if (value === null || typeof value !== 'object') return value
  const out: { [key: string]: JsonValue } = {}
  const integer = value.type === 'integer'
  for (const key of Object.keys(value)) {
    const item = value[key]!
    if (top && key === '$schema') continue
    if (integer && key === 'minimum' && item === Number.MIN_SAFE_INTEGER) continue
    if (integer && key === 'maximum' && item === Number.MAX_SAFE_INTEGER) continue
    out[key] = tidy(item, false)
  }
  return out
}
