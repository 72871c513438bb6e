/**
 * Lists the top self-time functions of a V8 CPU profile (`node --cpu-prof`,
 * or `pnpm bench --profile`), grouped by function and source location, and
 * optionally the callers of one function:
 *
 *   node --import tsx bench/src/profile-summary.ts <file.cpuprofile> [top=30] [--from-ms <ms>] [--to-ms <ms>] [--callers <text> [--depth <n>]]
 *
 * `--from-ms` / `--to-ms` keep the samples in that window of the profile's
 * clock (milliseconds since it started), e.g. to skip module loading and
 * warm-up: asynchronous code has no caller frames in a CPU profile, so time
 * is the practical way to isolate the measured part.
 * `--callers` attributes the self time of every function whose label
 * (`name file:line`) contains the text to its callers, `--depth` frames up
 * (default 2).
 */
import { readFileSync } from 'node:fs'
import { parseArgs } from 'node:util'

interface ProfileNode {
  id: number
  callFrame: { functionName: string; url: string; lineNumber: number }
  children?: number[]
}

interface Profile {
  nodes: ProfileNode[]
  samples: number[]
  timeDeltas: number[]
}

const { positionals, values } = parseArgs({ allowPositionals: true, options: { callers: { type: 'string' }, 'from-ms': { type: 'string' }, 'to-ms': { type: 'string' }, depth: { type: 'string' } } })
const [file, topArg] = positionals
if (!file) throw new Error('usage: profile-summary.ts <file.cpuprofile> [top] [--from-ms <ms>] [--to-ms <ms>] [--callers <text> [--depth <n>]]')
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile

const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const parent = new Map<number, number>()
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id)

const fromUs = Number(values['from-ms'] ?? 0) * 1000
const toUs = values['to-ms'] === undefined ? Infinity : Number(values['to-ms']) * 1000

/** Microseconds of samples whose leaf is each node. */
const selfTime = new Map<number, number>()
let clock = 0
profile.samples.forEach((id, i) => {
  const delta = profile.timeDeltas[i] ?? 0
  clock += delta
  if (clock >= fromUs && clock < toUs) selfTime.set(id, (selfTime.get(id) ?? 0) + delta)
})

function label(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame
  const where = url.replace(/^.*\/(packages|node_modules|bench)\//, '$1/').replace(/^file:\/\//, '')
  return `${functionName || '(anonymous)'} ${where}${where ? `:${lineNumber + 1}` : ''}`
}

let total = 0
const byLabel = new Map<string, number>()
for (const [id, time] of selfTime) {
  total += time
  const key = label(byId.get(id)!)
  byLabel.set(key, (byLabel.get(key) ?? 0) + time)
}

const ms = (us: number) => (us / 1000).toFixed(0).padStart(7)
const pct = (us: number) => ((100 * us) / total).toFixed(1).padStart(5)
console.log(`total sampled: ${(total / 1000).toFixed(0)} ms`)
for (const [key, time] of [...byLabel].sort((a, b) => b[1] - a[1]).slice(0, Number(topArg ?? 30))) {
  console.log(`${ms(time)} ms ${pct(time)}%  ${key}`)
}

if (values.callers) {
  // Self time of the matching functions, attributed to their callers (`--depth` frames up).
  const depth = Number(values.depth ?? 2)
  const callers = new Map<string, number>()
  for (const [id, time] of selfTime) {
    if (!label(byId.get(id)!).includes(values.callers)) continue
    const path: string[] = []
    for (let up = parent.get(id); up !== undefined && path.length < depth; up = parent.get(up)) path.push(label(byId.get(up)!))
    const key = path.join(' ← ') || '(root)'
    callers.set(key, (callers.get(key) ?? 0) + time)
  }
  console.log(`\ncallers of ${values.callers} (by its self time):`)
  for (const [key, time] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(`${ms(time)} ms ${pct(time)}%  ${key}`)
}
