import type { LlmErrorCode, LlmFailure } from '@deepseek-ai/dsh-llm'
import type { Secrets } from './redact'

/** What a failure message may say about the call, besides the provider's own words. */
export interface FailureContext {
  provider: string
  model: string
  baseUrl: string
  secrets: Secrets
  /** Where the key comes from, so an `AUTH` message can say what to check. */
  apiKeySource: string | undefined
  now: () => number
}

/** How much of the provider's own words a failure message quotes. */
const maxDetail = 300

/** The `{ type: 'error', error: { type, message } }` object of the Messages API (and the looser shapes of compatible servers). */
interface ErrorObject {
  type?: string
  message?: string
}

export function errorObject(value: unknown): ErrorObject | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const record = value as Record<string, unknown>
  const inner = record.error ?? record
  if (typeof inner === 'string') return { message: inner }
  if (inner === null || typeof inner !== 'object') return undefined
  const e = inner as Record<string, unknown>
  const message = [e.message, record.message].find((m) => typeof m === 'string') as string | undefined
  const type = typeof e.type === 'string' ? e.type : typeof e.code === 'string' ? e.code : undefined
  return message === undefined && type === undefined ? undefined : { type, message }
}

function parseBody(text: string): ErrorObject | undefined {
  try {
    return errorObject(JSON.parse(text))
  } catch {
    return undefined
  }
}

/** What the API says when a prompt does not fit: `prompt is too long: 201234 tokens > 200000 maximum`, and its variants. */
const contextOverflow = /prompt is too long|too many tokens|context[_ ](?:length|window)|exceeds? the (?:model'?s? )?(?:context|maximum)|request_too_large/i

/**
 * Parses the retry hint of a 429/529 answer: `retry-after` in seconds or as
 * an HTTP date. Whole milliseconds, never negative, or `undefined`.
 */
export function retryAfterMs(headers: Headers, now: number): number | undefined {
  const after = headers.get('retry-after')
  if (after === null) return undefined
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Math.ceil(Number(after) * 1000)
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

function failure(code: LlmErrorCode, message: string, extra: { status?: number; retryAfterMs?: number; requestId?: string }): LlmFailure {
  const out: LlmFailure = { code, message }
  if (extra.status !== undefined) out.status = extra.status
  if (extra.retryAfterMs !== undefined) out.retryAfterMs = extra.retryAfterMs
  if (extra.requestId) out.requestId = extra.requestId
  return out
}

function describe(error: ErrorObject | undefined, fallback: string): string {
  return [error?.message, error?.type].filter((w) => w !== undefined && w !== '').join('; ') || fallback
}

/**
 * Classifies a non-2xx answer: 401/403 and 402 (billing) `AUTH`; 429
 * `RATE_LIMIT`; 529 (`overloaded_error`) and other 5xx `SERVER`, both with
 * the `retry-after` hint; 408/504 `TIMEOUT`; 413, and a 400 that says the
 * prompt is too long, `CONTEXT_OVERFLOW`; 404 and any other 4xx
 * `BAD_REQUEST`. The provider's words are kept, redacted and shortened; the
 * request id comes from the `request-id` header.
 */
export function httpFailure(status: number, headers: Headers, body: string, context: FailureContext): LlmFailure {
  const error = parseBody(body)
  const said = context.secrets.excerpt(error ? describe(error, body) : body, maxDetail) || 'no details'
  const extra = {
    status,
    retryAfterMs: retryAfterMs(headers, context.now()),
    requestId: headers.get('request-id') ?? headers.get('x-request-id') ?? undefined,
  }
  const { provider, model } = context
  const http = `HTTP ${status}: ${said}`
  const words = `${error?.message ?? ''} ${error?.type ?? ''} ${error ? '' : body}`
  if (status === 401 || status === 403) {
    const check = context.apiKeySource ? ` Check ${context.apiKeySource}.` : ' The provider has no API key configured (set apiKey or apiKeyEnv).'
    const what = status === 403 ? 'refused access with these credentials' : 'refused the credentials'
    return failure('AUTH', `${provider} ${what} (${http}).${check}`, extra)
  }
  if (status === 402) return failure('AUTH', `${provider} refused the call for billing reasons (${http}); retrying will not help.`, extra)
  if (status === 429) {
    const wait = extra.retryAfterMs !== undefined ? ` The provider asks to wait ${extra.retryAfterMs} ms.` : ''
    return failure('RATE_LIMIT', `${provider} is rate limiting requests (${http}).${wait}`, extra)
  }
  if (status === 408 || status === 504) return failure('TIMEOUT', `${provider} timed out the request (${http}).`, extra)
  if (status === 529 || /overloaded/i.test(words)) return failure('SERVER', `${provider} is overloaded (${http}); try again shortly.`, extra)
  if (status >= 500) return failure('SERVER', `${provider} had a server error (${http}); try again later.`, extra)
  if (status === 413 || (status >= 400 && contextOverflow.test(words))) {
    return failure('CONTEXT_OVERFLOW', `the request does not fit the context window of ${provider}/${model} (${http}). Shorten or compact the history.`, extra)
  }
  if (status === 404) {
    const hint = /model/i.test(words) ? ' Check the model id.' : ` Check the base URL (${context.baseUrl}): requests go to <baseUrl>/v1/messages.`
    return failure('BAD_REQUEST', `${provider} found no such resource for ${model} (${http}).${hint}`, extra)
  }
  if (status >= 400) return failure('BAD_REQUEST', `${provider} rejected the request for ${model} (${http}).`, extra)
  return failure('UNKNOWN', `${provider} answered with unexpected HTTP ${status}: ${said}`, extra)
}

/**
 * Classifies an `error` event sent inside a stream the provider had accepted:
 * `overloaded_error` and `api_error` are `SERVER`, `rate_limit_error`
 * `RATE_LIMIT`, a prompt that is too long `CONTEXT_OVERFLOW`, the
 * authentication and permission errors `AUTH`, `invalid_request_error`
 * `BAD_REQUEST`; anything else is `SERVER` (the provider broke off an answer).
 */
export function streamErrorFailure(value: unknown, requestId: string | undefined, context: FailureContext): LlmFailure {
  const error = errorObject(value) ?? {}
  const said = context.secrets.excerpt(describe(error, 'no details'), maxDetail)
  const extra = { requestId }
  const type = error.type ?? ''
  const words = `${error.message ?? ''} ${type}`
  const message = `${context.provider} sent an error in the stream: ${said}`
  if (type === 'overloaded_error') return failure('SERVER', `${message}; it is overloaded, try again shortly`, extra)
  if (type === 'rate_limit_error') return failure('RATE_LIMIT', message, extra)
  if (contextOverflow.test(words)) return failure('CONTEXT_OVERFLOW', message, extra)
  if (type === 'authentication_error' || type === 'permission_error' || type === 'billing_error') return failure('AUTH', message, extra)
  if (type === 'invalid_request_error' || type === 'not_found_error') return failure('BAD_REQUEST', message, extra)
  if (type === 'timeout_error') return failure('TIMEOUT', message, extra)
  return failure('SERVER', message, extra)
}
