import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import { FAILURE_CLASSES, type AnswerFinish, type FailureClass, type ProviderEvent } from './behaviour'

/** An answer the adapter must stream and that must assemble into the expected message. */
export interface AnswerCase {
  readonly kind: 'answer'
  readonly id: string
  readonly title: string
  readonly events: readonly ProviderEvent[]
  readonly finish: AnswerFinish
}

/** A failure the adapter must report as one error finish of its class. */
export interface FailureCase {
  readonly kind: 'fail'
  readonly id: FailureClass
  readonly title: string
  readonly retryAfterMs?: number
  readonly events?: readonly ProviderEvent[]
}

/**
 * A held stream (its `events` streamed, then nothing) that the consumer
 * aborts, stops reading, or that breaks (`cut`); the same abort or stop made
 * while the consumer's next read waits for the provider (`abort-waiting`,
 * `stop-waiting`); or a call whose signal is already aborted.
 */
export interface HeldCase {
  readonly kind: 'abort' | 'stop-reading' | 'abort-waiting' | 'stop-waiting' | 'cut' | 'aborted-before'
  readonly id: string
  readonly title: string
  readonly events: readonly ProviderEvent[]
}

export type ConformanceCase = AnswerCase | FailureCase | HeldCase

const text = (value: string): ProviderEvent => ({ type: 'text', text: value })
const usage = (value: TokenUsage): ProviderEvent => ({ type: 'usage', usage: value })

const failureTitles: Record<FailureClass, string> = {
  AUTH: 'the provider refuses the credentials',
  RATE_LIMIT: 'the provider rate-limits the call and asks to wait: the failure carries retryAfterMs',
  SERVER: 'the provider has a server error',
  TIMEOUT: 'the provider accepts the request and never answers: the adapter\'s deadline ends the call',
  TRANSPORT: 'the connection fails before any answer',
  CONTEXT_OVERFLOW: 'the provider refuses the request as too long for the context window',
  BAD_REQUEST: 'the provider refuses the request as invalid',
  EMPTY_RESPONSE: 'the provider ends its answer without producing anything',
  MALFORMED_STREAM: 'the provider streams two tool calls with the same id',
}

/** The hint a `RATE_LIMIT` case asks the provider to give. */
const RETRY_AFTER_MS = 1500

/** Two tool calls that share an id, as a broken provider streams them. */
const duplicateIds: readonly ProviderEvent[] = [
  { type: 'tool-call', call: 0, id: 'call_same', name: 'read', arguments: '{"path":"a.ts"}' },
  { type: 'tool-call', call: 1, id: 'call_same', name: 'read', arguments: '{"path":"b.ts"}' },
]

/**
 * Every case of the suite, in the order it runs them. Each answer case's
 * expectation is derived from its events (`idealChunks`); see
 * `describeAdapterConformance` for what each kind checks.
 */
export const CONFORMANCE_CASES = [
  {
    kind: 'answer',
    id: 'text',
    title: 'text: the deltas of one block assemble into one text block; finish stop',
    events: [text('Hello'), text(', wor'), text('ld!')],
    finish: 'stop',
  },
  {
    kind: 'answer',
    id: 'reasoning',
    title: 'reasoning: a reasoning block, then the text block; finish stop',
    events: [
      { type: 'reasoning', text: 'The user greets me.' },
      { type: 'reasoning', text: ' A short answer will do.' },
      text('Hi'),
      text(' there.'),
    ],
    finish: 'stop',
  },
  {
    kind: 'answer',
    id: 'tool-call',
    title: 'a tool call with streamed arguments: its first delta carries id and name; finish tool-calls',
    events: [
      { type: 'tool-call', call: 0, id: 'call_read_1', name: 'read', arguments: '{"pa' },
      { type: 'tool-call', call: 0, arguments: 'th":"src/' },
      { type: 'tool-call', call: 0, arguments: 'index.ts"}' },
    ],
    finish: 'tool-calls',
  },
  {
    kind: 'answer',
    id: 'parallel-tool-calls',
    title: 'parallel tool calls with interleaved argument deltas: one block per call, in order of first appearance',
    events: [
      text('Reading both.'),
      { type: 'tool-call', call: 0, id: 'call_a', name: 'read', arguments: '{"path":' },
      { type: 'tool-call', call: 1, id: 'call_b', name: 'grep', arguments: '{"pattern"' },
      { type: 'tool-call', call: 0, arguments: '"a.ts"}' },
      { type: 'tool-call', call: 1, arguments: ':"TODO"}' },
    ],
    finish: 'tool-calls',
  },
  {
    kind: 'answer',
    id: 'usage',
    title: 'usage: cumulative snapshots, and the last one wins',
    events: [
      text('Counting'),
      usage({ inputTokens: 20, outputTokens: 1 }),
      text(' tokens.'),
      usage({ inputTokens: 20, outputTokens: 4, cacheReadTokens: 8, reasoningTokens: 2 }),
    ],
    finish: 'stop',
  },
  {
    kind: 'answer',
    id: 'max-tokens',
    title: 'finish max-tokens: an answer cut at the output limit keeps its text',
    events: [text('The list goes on:'), text(' one, two,')],
    finish: 'max-tokens',
  },
  {
    kind: 'abort',
    id: 'abort-mid-stream',
    title: 'finish aborted: an abort mid-stream ends the stream at once with aborted, and the provider is released',
    events: [text('Once upon'), text(' a time')],
  },
  {
    kind: 'aborted-before',
    id: 'abort-before-call',
    title: 'finish aborted: a call whose signal is already aborted ends with aborted and nothing else',
    events: [text('never asked for')],
  },
  {
    kind: 'stop-reading',
    id: 'stop-reading',
    title: 'a consumer that stops reading mid-stream releases the provider',
    events: [text('First words')],
  },
  {
    kind: 'abort-waiting',
    id: 'abort-while-waiting',
    title: 'finish aborted: an abort while the next read waits for the provider ends that read with aborted at once, and the provider is released',
    events: [text('Hold on')],
  },
  {
    kind: 'stop-waiting',
    id: 'stop-while-waiting',
    title: 'a consumer that stops reading while its next read waits for the provider releases the provider at once, and both calls end the stream',
    events: [text('Wait for it')],
  },
  {
    kind: 'cut',
    id: 'stream-breaks',
    title: 'a stream that breaks mid-answer ends, through ctx.llm, with one classified TRANSPORT error after its content (R-LLM-4)',
    events: [text('Half an'), text(' answer')],
  },
  ...FAILURE_CLASSES.map(
    (code): FailureCase => ({
      kind: 'fail',
      id: code,
      title: `finish error ${code}: ${failureTitles[code]}`,
      ...(code === 'RATE_LIMIT' ? { retryAfterMs: RETRY_AFTER_MS } : {}),
      ...(code === 'MALFORMED_STREAM' ? { events: duplicateIds } : {}),
    }),
  ),
] as const satisfies readonly ConformanceCase[]

/** The id of a case: what `AdapterConformanceDriver.unsupported` is keyed by. */
export type ConformanceCaseId = (typeof CONFORMANCE_CASES)[number]['id']
