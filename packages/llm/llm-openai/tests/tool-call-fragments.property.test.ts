import fc from 'fast-check'
import { assemble, type StreamChunk } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { StreamDecoder } from '../src/stream-decoder'

/** One tool call as the model meant it, and where the server cuts its arguments into fragments. */
const toolCall = fc.record({
  name: fc.constantFrom('read_file', 'list_dir', 'echo'),
  args: fc.json({ maxDepth: 2 }),
  cuts: fc.array(fc.nat(), { maxLength: 4 }),
})

interface Fragment {
  call: number
  /** The fragment's position within its call. */
  at: number
  text: string
}

function fragments(args: string, cuts: number[], call: number): Fragment[] {
  const points = [...new Set(cuts.map((n) => n % (args.length + 1)))].sort((a, b) => a - b)
  const out: Fragment[] = []
  let from = 0
  for (const point of [...points, args.length]) {
    out.push({ call, at: out.length, text: args.slice(from, point) })
    from = point
  }
  return out
}

describe('tool-call fragments, however a server cuts and orders them, assemble to the calls it meant', () => {
  it('interleaved by distinct indices (the name with the first fragment, or with the second), or all on index 0 one call after another (Ollama)', () => {
    fc.assert(
      fc.property(
        fc.array(toolCall, { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.constantFrom('indexed', 'indexed, name late', 'index 0'),
        (calls, picks, shape) => {
          const perCall = calls.map((c, i) => fragments(c.args, c.cuts, i))
          // A call whose name would come with its second fragment needs one.
          if (shape === 'indexed, name late' && perCall.some((f) => f.length < 2)) return
          const order: Fragment[] = []
          if (shape === 'index 0') for (const f of perCall) order.push(...f)
          else {
            const queues = perCall.map((f) => [...f])
            for (let k = 0; queues.some((q) => q.length > 0); k++) {
              const live = queues.flatMap((q, i) => (q.length > 0 ? [i] : []))
              order.push(queues[live[(picks[k] ?? 0) % live.length]!]!.shift()!)
            }
          }
          const decoder = new StreamDecoder('fake')
          const out: StreamChunk[] = []
          for (const { call, at, text } of order) {
            const nameAt = shape === 'indexed, name late' ? 1 : 0
            const fn = { ...(at === nameAt ? { name: calls[call]!.name } : {}), arguments: text }
            const delta = { index: shape === 'index 0' ? 0 : call, ...(at === 0 ? { id: `call_${call}`, type: 'function' } : {}), function: fn }
            decoder.push({ choices: [{ index: 0, delta: { tool_calls: [delta] } }] }, out)
          }
          decoder.push({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] }, out)
          const end = decoder.end()
          expect(end.kind).toBe('finish')
          if (end.kind !== 'finish') return
          const firstSeen = [...new Set(order.map((f) => f.call))]
          expect(assemble([...out, ...end.chunks]).content).toEqual(
            firstSeen.map((i) => ({ type: 'tool-call', id: `call_${i}`, name: calls[i]!.name, arguments: calls[i]!.args })),
          )
        },
      ),
      { numRuns: 1000 },
    )
  })
})
