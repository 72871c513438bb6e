import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import type { ScriptReply } from '@deepseek-ai/dsh-llm-scripted'

/**
 * The tools of the property world, by behaviour. Every body waits on
 * scheduler ticks, so the scheduler decides when each one settles.
 * - `ok`: one tick, then a result (concurrency-safe).
 * - `slow`: three ticks, ignoring its signal (concurrency-safe).
 * - `fail`: one tick, then throws (concurrency-safe): `TOOL_ERROR`.
 * - `obedient`: one tick, or throws as soon as its signal aborts (concurrency-safe): `ABORTED`.
 * - `exclusive`: one tick, defers a context, then a result (a barrier).
 * - `missing`: a call to a tool nobody registered: `UNKNOWN_TOOL`.
 * - `badArgs`: `ok` with arguments its schema refuses: `INVALID_ARGUMENTS`.
 * - `malformed`: `ok` with arguments that are not JSON: `INVALID_ARGUMENTS`.
 */
export type ToolKind = 'ok' | 'slow' | 'fail' | 'obedient' | 'exclusive' | 'missing' | 'badArgs' | 'malformed'

export const TOOL_KINDS: readonly ToolKind[] = ['ok', 'slow', 'fail', 'obedient', 'exclusive', 'missing', 'badArgs', 'malformed']

/**
 * What one model call answers. The adapter failures are the three ways a
 * provider call goes wrong: an error `finish`, a throw mid-stream, and a
 * stream that ends without `finish`.
 */
export type Reply =
  | { kind: 'text'; words: number; reasoning: boolean }
  | { kind: 'tools'; text: boolean; calls: ToolKind[] }
  | { kind: 'max-tokens' }
  | { kind: 'empty' }
  | { kind: 'error-finish' }
  | { kind: 'throw' }
  | { kind: 'no-finish' }
  | { kind: 'adapter-throws' }
  | { kind: 'not-iterable' }
  | { kind: 'malformed-chunk' }

/**
 * The replies whose adapter itself misbehaves (the loop meets them through
 * `ctx.llm`'s protocol checks): `stream()` throws synchronously, returns a
 * value that is not an async iterable, or yields a chunk of no known type
 * after one tick. The scripted model still records the request.
 */
export function misbehaves(reply: Reply): reply is Extract<Reply, { kind: 'adapter-throws' | 'not-iterable' | 'malformed-chunk' }> {
  return reply.kind === 'adapter-throws' || reply.kind === 'not-iterable' || reply.kind === 'malformed-chunk'
}

/** The reply of every call past the program's list: a short answer that ends the turn. */
export const DEFAULT_REPLY: Reply = { kind: 'text', words: 1, reasoning: false }

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta']

function words(count: number): string {
  return WORDS.slice(0, count).join(' ')
}

const ERROR_FINISH: LlmFailure = { code: 'RATE_LIMIT', message: 'slow down (scripted)' }
const THROWN: LlmFailure = { code: 'SERVER', message: 'the provider broke the stream (scripted)' }

/** The scripted model's reply for `reply`. */
export function scriptReply(reply: Reply): ScriptReply {
  switch (reply.kind) {
    case 'text':
      return reply.reasoning ? { reasoning: 'thinking it over', text: words(reply.words) } : { text: words(reply.words) }
    case 'tools':
      return {
        ...(reply.text ? { text: 'calling tools' } : {}),
        toolCalls: reply.calls.map((kind) => {
          switch (kind) {
            case 'missing':
              return { name: 'missing', arguments: { n: 1 } }
            case 'badArgs':
              return { name: 'ok', arguments: { n: 'not a number' } }
            case 'malformed':
              return { name: 'ok', arguments: '{"n": 1' }
            default:
              return { name: kind, arguments: { n: 1 } }
          }
        }),
      }
    case 'max-tokens':
      return { text: 'cut short by the limit', finish: 'max-tokens' }
    case 'empty':
      return { text: '' }
    case 'error-finish':
      return { text: 'partial answer', error: ERROR_FINISH }
    case 'throw':
      return { text: 'half an answer', throw: THROWN }
    case 'no-finish':
      return { text: 'cut off', noFinish: true }
    case 'adapter-throws':
    case 'not-iterable':
    case 'malformed-chunk':
      // Never played: the world's adapter answers these itself (`misbehaves`).
      return { text: 'never streamed' }
  }
}

/** The failure code a turn ends with when this reply is the last call of a turn nobody cancelled; undefined for a successful call. */
export function failureCode(reply: Reply): string | undefined {
  switch (reply.kind) {
    case 'error-finish':
      return ERROR_FINISH.code
    case 'throw':
      return THROWN.code
    case 'no-finish':
      // The usage chunk precedes the missing finish, so the stream produced something: TRANSPORT, not EMPTY_RESPONSE.
      return 'TRANSPORT'
    case 'adapter-throws':
    case 'not-iterable':
      return 'UNKNOWN'
    case 'malformed-chunk':
      return 'MALFORMED_STREAM'
    default:
      return undefined
  }
}

/** The error code of a call's `tool/result` in a turn nobody cancelled (undefined: a successful result). */
export function toolResultCode(kind: ToolKind): string | undefined {
  switch (kind) {
    case 'fail':
      return 'TOOL_ERROR'
    case 'missing':
      return 'UNKNOWN_TOOL'
    case 'badArgs':
    case 'malformed':
      return 'INVALID_ARGUMENTS'
    default:
      return undefined
  }
}
