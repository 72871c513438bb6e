/**
 * Measures the ways `deriveMessages()` can hand out a history that later
 * appends do not change (issue 15.4): the cost of one step's derivation, and
 * the cost of an adapter reading the whole snapshot, at 100, 10,000 and
 * 100,000 messages. From the repository root:
 *
 *   node --conditions=dsh-source --import tsx packages/core/session/bench/history-snapshot-bench.ts [sizes]
 *
 * Each variant and size runs in its own child process, so that the read
 * functions' inline caches see one kind of array (in one process, a function
 * that has seen plain arrays and proxies is slower on both).
 *
 * Variants:
 * - live: the session's own growing array (what the loop passed before; not a
 *   snapshot at all, the floor).
 * - copy: a frozen copy per derivation, `Object.freeze(entries.slice())`.
 * - snapshot: what dsh-session ships (`createHistorySnapshot`): a proxy over
 *   the shared append-only array with its length fixed, whose methods read the
 *   array directly.
 * - bare proxy: a proxy answering only index, `length`, `in` and writes, so
 *   every read goes through `Array.prototype` and the traps (what the method
 *   overrides buy).
 *
 * One derivation is "append one message, then derive" (the loop's step). The
 * reads are those an adapter does: `for…of`, `map` to wire objects, an index
 * loop, spreading, `JSON.stringify`. Figures are process CPU time per call,
 * medians of 5 samples of about 100 ms each.
 */
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { createUserMessage, type Message } from '@deepseek-ai/dsh-llm'
import { createHistorySnapshot } from '../src/log/history-snapshot'

const [sizeArg, child] = process.argv.slice(2)
const sizes = (sizeArg ?? '100,10000,100000').split(',').map(Number)

interface Variant {
  name: string
  /** Returns the reader's view of the first `length` entries of `entries`. */
  derive(entries: readonly Message[], length: number, history: object): readonly Message[]
}

const variants: Variant[] = [
  { name: 'live', derive: (entries) => entries },
  { name: 'copy', derive: (entries) => Object.freeze(entries.slice()) },
  { name: 'snapshot', derive: createHistorySnapshot },
  {
    name: 'bare proxy',
    derive(entries, length) {
      return new Proxy([] as Message[], {
        get(target, key, receiver) {
          if (typeof key === 'string') {
            const index = key.length > 0 && key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57 ? Number(key) : -1
            if (index >= 0) return index < length ? entries[index] : undefined
            if (key === 'length') return length
          }
          return Reflect.get(target, key, receiver)
        },
        has(target, key) {
          if (typeof key === 'string' && key.length > 0 && key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57) return Number(key) < length
          return Reflect.has(target, key)
        },
        set() {
          throw new TypeError('read-only')
        },
      }) as readonly Message[]
    },
  },
]

const message = (i: number): Message => createUserMessage(`message ${i}: ${'lorem ipsum '.repeat(4)}`)

/**
 * ns of process CPU time per call of `fn`: the median of 5 samples of about
 * 100 ms each (CPU time, because the machine is shared: wall time counts the
 * time slices other processes take).
 */
function measure(fn: () => unknown): number {
  const cpu = () => {
    const used = process.cpuUsage()
    return (used.user + used.system) * 1000
  }
  let calls = 1
  // Calibrate (and warm up): double until one batch takes 20 ms.
  for (;;) {
    const start = cpu()
    for (let i = 0; i < calls; i++) sink(fn())
    if (cpu() - start > 2e7) break
    calls *= 2
  }
  calls *= 5
  const samples: number[] = []
  for (let s = 0; s < 5; s++) {
    const start = cpu()
    for (let i = 0; i < calls; i++) sink(fn())
    samples.push((cpu() - start) / calls)
  }
  samples.sort((a, b) => a - b)
  return samples[2]!
}

let sunk = 0
function sink(value: unknown): void {
  if (value === sunk) sunk++
}

const reads: Array<[string, (messages: readonly Message[]) => unknown]> = [
  [
    'for…of',
    (messages) => {
      let n = 0
      for (const m of messages) n += m.content.length
      return n
    },
  ],
  ['map to wire', (messages) => messages.map((m) => ({ role: m.role, content: m.content }))],
  [
    'index loop',
    (messages) => {
      let n = 0
      for (let i = 0; i < messages.length; i++) n += messages[i]!.content.length
      return n
    },
  ],
  ['spread', (messages) => [...messages]],
  [
    'for…of a slice()',
    (messages) => {
      let n = 0
      for (const m of messages.slice()) n += m.content.length
      return n
    },
  ],
  ['JSON.stringify', (messages) => JSON.stringify(messages)],
]

const fmt = (ns: number) => (ns >= 1e6 ? `${(ns / 1e6).toFixed(2)} ms` : ns >= 1e3 ? `${(ns / 1e3).toFixed(1)} µs` : `${ns.toFixed(0)} ns`)

/** The costs of one variant at one size: one derivation, then each read, in ns. */
function run(variant: Variant, size: number): number[] {
  const pool = Array.from({ length: size + 1 }, (_, i) => message(i))
  // One step: the history grows by one message, then the loop derives. The array is kept at
  // `size` entries (the last one is replaced) so that every sample measures the same length.
  const entries = pool.slice(0, size)
  const history = {}
  let flip = 0
  const derive = measure(() => {
    entries[size - 1] = pool[size - 1 + (flip ^= 1)]!
    return variant.derive(entries, size, history).length
  })
  const snapshot = variant.derive(entries, size, history)
  return [derive, ...reads.map(([, read]) => measure(() => read(snapshot)))]
}

if (child !== undefined) {
  const variant = variants.find((candidate) => candidate.name === child)!
  process.stdout.write(JSON.stringify(run(variant, sizes[0]!)))
} else {
  const self = fileURLToPath(import.meta.url)
  for (const size of sizes) {
    console.log(`\n${size.toLocaleString('en-US')} messages (ratio: to live)\n`)
    console.log(`| variant | derive (append 1 + derive) | ${reads.map(([name]) => name).join(' | ')} |`)
    console.log(`|---|${'---:|'.repeat(reads.length + 1)}`)
    let base: number[] | undefined
    for (const variant of variants) {
      const result = spawnSync(process.execPath, [...process.execArgv, self, String(size), variant.name], { encoding: 'utf8' })
      if (result.status !== 0) throw new Error(`${variant.name} at ${size} failed: ${result.stderr}`)
      const costs = JSON.parse(result.stdout) as number[]
      base ??= costs
      console.log(`| ${variant.name} | ${costs.map((cost, i) => `${fmt(cost)} (${(cost / base![i]!).toFixed(1)}×)`).join(' | ')} |`)
    }
  }
}
