import { classifyHttpFailure, FAILURE_DETAIL_CHARS, failureWith, type HttpFailureContext, type HttpFailureDialect, type LlmFailure } from '@deepseek-ai/dsh-llm'

/** What a failure message may say about the call, besides the provider's own words. */
export type FailureContext = HttpFailureContext

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

/**
 * What the API says when a request does not fit: `prompt is too long: 201234 tokens > 200000 maximum`,
 * `input length and \`max_tokens\` exceed context limit: 188240 + 21333 > 200000`, and their variants.
 */
const contextOverflow = /prompt is too long|too many tokens|context[_ ](?:length|window)|exceeds? the (?:model'?s? )?(?:context|maximum)|exceeds? context limit|request_too_large/i

function describe(error: ErrorObject | undefined, fallback: string): string {
  return [error?.message, error?.type].filter((w) => w !== undefined && w !== '').join('; ') || fallback
}

/**
 * How the Messages API answers a failed request, for dsh-llm's
 * `classifyHttpFailure`: the `{ type: 'error', error: { type, message } }`
 * body, the `request-id` header, 403 as refused access, 504 as a timeout,
 * 529 / `overloaded_error` as an overloaded provider, and a 404 hint that
 * tells a wrong model id from a wrong base URL.
 */
const dialect: HttpFailureDialect = {
  readError(body) {
    const error = parseBody(body)
    return error && { said: describe(error, body), words: `${error.message ?? ''} ${error.type ?? ''}` }
  },
  requestIdHeaders: ['request-id', 'x-request-id'],
  contextOverflow,
  forbidden: 'refused access with these credentials',
  billingAdvice: '; retrying will not help.',
  timeoutStatuses: [408, 504],
  isOverloaded: (status, words) => status === 529 || /overloaded/i.test(words),
  notFound: ({ words, http, context }) => {
    const hint = /model/i.test(words) ? ' Check the model id.' : ` Check the base URL (${context.baseUrl}): requests go to <baseUrl>/v1/messages.`
    return `${context.provider} found no such resource for ${context.model} (${http}).${hint}`
  },
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
  return classifyHttpFailure(status, headers, body, context, dialect)
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
  const said = context.secrets.excerpt(describe(error, 'no details'), FAILURE_DETAIL_CHARS)
  const extra = { requestId }
  const type = error.type ?? ''
  const words = `${error.message ?? ''} ${type}`
  const message = `${context.provider} sent an error in the stream: ${said}`
  if (type === 'overloaded_error') return failureWith('SERVER', `${message}; it is overloaded, try again shortly`, extra)
  if (type === 'rate_limit_error') return failureWith('RATE_LIMIT', message, extra)
  if (contextOverflow.test(words)) return failureWith('CONTEXT_OVERFLOW', message, extra)
  if (type === 'authentication_error' || type === 'permission_error' || type === 'billing_error') return failureWith('AUTH', message, extra)
  if (type === 'invalid_request_error' || type === 'not_found_error') return failureWith('BAD_REQUEST', message, extra)
  if (type === 'timeout_error') return failureWith('TIMEOUT', message, extra)
  return failureWith('SERVER', message, extra)
}
