import { isDeepStrictEqual } from 'node:util'
import { createAssembler, toLlmFailure, type ContentBlock, type FinishReason, type StreamChunk } from '@deepseek-ai/dsh-llm'
import type { PlayedStream, StreamEnding } from './protocol'

/** Reads a whole stream (a synchronous throw of the call included), recording how it ended. */
export async function drain(open: () => AsyncIterable<StreamChunk>): Promise<PlayedStream> {
  const chunks: StreamChunk[] = []
  try {
    for await (const chunk of open()) chunks.push(chunk)
  } catch (error) {
    return { chunks, ending: 'threw', error }
  }
  return { chunks, ending: 'ended' }
}

/** A held stream as a test read it: what came before its action and what came after. */
export interface HeldPlay {
  readonly played: PlayedStream
  /** How many chunks had arrived when the test acted (aborted, stopped reading, cut). */
  readonly before: number
  /** Whether the held content arrived in full before the stream ended on its own. */
  readonly reached: boolean
  /**
   * For a stop while a read waited (`stop-waiting`): what that read and the
   * `return()` answered, and what a read after them answers.
   */
  readonly stopped?: { waiting: Settled; returned: Settled; after: Settled }
}

/** How a call of the iterator settled: its result, or its rejection. */
export type Settled = { result: IteratorResult<StreamChunk> } | { threw: unknown }

/**
 * What the test does once the held content has arrived: `act` (abort, cut)
 * and read on; `stop` reading (`return()`); or, `…-waiting`, first start the
 * next read, which waits for the provider (it holds the stream), and then
 * `act` or stop while that read is pending.
 */
export type HeldMove = 'act' | 'stop' | 'act-waiting' | 'stop-waiting'

/**
 * Reads `open()` until the partial content equals `expected` (the held
 * events' content), then makes `move` (see `HeldMove`) and, unless it stopped,
 * reads on to the end. A stream that ends or finishes before the content
 * arrived is reported with `reached: false`.
 */
export async function playHeld(
  open: () => AsyncIterable<StreamChunk>,
  expected: readonly ContentBlock[],
  act: () => void,
  move: HeldMove = 'act',
): Promise<HeldPlay> {
  const chunks: StreamChunk[] = []
  const assembler = createAssembler()
  let iterator: AsyncIterator<StreamChunk> | undefined
  try {
    iterator = open()[Symbol.asyncIterator]()
    while (!isDeepStrictEqual(assembler.partial(), expected)) {
      const next = await iterator.next()
      if (next.done) return { played: { chunks, ending: 'ended' }, before: chunks.length, reached: false }
      chunks.push(next.value)
      assembler.push(next.value)
      if (assembler.settled) return { played: await rest(iterator, chunks), before: chunks.length, reached: false }
    }
  } catch (error) {
    return { played: { chunks, ending: 'threw', error }, before: chunks.length, reached: false }
  }
  const before = chunks.length
  if (move === 'stop') {
    await iterator.return?.()
    return { played: { chunks, ending: 'stopped' }, before, reached: true }
  }
  if (move === 'act') {
    act()
    return { played: await rest(iterator, chunks), before, reached: true }
  }
  // The next read waits: the provider holds the stream. A turn of the event loop lets it reach the network (or
  // whatever it waits on); the contract does not depend on it getting there.
  const waiting = settled(iterator.next())
  await new Promise<void>((resolve) => setImmediate(resolve))
  if (move === 'act-waiting') {
    act()
    const answer = await waiting
    if ('threw' in answer) return { played: { chunks, ending: 'threw', error: answer.threw }, before, reached: true }
    if (answer.result.done) return { played: { chunks, ending: 'ended' }, before, reached: true }
    chunks.push(answer.result.value)
    return { played: await rest(iterator, chunks), before, reached: true }
  }
  const returned = settled(iterator.return?.() ?? Promise.resolve({ done: true, value: undefined }))
  const stopped = { waiting: await waiting, returned: await returned, after: await settled(iterator.next()) }
  return { played: { chunks, ending: 'stopped' }, before, reached: true, stopped }
}

function settled(call: Promise<IteratorResult<StreamChunk>>): Promise<Settled> {
  return call.then(
    (result) => ({ result }),
    (threw: unknown) => ({ threw }),
  )
}

async function rest(iterator: AsyncIterator<StreamChunk>, chunks: StreamChunk[]): Promise<PlayedStream> {
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) chunks.push(next.value)
  } catch (error) {
    return { chunks, ending: 'threw', error }
  }
  return { chunks, ending: 'ended' }
}

/** The chunks before the terminal `finish` (all of them when there is none). */
export function bodyOf(played: PlayedStream): StreamChunk[] {
  const last = played.chunks.at(-1)
  return last?.type === 'finish' ? played.chunks.slice(0, -1) : [...played.chunks]
}

/**
 * How the stream ended, as `ctx.llm` reports it (R-LLM-4): its terminal
 * `finish`, or its throw classified the way `ctx.llm` classifies one
 * (`aborted` once the call's signal aborted, else an `error` with the
 * classified failure). `undefined` when it has neither.
 */
export function outcomeOf(played: PlayedStream, signal?: AbortSignal): FinishReason | undefined {
  const last = played.chunks.at(-1)
  if (last?.type === 'finish') return last.reason
  if (played.ending !== 'threw') return undefined
  if (signal?.aborted) return { kind: 'aborted' }
  const failure = toLlmFailure(played.error)
  return failure.code === 'ABORTED' ? { kind: 'aborted', failure } : { kind: 'error', failure }
}

/**
 * Which secrets appear anywhere in what the stream yielded or threw, named by
 * their position (`secret 1 of 2`), never by their value: the report of a
 * leak must not leak.
 */
export function leakedSecrets(played: PlayedStream, secrets: readonly string[]): string[] {
  if (secrets.length === 0) return []
  let text = JSON.stringify(played.chunks)
  if (played.ending === 'threw') {
    const error = played.error as { message?: unknown; stack?: unknown } | null
    text += `\n${String(played.error)}\n${String(error?.message)}\n${String(error?.stack)}`
  }
  return secrets.flatMap((secret, i) => (text.includes(secret) ? [`secret ${i + 1} of ${secrets.length}`] : []))
}

export type { PlayedStream, StreamEnding }
