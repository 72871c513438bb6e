/**
 * How a process warms up: the cost of a text turn (scenario 1's workload) in
 * windows of consecutive turns, for a first agent and then for a new session
 * created after it in the same process. Not a scenario of `pnpm bench`: it
 * answers "is the per-turn cost a property of the session or of the process?"
 *
 *   node --conditions=dsh-source --import tsx bench/src/warm-up-curve.ts [turns=3000] [window=500]
 *
 * Per window: wall µs per turn, process CPU µs per turn (above wall while V8's
 * compiler and GC threads work), and the GC pauses seen.
 */
import { PerformanceObserver } from 'node:perf_hooks'
import { answerResponder, spine, turn } from './subjects/dsh.ts'

const turns = Number(process.argv[2] ?? 3000)
const window = Number(process.argv[3] ?? 500)
if (!(turns > 0 && window > 0)) throw new Error('usage: warm-up-curve.ts [turns > 0] [window > 0]')

let gcPauses = 0
let gcMs = 0
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    gcPauses++
    gcMs += entry.duration
  }
}).observe({ entryTypes: ['gc'] })

const subject = await spine({ respond: answerResponder })

async function curve(id: string, count: number): Promise<void> {
  const { agent } = await subject.create(id)
  for (let done = 0; done < count; done += window) {
    const size = Math.min(window, count - done)
    gcPauses = 0
    gcMs = 0
    const cpu = process.cpuUsage()
    const start = performance.now()
    for (let i = 0; i < size; i++) await turn(agent, 'hi')
    const wallUs = ((performance.now() - start) * 1000) / size
    const used = process.cpuUsage(cpu)
    // Let the GC observer hear this window's pauses before they are reported.
    await new Promise((resolve) => setImmediate(resolve))
    const cpuUs = (used.user + used.system) / size
    console.log(
      `${id} turns ${done + 1}-${done + size}: ${wallUs.toFixed(0)} µs wall, ${cpuUs.toFixed(0)} µs CPU per turn; ${gcPauses} GC pauses, ${((gcMs * 1000) / size).toFixed(0)} µs per turn`,
    )
  }
}

try {
  await curve('first-agent', turns)
  await curve('new-session', Math.min(turns, 2 * window))
} finally {
  await subject.dispose()
}
