import type { LlmFailure } from '@deepseek-ai/dsh-llm'
import type { Secrets } from './redact'

/** What one body read yields. */
export type ReadResult = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

/** The messages (and codes) of an error and its first causes, joined; not redacted. */
export function causeOf(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current && depth < 3; depth++) {
    const e = current as { message?: unknown; code?: unknown; cause?: unknown }
    const text = [typeof e.code === 'string' ? e.code : undefined, typeof e.message === 'string' ? e.message : undefined].filter(Boolean).join(' ')
    if (text && !parts.includes(text)) parts.push(text)
    current = e.cause
  }
  return parts.join(': ') || String(error)
}

/**
 * One HTTP exchange with a provider: an `AbortController` that the caller's
 * signal, the two deadlines and the end of the exchange all abort, and the
 * classification of whatever ended it.
 *
 * The request deadline runs from the request until the response headers; the
 * idle deadline only while the adapter waits for body bytes, never while its
 * consumer holds a chunk, so a slow consumer never looks like a silent
 * provider.
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
    private readonly deadlines: { requestTimeoutMs: number; idleTimeoutMs: number },
  ) {
    caller?.addEventListener('abort', this.onAbort, { once: true })
  }

  private arm(kind: 'request' | 'idle', ms: number): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => {
      this.timedOut = kind
      this.controller.abort()
    }, ms)
  }

  /** Runs `fetch` under the request deadline. */
  async request(url: string, init: RequestInit): Promise<Response> {
    this.arm('request', this.deadlines.requestTimeoutMs)
    try {
      return await fetch(url, { ...init, signal: this.controller.signal })
    } finally {
      clearTimeout(this.timer)
    }
  }

  /** Reads the next body piece under the idle deadline. */
  async read(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<ReadResult> {
    this.arm('idle', this.deadlines.idleTimeoutMs)
    try {
      const result = await reader.read()
      if (result.done) this.complete = true
      return result
    } finally {
      clearTimeout(this.timer)
    }
  }

  /** Reads a whole (error) body, at most `limit` characters. */
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

  /** Classifies what a failed `fetch` or body read threw; `undefined` when the caller aborted (not a provider failure). */
  failure(error: unknown, phase: 'connect' | 'body', secrets: Secrets, requestId?: string): LlmFailure | undefined {
    if (this.caller?.aborted) return undefined
    const extra = requestId ? { requestId } : {}
    if (this.timedOut === 'request') {
      return { code: 'TIMEOUT', message: `${this.provider} sent no response within ${this.deadlines.requestTimeoutMs} ms (requestTimeoutMs)`, ...extra }
    }
    if (this.timedOut === 'idle') {
      return { code: 'TIMEOUT', message: `${this.provider}'s stream was silent for more than ${this.deadlines.idleTimeoutMs} ms (idleTimeoutMs)`, ...extra }
    }
    const cause = secrets.redact(causeOf(error))
    const message = phase === 'connect' ? `could not reach ${this.provider}: ${cause}` : `the connection to ${this.provider} broke mid-stream: ${cause}`
    return { code: 'TRANSPORT', message, ...extra }
  }

  /** Ends the exchange: clears the timer and the listener, and aborts the request unless its body was read to the end. */
  close(): void {
    clearTimeout(this.timer)
    this.caller?.removeEventListener('abort', this.onAbort)
    if (!this.complete) this.controller.abort()
  }
}
