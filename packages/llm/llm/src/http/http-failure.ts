import type { LlmErrorCode, LlmFailure } from '../failure'
import type { Secrets } from '../redact'
import { headerOf, retryAfterMs } from './retry-after'

/** What a failure message may say about the call, besides the provider's own words. */
export interface HttpFailureContext {
  provider: string
  model: string
  /** The provider's base URL (without userinfo: `parseBaseUrl` refuses it), for the hint of a 404. */
  baseUrl: string
  secrets: Secrets
  /** Where the key comes from (`ApiKeyLookup.source`), so an `AUTH` message can say what to check. */
  apiKeySource: string | undefined
  /** The clock a `retry-after` HTTP date is measured from. */
  now: () => number
}

/** The optional fields of a failure; an empty `requestId` is left out. */
export interface FailureDetails {
  status?: number
  retryAfterMs?: number
  requestId?: string
}

/** How many characters of the provider's own words a failure message quotes. */
export const FAILURE_DETAIL_CHARS = 300

/** A failure with the details that are set, in the order `code, message, status, retryAfterMs, requestId`. */
export function failureWith(code: LlmErrorCode, message: string, details: FailureDetails = {}): LlmFailure {
  const out: LlmFailure = { code, message }
  if (details.status !== undefined) out.status = details.status
  if (details.retryAfterMs !== undefined) out.retryAfterMs = details.retryAfterMs
  if (details.requestId) out.requestId = details.requestId
  return out
}

/** A provider's error body as its dialect reads it. */
export interface ProviderErrorWords {
  /** The provider's words for the message (e.g. `message; code 42; type`), not yet redacted or shortened. */
  said: string
  /** The text the rules match against (message, code, type); never shown. */
  words: string
}

/** One non-2xx answer, as a dialect's rules see it. */
export interface HttpAnswer {
  status: number
  /** The dialect's `words`, or the raw body when it is not the provider's error shape. */
  words: string
  /** `HTTP <status>: <the provider's words, redacted and shortened>`, for messages. */
  http: string
  context: HttpFailureContext
}

/**
 * What differs between providers in classifying an HTTP failure: the error
 * body's shape, the header names, and the few statuses a provider uses in its
 * own way. Everything else is `classifyHttpFailure`'s common ladder.
 */
export interface HttpFailureDialect {
  /** Reads the provider's error body; `undefined` when it is not the provider's error shape (the raw body is then quoted). */
  readError(body: string): ProviderErrorWords | undefined
  /** The request id headers, first match wins (`['x-request-id']`, or `['request-id', 'x-request-id']`). */
  requestIdHeaders: readonly string[]
  /** A header carrying the retry wait in milliseconds that wins over `retry-after` (OpenAI's `retry-after-ms`). */
  millisecondsHeader?: string
  /** What says, in a 4xx, that the request does not fit the context window. */
  contextOverflow: RegExp
  /** The words of a 403 (default `refused the credentials`, as for a 401). */
  forbidden?: string
  /** Whether the answer refuses the call for billing reasons (default: status 402). */
  isBilling?(status: number, words: string): boolean
  /** What follows `(HTTP …)` in a billing failure, punctuation included (e.g. `; retrying will not help.`). */
  billingAdvice: string
  /** The statuses that mean the provider timed the request out (default `[408]`). */
  timeoutStatuses?: readonly number[]
  /** Whether the provider says it is overloaded (a `SERVER` failure that says to try again shortly); default never. */
  isOverloaded?(status: number, words: string): boolean
  /** The whole message of a 404 (default: the message of any other 4xx). */
  notFound?(answer: HttpAnswer): string
}

/**
 * Classifies a non-2xx answer into a typed failure. In this order: 401/403
 * `AUTH` (the message names the key source to check); billing `AUTH` (waiting
 * does not help); 429 `RATE_LIMIT`; the dialect's timeout statuses `TIMEOUT`;
 * an overloaded provider, then any 5xx, `SERVER`; 413 or a 4xx whose words
 * match `contextOverflow` `CONTEXT_OVERFLOW`; 404 (with the dialect's hint)
 * and any other 4xx `BAD_REQUEST`; anything else `UNKNOWN`. The provider's
 * words are kept, redacted and cut to `FAILURE_DETAIL_CHARS`; `status`,
 * `retryAfterMs` and `requestId` come from the answer.
 */
export function classifyHttpFailure(
  status: number,
  headers: Headers,
  body: string,
  context: HttpFailureContext,
  dialect: HttpFailureDialect,
): LlmFailure {
  const error = dialect.readError(body)
  const said = context.secrets.excerpt(error ? error.said : body, FAILURE_DETAIL_CHARS) || 'no details'
  const details: FailureDetails = {
    status,
    retryAfterMs: retryAfterMs(headers, context.now(), dialect),
    requestId: headerOf(headers, dialect.requestIdHeaders),
  }
  const failure = (code: LlmErrorCode, message: string) => failureWith(code, message, details)
  const { provider, model } = context
  const http = `HTTP ${status}: ${said}`
  const words = error ? error.words : body

  if (status === 401 || status === 403) {
    const check = context.apiKeySource
      ? ` Check ${context.apiKeySource}.`
      : ' The provider has no API key configured (set apiKey or apiKeyEnv).'
    const what = (status === 403 && dialect.forbidden) || 'refused the credentials'
    return failure('AUTH', `${provider} ${what} (${http}).${check}`)
  }
  if (dialect.isBilling ? dialect.isBilling(status, words) : status === 402) {
    return failure('AUTH', `${provider} refused the call for billing reasons (${http})${dialect.billingAdvice}`)
  }
  if (status === 429) {
    const wait = details.retryAfterMs !== undefined ? ` The provider asks to wait ${details.retryAfterMs} ms.` : ''
    return failure('RATE_LIMIT', `${provider} is rate limiting requests (${http}).${wait}`)
  }
  if ((dialect.timeoutStatuses ?? [408]).includes(status)) return failure('TIMEOUT', `${provider} timed out the request (${http}).`)
  if (dialect.isOverloaded?.(status, words)) return failure('SERVER', `${provider} is overloaded (${http}); try again shortly.`)
  if (status >= 500) return failure('SERVER', `${provider} had a server error (${http}); try again later.`)
  if (status === 413 || (status >= 400 && dialect.contextOverflow.test(words))) {
    const message = `the request does not fit the context window of ${provider}/${model} (${http}). Shorten or compact the history.`
    return failure('CONTEXT_OVERFLOW', message)
  }
  if (status === 404 && dialect.notFound) return failure('BAD_REQUEST', dialect.notFound({ status, words, http, context }))
  if (status >= 400) return failure('BAD_REQUEST', `${provider} rejected the request for ${model} (${http}).`)
  return failure('UNKNOWN', `${provider} answered with unexpected HTTP ${status}: ${said}`)
}
