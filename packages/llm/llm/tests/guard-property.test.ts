// The stream guard (R-LLM-4, R-LLM-6) over random sources and consumers: a source answering each
// pull with a chunk, a finish, the end, a throw, a rejection or no iterator result at all (a
// promise, a plain result, or a promise the test releases later; in call order, as an async
// generator answers), read by pulls made with and without waiting or by the pump, with return()
// and the caller's abort at any moment. Whatever happens, the consumer sees at most one finish,
// nothing after it or after the end, never a rejection, and the source is pulled no more once it
// got return(), which it gets at most once. Found 0fd9201's and af2bd8f's defects when run on the
// code before them.
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { LlmError, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { mountLlm } from './helpers'

type Kind = 'chunk' | 'finish' | 'end' | 'throw' | 'reject' | 'nothing'
type How = 'promise' | 'plain' | 'held'
type Op = 'next' | 'return' | 'abort' | 'tick' | 'release'

const answers = fc.array(
  fc.record({
    kind: fc.constantFrom<Kind>('chunk', 'chunk', 'chunk', 'finish', 'end', 'throw', 'reject', 'nothing'),
    how: fc.constantFrom<How>('promise', 'plain', 'held'),
  }),
  { maxLength: 8 },
)
const ops = fc.array(fc.constantFrom<Op>('next', 'next', 'next', 'return', 'abort', 'tick', 'release'), { maxLength: 20 })
const turn = () => new Promise<void>((resolve) => setImmediate(resolve))

/** A hand-written source playing `script`, each answer settling after the one before (call order). */
function scriptedSource(script: { kind: Kind; how: How }[]) {
  const held: (() => void)[] = []
  const seen = { pulls: 0, returns: 0, pulledAfterReturn: false }
  let last: Promise<unknown> | undefined
  const failure = () => new LlmError({ code: 'TRANSPORT', message: 'socket closed' })
  const iterator = {
    next(): unknown {
      if (seen.returns > 0) seen.pulledAfterReturn = true
      const { kind, how } = script[seen.pulls++] ?? { kind: 'end', how: 'plain' }
      const result = () =>
        kind === 'nothing'
          ? undefined
          : kind === 'end'
            ? { done: true, value: undefined }
            : { done: false, value: kind === 'finish' ? { type: 'finish', reason: { kind: 'stop' } } : { type: 'text-delta', index: 0, text: `${seen.pulls}` } }
      const before = last
      if (before === undefined && kind === 'throw') throw failure()
      if (before === undefined && how === 'plain' && kind !== 'reject') return result()
      const own = (): Promise<unknown> =>
        kind === 'throw' || kind === 'reject'
          ? Promise.reject(failure())
          : how === 'held'
            ? new Promise((resolve) => held.push(() => resolve(result())))
            : Promise.resolve(result())
      const answer = before === undefined ? own() : before.then(own, own)
      const settled: Promise<unknown> = answer.finally(() => {
        if (last === settled) last = undefined
      })
      settled.catch(() => {})
      last = settled
      return answer
    },
    return() {
      seen.returns++
      return Promise.resolve({ done: true, value: undefined })
    },
  }
  return { iterator, held, seen }
}

describe('the stream guard over random sources and consumers', () => {
  it('one finish at most, nothing after it or the end, no rejection; the source is stopped at most once and not pulled after', async () => {
    const root = await mountLlm()
    let n = 0
    await fc.assert(
      fc.asyncProperty(answers, ops, fc.boolean(), async (script, program, pumped) => {
        const { iterator, held, seen } = scriptedSource(script)
        const provider = `p${n++}`
        const dispose = root.llm.registerAdapter([provider], { stream: () => ({ [Symbol.asyncIterator]: () => iterator }) as never })
        const controller = new AbortController()
        const call = await root.llm.prepareCall({ provider, model: 'm' })
        const stream = call.stream({ messages: [], signal: controller.signal }) as AsyncIterableIterator<StreamChunk> & {
          pump(sink: (chunk: StreamChunk) => boolean): Promise<void> | undefined
        }
        const results: unknown[] = []
        const waits: Promise<unknown>[] = []
        let pumping = false
        for (const op of program) {
          if (op === 'next' && pumped && !pumping) {
            pumping = true
            waits.push(Promise.resolve(stream.pump((chunk) => results.push({ done: false, value: chunk }) > 0)).catch((error) => results.push({ rejected: String(error) })))
          } else if (op === 'next' && !pumped) {
            const at = results.push(undefined) - 1
            waits.push(stream.next().then((result) => (results[at] = result), (error) => (results[at] = { rejected: String(error) })))
          } else if (op === 'return') waits.push(stream.return!())
          else if (op === 'abort') controller.abort()
          else if (op === 'release') held.shift()?.()
          else if (op === 'tick') await turn()
        }
        controller.abort()
        for (let i = 0; i < 10; i++) {
          while (held.length > 0) held.shift()!()
          await turn()
        }
        await Promise.all(waits)
        dispose()
        let finishes = 0
        let ended = false
        const broken: string[] = []
        for (const result of results as (IteratorResult<StreamChunk> | { rejected: string })[]) {
          if ('rejected' in result) broken.push(`rejected: ${result.rejected}`)
          else if (result.done) ended = true
          else if (ended || finishes > 0) broken.push(`a ${result.value.type} after the ${ended ? 'end' : 'finish'}`)
          else if (result.value.type === 'finish') finishes++
        }
        if (seen.returns > 1) broken.push(`return() called ${seen.returns} times`)
        if (seen.pulledAfterReturn) broken.push('pulled after return()')
        expect(broken).toEqual([])
      }),
      { numRuns: 1500 },
    )
  })
})
