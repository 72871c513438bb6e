import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import type { Secrets } from './redact'

type Phase = 'connect' | 'body'

/** What one body read yields. */
export type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

/** The messages (and codes) of an error and its first causes, joined; not redacted. */
export function causeOf(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current && depth < 3; depth++) {
    const e = current as { message?: unknown; code?: unknown; cause?: unknown }
    const text = [typeof e.code === 'string' ? e.code : undefined, typeof e.message === 'string' ? e.message : undefined]
      .filter(Boolean)
      .join(' ')
    if (text && !parts.includes(text)) parts.push(text)
    current = e.cause
  }
  return parts.join(': ') || String(error)
}

/**
 * One HTTP exchange with a provider: an `AbortController` that the caller's
 * signal, the two timeouts and the end of the stream all abort, and the
 * classification of whatever ended it.
 *
 * The request timeout runs from the request until the response headers. The
 * idle timeout runs only while the adapter waits for the next body bytes, not
 * while its consumer holds a chunk, so a slow consumer never looks like a
 * silent provider.
 */
export class Exchange {
  private readonly controller = new AbortController()
  private timer: ReturnType<typeof setTimeout> | undefined
  private timedOut: 'request' | 'idle' | undefined
  private complete = false
  private readonly onAbort = () => this.controller.abort()

  constructor(
    private readonly caller: AbortSignal | undefined,
    private readonly provider: string,
    private readonly timeouts: { requestTimeoutMs: number; idleTimeoutMs: number },
  ) {
    caller?.addEventListener('abort', this.onAbort, { once: true })
  }

  get signal(): AbortSignal {
    return this.controller.signal
  }

  /** Whether the caller's own signal ended the exchange (reported as an `aborted` finish without a failure). */
  get abortedByCaller(): boolean {
    return this.caller?.aborted === true
  }

  private arm(kind: 'request' | 'idle', ms: number): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timedOut = kind
      this.controller.abort()
    }, ms)
  }

  /** Runs `fetch` under the request timeout. */
  async request(url: string, init: RequestInit): Promise<Response> {
    this.arm('request', this.timeouts.requestTimeoutMs)
    try {
      return await fetch(url, { ...init, signal: this.controller.signal })
    } finally {
      clearTimeout(this.timer)
    }
  }

  /** Reads the next body piece under the idle timeout. */
  async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadResult> {
    this.arm('idle', this.timeouts.idleTimeoutMs)
    try {
      const result = await reader.read()
      if (result.done) this.complete = true
      return result
    } finally {
      clearTimeout(this.timer)
    }
  }

  /** Reads a whole (error) body, at most `limit` characters, under the idle timeout. */
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
   * Classifies what a failed `fetch` or body read threw. `undefined` means the
   * caller aborted: not a failure of the provider.
   */
  failure(error: unknown, phase: Phase, secrets: Secrets, requestId?: string): LlmFailure | undefined {
    if (this.abortedByCaller) return undefined
    const extra = requestId ? { requestId } : {}
    if (this.timedOut === 'request') {
      return {
        code: 'TIMEOUT',
        message: `${this.provider} sent no response within ${this.timeouts.requestTimeoutMs} ms (requestTimeoutMs)`,
        ...extra,
      }
    }
    if (this.timedOut === 'idle') {
      return {
        code: 'TIMEOUT',
        message: `${this.provider}'s stream was silent for more than ${this.timeouts.idleTimeoutMs} ms (idleTimeoutMs)`,
        ...extra,
      }
    }
    const cause = secrets.redact(causeOf(error))
    const message =
      phase === 'connect'
        ? `could not reach ${this.provider}: ${cause}`
        : `the connection to ${this.provider} broke mid-stream: ${cause}`
    return { code: 'TRANSPORT', message, ...extra }
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
