import { Context } from 'cordis'
import LlmService, { type ContentChunk, type ContentRedactor, type GenerateOptions, type LlmAdapter, type ModelInfo, type StreamChunk } from '@deepseek-ai/dsh-llm'

/** A root context with `ctx.llm` mounted. */
export async function mountLlm(): Promise<Context> {
  const root = new Context()
  await root.plugin(LlmService)
  return root
}

/** Drains a stream into an array. */
export async function collect(stream: AsyncIterable<StreamChunk>): Promise<StreamChunk[]> {
  const out: StreamChunk[] = []
  for await (const chunk of stream) out.push(chunk)
  return out
}

/** A promise with its resolvers, for driving interleavings without sleeps. */
export function deferred<T = void>() {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

export interface FakeAdapter extends LlmAdapter {
  /** Every `stream` call's options, in order. */
  readonly calls: GenerateOptions[]
  /** How many times `resolveModel` ran. */
  resolveCount: number
  /** How many streams were stopped with `return()` or ran their `finally`. */
  closed: number
}

/**
 * An adapter that streams `chunks` (or runs `body`) for every call. Its
 * generator's `finally` counts `closed`, so tests can see that the stream was
 * stopped.
 */
export function fakeAdapter(
  body: StreamChunk[] | ((options: GenerateOptions) => AsyncGenerator<StreamChunk>),
  model?: ModelInfo,
): FakeAdapter {
  const adapter: FakeAdapter = {
    calls: [],
    resolveCount: 0,
    closed: 0,
    stream(options) {
      adapter.calls.push(options)
      const inner = typeof body === 'function' ? body(options) : (async function* () { yield* body })()
      return (async function* () {
        try {
          yield* inner
        } finally {
          adapter.closed++
        }
      })()
    },
  }
  if (model) {
    adapter.resolveModel = (id: string) => {
      adapter.resolveCount++
      return { ...model, id }
    }
  }
  return adapter
}

export const stop: StreamChunk = { type: 'finish', reason: { kind: 'stop' } }
export const hello: StreamChunk = { type: 'text-delta', index: 0, text: 'hello' }

/** Runs text deltas of block 0 through a redactor, then flushes: the text chunks a consumer would see. */
export function redactedThrough(redactor: ContentRedactor, deltas: string[]): ContentChunk[] {
  const out: ContentChunk[] = []
  for (const text of deltas) {
    const passed = redactor.pass({ type: 'text-delta', index: 0, text })
    if (passed) out.push(passed)
  }
  return [...out, ...redactor.flush()]
}
