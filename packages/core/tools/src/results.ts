import { contentProblem, createToolResultMessage, deepFreeze, type CallId, type ContentBlock } from '@deepseek-ai/dsh-llm'
import { jsonDataProblem, type ContextRecord } from '@deepseek-ai/dsh-session'
import { ToolError, type ToolErrorCode } from './errors'
import type { ToolCallResult, ToolOutput } from './types'

const frozenNone: readonly ContextRecord[] = Object.freeze([])

type Mutable<T> = { -readonly [K in keyof T]: T[K] }

/**
 * `{ message, contexts }` and `{ message, error, contexts }` (unfrozen), plain objects made by `new`: an object
 * made by a constructor has no allocation site, so V8's decision to allocate a literal's objects in the old
 * generation (pretenuring) never deoptimizes the code that inlined this (the tool batch's result loop).
 */
const SuccessRecord = function (this: Mutable<ToolCallResult>, message: ToolCallResult['message'], contexts: readonly ContextRecord[]) {
  this.message = message
  this.contexts = contexts
} as unknown as new (message: ToolCallResult['message'], contexts: readonly ContextRecord[]) => ToolCallResult
SuccessRecord.prototype = Object.prototype

const ErrorRecord = function (
  this: Mutable<ToolCallResult>,
  message: ToolCallResult['message'],
  error: NonNullable<ToolCallResult['error']>,
  contexts: readonly ContextRecord[],
) {
  this.message = message
  this.error = error
  this.contexts = contexts
} as unknown as new (message: ToolCallResult['message'], error: NonNullable<ToolCallResult['error']>, contexts: readonly ContextRecord[]) => ToolCallResult
ErrorRecord.prototype = Object.prototype

/** A successful result: one `tool-result` block with `content` (a string is one text block). */
export function successResult(callId: CallId, content: string | readonly ContentBlock[], contexts: readonly ContextRecord[]): ToolCallResult {
  return Object.freeze(new SuccessRecord(createToolResultMessage({ callId, content }), contexts.length ? deepFreeze([...contexts]) : frozenNone))
}

/**
 * An error result. The model sees `Error: <message>`; `error.message` is the
 * same sentence without the prefix, so logs and the model agree.
 */
export function errorResult(
  callId: CallId,
  code: ToolErrorCode | (string & {}),
  message: string,
  contexts: readonly ContextRecord[] = frozenNone,
): ToolCallResult {
  return Object.freeze(
    new ErrorRecord(
      createToolResultMessage({ callId, content: `Error: ${message}`, isError: true }),
      Object.freeze({ code, message }),
      contexts.length ? deepFreeze([...contexts]) : frozenNone,
    ),
  )
}

/** The content of an output: a string is one text block; blocks are checked and copied. Throws `TOOL_ERROR`. */
export function contentOf(output: unknown, what: string): readonly ContentBlock[] {
  if (typeof output === 'string') return [{ type: 'text', text: output }]
  const problem = contentProblem(output, what)
  if (problem !== undefined) {
    throw new ToolError('TOOL_ERROR', Array.isArray(output) ? `malformed tool output: ${problem}` : `${what} must be a string or content blocks`)
  }
  // Well-formed blocks can still hold what the session log refuses (which would stop the agent): this call fails instead.
  const lossy = jsonDataProblem(output, what)
  if (lossy !== undefined) throw new ToolError('TOOL_ERROR', `malformed tool output: ${lossy}`)
  return [...(output as ContentBlock[])]
}

/** Checks that an output is a string or well-formed content blocks. Throws `TOOL_ERROR`. */
export function checkOutput(output: unknown, what: string): ToolOutput {
  if (typeof output !== 'string') contentOf(output, what)
  return output as ToolOutput
}

/**
 * The model-visible sentence for a thrown value: a string itself, else the
 * `message` of an Error or of any object that carries a text one (an error
 * object of another library, a JSON-RPC error), else `fallback`. Never throws
 * (a `message` getter that throws gives the fallback).
 */
export function messageOf(error: unknown, fallback: string): string {
  let message: unknown = error
  if (typeof error === 'object' && error !== null) {
    try {
      message = (error as { message?: unknown }).message
    } catch {
      return fallback
    }
  }
  return typeof message === 'string' ? message.trim() || fallback : fallback
}
