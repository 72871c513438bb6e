/**
 * The failure codes of model calls, keyed by code. Extensible by declaration
 * merging; `dsh-llm-retry` budgets retries per code.
 */
export interface LlmErrorCodeMap {
  /** 401/403: the key is missing, wrong, or lacks access. Not retryable. */
  AUTH: true
  /** 429: slow down; `retryAfterMs` carries the provider's hint when it gave one. */
  RATE_LIMIT: true
  /** 5xx or an overloaded provider. */
  SERVER: true
  /** No first byte, or an idle stream, past the configured timeout. */
  TIMEOUT: true
  /** The connection failed or broke mid-stream. */
  TRANSPORT: true
  /** The request does not fit the model's context window. */
  CONTEXT_OVERFLOW: true
  /** The provider refused the request as malformed (other 4xx). */
  BAD_REQUEST: true
  /** The stream ended without producing anything. */
  EMPTY_RESPONSE: true
  /** No adapter, and no `llm/stream` listener, handled the route. */
  NO_ADAPTER: true
  /** The call was aborted through its signal. */
  ABORTED: true
  /** The call configuration is invalid (e.g. an unsupported reasoning effort, no provider/model). */
  INVALID_CONFIG: true
  /** The chunk sequence broke the stream protocol (chunk after finish, block kind change, …). */
  MALFORMED_STREAM: true
  /** Anything an adapter could not classify. */
  UNKNOWN: true
}

export type LlmErrorCode = keyof LlmErrorCodeMap

/**
 * A classified model-call failure: plain JSON, so it can be logged in the
 * session (`finishReason`, `turn/end`). It never contains credentials.
 */
export interface LlmFailure {
  code: LlmErrorCode
  /** A sentence a person can act on. */
  message: string
  /** The HTTP status, when there was one. */
  status?: number
  /** The provider's retry hint, in milliseconds. */
  retryAfterMs?: number
  /** The provider's request id, for support tickets. */
  requestId?: string
}

/**
 * A thrown model-call failure: an `Error` with a `code` and the JSON `failure`.
 * `failure` is kept as given when it is plain JSON (its fields strings,
 * booleans or finite numbers); otherwise it is a copy without the fields
 * JSON would drop or change (an unset `status: undefined`, a `NaN` wait, an
 * object), since it ends up in the session log (a finish chunk, `turn/end`),
 * which refuses them.
 */
export class LlmError extends Error {
  override readonly name = 'LlmError'
  readonly code: LlmErrorCode
  readonly failure: LlmFailure

  constructor(failure: LlmFailure, options?: { cause?: unknown }) {
    super(failure.message, options)
    this.code = failure.code
    this.failure = plainFailure(failure)
  }
}

/** Whether `value` is a JSON leaf that survives a round trip unchanged. */
function isPlainLeaf(value: unknown): boolean {
  return typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value))
}

/** `failure` itself when every field is a plain JSON leaf, else a copy of those fields alone (a thrown failure only: no hot path). */
function plainFailure(failure: LlmFailure): LlmFailure {
  const fields = failure as unknown as Record<string, unknown>
  let plain = true
  for (const key in fields) if (!isPlainLeaf(fields[key])) plain = false
  if (plain) return failure
  const out: Record<string, unknown> = {}
  for (const key in fields) if (isPlainLeaf(fields[key])) out[key] = fields[key]
  // The two required fields stay, in words, whatever an untyped caller gave.
  if (typeof out.code !== 'string') out.code = 'UNKNOWN'
  if (typeof out.message !== 'string') out.message = String(failure.message ?? 'the model call failed')
  return out as unknown as LlmFailure
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || (error as { code?: unknown }).code === 'ABORT_ERR')
}

/**
 * Classifies anything thrown by an adapter or a stream into an `LlmFailure`:
 * an `LlmError` keeps its failure; an error with a known `code` keeps it; an
 * abort (or any error while `signal` is aborted) is `ABORTED`; the rest is
 * `UNKNOWN` with the error's message.
 */
export function toLlmFailure(error: unknown, signal?: AbortSignal): LlmFailure {
  if (error instanceof LlmError) return error.failure
  if (signal?.aborted || isAbortError(error)) {
    return { code: 'ABORTED', message: 'the model call was aborted' }
  }
  const code = (error as { code?: unknown } | null)?.code
  const message = error instanceof Error ? error.message : String(error)
  if (typeof code === 'string' && isLlmErrorCode(code)) return { code, message }
  return { code: 'UNKNOWN', message: message || 'the model call failed' }
}

const knownCodes = new Set<string>([
  'AUTH', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT', 'CONTEXT_OVERFLOW', 'BAD_REQUEST',
  'EMPTY_RESPONSE', 'NO_ADAPTER', 'ABORTED', 'INVALID_CONFIG', 'MALFORMED_STREAM', 'UNKNOWN',
] satisfies LlmErrorCode[])

/** Whether `code` is one of the built-in failure codes. */
export function isLlmErrorCode(code: string): code is LlmErrorCode {
  return knownCodes.has(code)
}
