import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import Llm, { assemble, createUserMessage, type GenerateOptions, type StreamChunk, type ToolSchema } from '@deepseek-ai/dsh-llm'
import { Context } from '../cordis'
import type { AdapterBehaviour } from './behaviour'
import { CONFORMANCE_CASES, type AnswerCase, type ConformanceCase, type FailureCase, type HeldCase } from './cases'
import type { AdapterConformanceDriver, AdapterUnderTest, ArrangedCall } from './driver'
import { idealChunks } from './ideal-stream'
import { bodyOf, drain, leakedSecrets, outcomeOf, playHeld, type HeldMove } from './play'
import { protocolProblems, type PlayedStream } from './protocol'

/** Each case runs twice: on the adapter's own stream, and through `ctx.llm` as a consumer reads it. */
type Via = 'adapter' | 'ctx.llm'
const VIAS: readonly Via[] = ['adapter', 'ctx.llm']

const tools: ToolSchema[] = [
  { name: 'read', description: 'Reads a file.', parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] } },
  { name: 'grep', description: 'Searches files.', parameters: { type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] } },
]

const anyMessage = expect.stringMatching(/\S/)

/**
 * The conformance suite of the `ctx.llm` stream protocol (R-LLM-6, R-LLM-4)
 * for one adapter. Its package's test file calls it with a driver that makes
 * the adapter's provider behave as each case asks (a local HTTP server
 * speaking the provider's format, a script):
 *
 * ```ts
 * describeAdapterConformance('dsh-llm-openai', { start: async () => ({ provider, model, arrange, stop }) })
 * ```
 *
 * Every case runs the call twice, on the adapter's own stream and through
 * `ctx.llm`, and checks every stream as a whole: the protocol rules
 * (`protocolProblems`: one finish, last; block kinds fixed by their first
 * chunk; the first tool-call delta with id and name; an assembled message
 * that is valid), that no `secrets` leak, and the case's expected outcome:
 *
 * - answers (text, reasoning, a tool call, parallel interleaved tool calls,
 *   cumulative usage, `max-tokens`): the assembled message, usage and finish
 *   equal those of the reference stream (`idealChunks`);
 * - failures (each `FailureClass`): exactly one `error` finish of that class
 *   with a message (and `retryAfterMs` for `RATE_LIMIT`), nothing before it
 *   (duplicate tool-call ids: whatever came before is valid);
 * - an abort mid-stream, also while the next read waits for the provider:
 *   nothing after the abort but an `aborted` finish (or, on the adapter's own
 *   stream, a throw), and the provider is released; an already aborted call:
 *   `aborted` and nothing else;
 * - a consumer that stops reading: the provider is released; when it stops
 *   while its next read waits for the provider, at once (not at a deadline),
 *   and that read and `return()` both end the stream;
 * - a stream that breaks mid-answer: its content, then one `TRANSPORT` error
 *   (an adapter may throw it; `ctx.llm` makes it a finish, R-LLM-4).
 *
 * A thrown failure counts as the finish `ctx.llm` would make of it.
 */
export function describeAdapterConformance(name: string, driver: AdapterConformanceDriver): void {
  describe(`adapter conformance (R-LLM-6): ${name}`, () => {
    let subject: AdapterUnderTest | undefined
    let root: Context | undefined

    beforeEach(async () => {
      subject = await driver.start()
      root = new Context()
      await root.plugin(Llm)
    })

    afterEach(async () => {
      const stopping = subject
      subject = undefined
      root = undefined
      await stopping?.stop?.()
    })

    for (const entry of CONFORMANCE_CASES) {
      const c: ConformanceCase = entry
      const reason = driver.unsupported?.[entry.id]
      if (reason !== undefined) {
        it(`${c.title}: unsupported by ${name}: ${reason}`, () => {
          expect(reason.trim(), 'an unsupported case names its reason').not.toBe('')
        })
        continue
      }
      it(c.title, async () => {
        const run = new CaseRun(subject!, root!)
        for (const via of VIAS) {
          if (c.kind === 'answer') await run.answer(c, via)
          else if (c.kind === 'fail') await run.failure(c, via)
          else await run.held(c, via)
        }
      })
    }
  })
}

/** What `playHeld` does, for each held case (`aborted-before` is played as a whole stream). */
const MOVES: Record<Exclude<HeldCase['kind'], 'aborted-before'>, HeldMove> = {
  abort: 'act',
  cut: 'act',
  'stop-reading': 'stop',
  'abort-waiting': 'act-waiting',
  'stop-waiting': 'stop-waiting',
}

/** One case's calls against one test's adapter. */
class CaseRun {
  constructor(
    private readonly subject: AdapterUnderTest,
    private readonly root: Context,
  ) {}

  async answer(c: AnswerCase, via: Via): Promise<void> {
    const expected = assemble(idealChunks(c.events, c.finish))
    const arranged = await this.subject.arrange({ kind: 'answer', events: c.events, finish: c.finish })
    const played = await this.call(via, arranged, (open) => drain(open))
    this.checkWhole(played, via)
    const got = assemble(played.chunks)
    expect({ content: got.content, finishReason: got.finishReason }, `${via}: the assembled answer`).toEqual({
      content: expected.content,
      finishReason: expected.finishReason,
    })
    if (expected.usage !== undefined) expect(got.usage, `${via}: the last usage snapshot`).toEqual(expected.usage)
    await arranged.released
  }

  async failure(c: FailureCase, via: Via): Promise<void> {
    const behaviour: AdapterBehaviour = { kind: 'fail', failure: c.id }
    if (c.retryAfterMs !== undefined) behaviour.retryAfterMs = c.retryAfterMs
    if (c.events !== undefined) behaviour.events = c.events
    const arranged = await this.subject.arrange(behaviour)
    const played = await this.call(via, arranged, (open) => drain(open))
    this.checkWhole(played, via)
    const failure = expect.objectContaining({
      code: c.id,
      message: anyMessage,
      ...(c.retryAfterMs !== undefined ? { retryAfterMs: c.retryAfterMs } : {}),
    })
    if (c.id === 'MALFORMED_STREAM') {
      // What came before the break may stand (the protocol check above holds it to one id per call).
      expect(outcomeOf(played), `${via}: how the stream ended`).toEqual({ kind: 'error', failure })
    } else {
      expect({ body: bodyOf(played), outcome: outcomeOf(played) }, `${via}: the whole stream`).toEqual({
        body: [],
        outcome: { kind: 'error', failure },
      })
    }
    await arranged.released
  }

  async held(c: HeldCase, via: Via): Promise<void> {
    const controller = new AbortController()
    if (c.kind === 'aborted-before') {
      controller.abort()
      // The call may never reach the provider: nothing to wait for.
      const arranged = await this.subject.arrange({ kind: 'answer', events: c.events, finish: 'stop' })
      const played = await this.call(via, arranged, (open) => drain(open), controller.signal)
      this.checkWhole(played, via)
      expect({ body: bodyOf(played), outcome: outcomeOf(played, controller.signal) }, `${via}: the whole stream`).toEqual({
        body: [],
        outcome: { kind: 'aborted' },
      })
      return
    }
    const move = MOVES[c.kind]
    const content = assemble(idealChunks(c.events)).content
    const arranged = await this.subject.arrange({ kind: 'hold', events: c.events })
    const act = () => {
      if (c.kind === 'abort' || c.kind === 'abort-waiting') return controller.abort()
      if (arranged.cut === undefined) throw new Error('the driver must return cut() from arrange() for a hold behaviour')
      arranged.cut()
    }
    const held = await this.call(via, arranged, (open) => playHeld(open, content, act, move), controller.signal)
    expect(held.reached, `${via}: the held content arrived before the stream ended (${JSON.stringify(held.played.chunks)})`).toBe(true)
    this.checkWhole(held.played, via)
    if (c.kind === 'stop-waiting') {
      const done = { result: expect.objectContaining({ done: true }) }
      // The read that waited ends the stream: through `ctx.llm` as an end; on the adapter's own stream it may also
      // reject (the consumer that stopped does not read it), but it never hands out a chunk.
      const waiting = via === 'ctx.llm' || !('threw' in held.stopped!.waiting) ? done : { threw: expect.anything() }
      expect(held.stopped, `${via}: the waiting read, return() and a read after them`).toEqual({ waiting, returned: done, after: done })
    } else if (c.kind !== 'stop-reading') {
      const outcome =
        c.kind === 'cut' ? { kind: 'error', failure: expect.objectContaining({ code: 'TRANSPORT', message: anyMessage }) } : { kind: 'aborted' }
      expect({ after: bodyOf(held.played).slice(held.before), outcome: outcomeOf(held.played, controller.signal) }, `${via}: after the ${c.kind}`).toEqual({
        after: [],
        outcome,
      })
    }
    // A test whose provider is never released fails on the suite's timeout: the adapter kept the connection (or its
    // stream) open, for instance because its `return()` waited behind the pending read until a deadline.
    await arranged.released
  }

  /** Runs `play` on the arranged adapter's stream, or through `ctx.llm` with the adapter registered for the call. */
  private async call<T>(via: Via, arranged: ArrangedCall, play: (open: () => AsyncIterable<StreamChunk>) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const options: GenerateOptions = {
      provider: this.subject.provider,
      model: this.subject.model,
      messages: [createUserMessage('Hello')],
      tools,
    }
    if (signal !== undefined) options.signal = signal
    if (via === 'adapter') return play(() => arranged.adapter.stream(options))
    const unregister = this.root.llm.registerAdapter([this.subject.provider], arranged.adapter)
    try {
      return await play(() => this.root.llm.stream(options))
    } finally {
      unregister()
    }
  }

  private checkWhole(played: PlayedStream, via: Via): void {
    expect(protocolProblems(played), `${via}: the stream protocol (R-LLM-6)`).toEqual([])
    expect(leakedSecrets(played, this.subject.secrets ?? []), `${via}: secrets in the stream`).toEqual([])
  }
}
