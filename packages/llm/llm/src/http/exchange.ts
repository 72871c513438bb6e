import { abortedNow } from '../abort-read'
import type { LlmFailure } from '../failure'
import type { Secrets } from '../redact'
import type { StreamChunk } from '../stream'

/** What one read of a response body yields. */
export type BodyReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

/**
 * The two deadlines of an exchange, in milliseconds.
 *
 * `requestTimeoutMs` runs from the request until the response headers;
 * `idleTimeoutMs` runs only while the adapter waits for the next body bytes.
 * A deadline of 2^31 ms or more (longer than a Node timer can hold) waits
 * 2^31 − 1 ms, about 24.8 days: for practical purposes none.
 */
export interface HttpDeadlines {
  readonly requestTimeoutMs: number
  readonly idleTimeoutMs: number
}

/** Where a `fetch` failure happened: before the headers (`connect`) or while reading the body (`body`). */
export type ExchangePhase = 'connect' | 'body'

/**
 * The messages (and string codes) of an error and of its first two causes,
 * joined with `: `, so that Node's `fetch failed` says why (`ECONNREFUSED …`).
 * Not redacted: pass the result through `Secrets.redact` before it leaves
 * the adapter.
 */
export function causeOf(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current && depth < 3; depth++) {
    const e = current as { message?: unknown; code?: unknown; cause?: unknown }
    const words = [typeof e.code === 'string' ? e.code : undefined, typeof e.message === 'string' ? e.message : undefined]
    const text = words.filter(Boolean).join(' ')
    if (text && !parts.includes(text)) parts.push(text)
    current = e.cause
  }
  return parts.join(': ') || String(error)
}

/** The longest delay a Node timer holds (2^31 − 1 ms, about 24.8 days). */
const LONGEST_TIMER_MS = 2_147_483_647

/**
 * One HTTP exchange of an adapter with its provider: an `AbortController`
 * that the caller's signal, the two deadlines and `close()` all abort, and the
 * classification of whatever ended the exchange early.
 *
 * The request deadline runs from `request()` until the response headers. The
 * idle deadline runs only while `read()` waits for body bytes, never while
 * the adapter's consumer holds a chunk, so a slow consumer never looks like a
 * silent provider. Each adapter builds one per call and must `close()` it in
 * a `finally`: that closes the connection of a stream abandoned or cut short.
 */
export class HttpExchange {
  private readonly controller = new AbortController()
  private timer: ReturnType<typeof setTimeout> | undefined
  private timedOut: 'request' | 'idle' | undefined
  private complete = false
  private readonly onAbort = () => this.controller.abort()

  /**
   * @param caller the call's own signal; its abort is the caller's, not a failure. Already aborted, the exchange starts aborted (`request()` sends nothing).
   * @param provider the provider name failure messages use (readable, for the adapter's own messages).
   * @param deadlines the two deadlines (any object with both fields, e.g. a resolved provider config).
   */
  constructor(
    private readonly caller: AbortSignal | undefined,
    readonly provider: string,
    private readonly deadlines: HttpDeadlines,
  ) {
    // A signal that aborted before the exchange began fires no more 'abort' event: nothing may be sent for it.
    // (`abortedNow`: the once-per-call read that does not miss V8's caches on each new Node 20 signal.)
    if (caller !== undefined && abortedNow(caller)) this.controller.abort()
    else caller?.addEventListener('abort', this.onAbort, { once: true })
  }

  /** The signal `request()` passes to `fetch`. */
  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Whether the caller's own signal ended the exchange (reported as an `aborted` finish without a failure). */
  get abortedByCaller(): boolean {
    return this.caller?.aborted === true
  }

  private arm(kind: 'request' | 'idle', ms: number): void {
    clearTimeout(this.timer)
    // Node runs a timer longer than it can hold after 1 ms (with a warning): a deadline of 2^31 ms or more, set to
    // mean "practically none", would fail every call at once. Held to the longest timer, it fires after ~24.8 days.
    this.timer = setTimeout(() => {
      this.timedOut = kind
      this.controller.abort()
    }, ms > LONGEST_TIMER_MS ? LONGEST_TIMER_MS : ms)
  }

  /**
   * Runs `fetch` under the request deadline; throws what `fetch` throws
   * (classify it with `failure`). Redirects are not followed: a redirect
   * answer is returned as it came (see `redirectStep`), so no credential
   * header ever goes to an address the caller did not name.
   */
  async request(url: string, init: RequestInit): Promise<Response> {
    this.arm('request', this.deadlines.requestTimeoutMs)
    try {
      return await fetch(url, { ...init, redirect: 'manual', signal: this.controller.signal })
    } finally {
      clearTimeout(this.timer)
    }
  }

  /** Reads the next body piece under the idle deadline; a `done` read marks the body complete. */
  async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<BodyReadResult> {
    this.arm('idle', this.deadlines.idleTimeoutMs)
    try {
      const result = await reader.read()
      if (result.done) this.complete = true
      return result
    } finally {
      clearTimeout(this.timer)
    }
  }

  /**
   * Reads a whole (error) body as text under the idle deadline, stopping once
   * it holds `limit` characters or more (a proxy's endless error page cannot
   * fill memory). Throws what the read throws.
   */
  async text(response: Response, limit = 65_536): Promise<string> {
    if (!response.body) return ''
    const reader = response.body.getReader()
    const decoder = new TextDecoder()
    let text = ''
    while (text.length < limit) {
      const { done, value } = await this.read(reader)
      if (done) break
      text += decoder.decode(value, { stream: true })
    }
    return text + decoder.decode()
  }

  /**
   * Classifies what a failed `request()` or body read threw: `TIMEOUT` when a
   * deadline fired (the message names the config field), `TRANSPORT` otherwise
   * with the redacted cause. `undefined` means the caller aborted: not a
   * failure of the provider.
   */
  failure(error: unknown, phase: ExchangePhase, secrets: Secrets, requestId?: string): LlmFailure | undefined {
    if (this.abortedByCaller) return undefined
    const extra = requestId ? { requestId } : {}
    const { provider } = this
    if (this.timedOut === 'request') {
      const message = `${provider} sent no response within ${this.deadlines.requestTimeoutMs} ms (requestTimeoutMs)`
      return { code: 'TIMEOUT', message, ...extra }
    }
    if (this.timedOut === 'idle') {
      const message = `${provider}'s stream was silent for more than ${this.deadlines.idleTimeoutMs} ms (idleTimeoutMs)`
      return { code: 'TIMEOUT', message, ...extra }
    }
    const cause = secrets.redact(causeOf(error))
    const message =
      phase === 'connect' ? `could not reach ${provider}: ${cause}` : `the connection to ${provider} broke mid-stream: ${cause}`
    return { code: 'TRANSPORT', message, ...extra }
  }

  /** The final chunk for what ended the exchange early: `failure`'s answer as an `error` finish, or `aborted` when the caller aborted. */
  finish(error: unknown, phase: ExchangePhase, secrets: Secrets, requestId?: string): StreamChunk {
    const failure = this.failure(error, phase, secrets, requestId)
    return failure ? { type: 'finish', reason: { kind: 'error', failure } } : { type: 'finish', reason: { kind: 'aborted' } }
  }

  /**
   * Ends the exchange: clears the timer and the caller listener, and aborts
   * the request unless its body was read to the end, which closes the
   * connection of a stream that was abandoned or cut short.
   */
  close(): void {
    clearTimeout(this.timer)
    this.caller?.removeEventListener('abort', this.onAbort)
    if (!this.complete) this.controller.abort()
  }
}
