/** Small measuring helpers shared by the scenarios. */
import { PerformanceObserver } from 'node:perf_hooks'

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** What `timed` measures of one piece of work. */
export interface Timing {
  wallMs: number
  /** Process CPU time (user + system, all threads). */
  cpuMs: number
  /** Minor page faults the process took meanwhile: first touches of memory, ~13 µs each on the VM of docs/benchmarks.md. */
  faults: number
  /** Garbage-collection pauses of the main thread that started meanwhile, in milliseconds. */
  gcMs: number
}

/** The process's GC pauses so far (start time, duration), kept while `timed` runs. */
const pauses: Array<{ startTime: number; duration: number }> = []
let observer: PerformanceObserver | undefined

/**
 * Times `work`. The GC pauses are reported by Node asynchronously, so after
 * the work (outside the timed region) it waits a few milliseconds for them.
 */
export async function timed(work: () => Promise<void>): Promise<Timing> {
  observer ??= new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ startTime: entry.startTime, duration: entry.duration })
  })
  observer.observe({ entryTypes: ['gc'] })
  pauses.length = 0
  const faults0 = process.resourceUsage().minorPageFault
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await work()
  const t1 = performance.now()
  const cpu = process.cpuUsage(cpu0)
  const faults = process.resourceUsage().minorPageFault - faults0
  await new Promise((resolve) => setTimeout(resolve, 20))
  observer.disconnect()
  const gcMs = pauses.reduce((sum, pause) => (pause.startTime >= t0 && pause.startTime <= t1 ? sum + pause.duration : sum), 0)
  return { wallMs: t1 - t0, cpuMs: (cpu.user + cpu.system) / 1000, faults, gcMs }
}

/**
 * The table rows of what a cold round spent outside the subject's own code
 * (scenarios 1, 2 and 4): see docs/benchmarks.md, "Page faults and GC in the
 * cold round".
 */
export const COLD_ROUND_METRICS = [
  { key: 'faults', label: 'minor page faults (cold round)', unit: '', digits: 0, compare: true },
  { key: 'gcMs', label: 'GC pauses (cold round)', unit: 'ms', digits: 0, compare: true },
] as const

/**
 * Heap in use after full garbage collections. Needs `--expose-gc` (the
 * orchestrator starts every child with it); two passes let weak references
 * and finalizers settle.
 */
export function heapAfterGc(): number {
  const gc = (globalThis as { gc?: () => void }).gc
  if (!gc) throw new Error('heapAfterGc needs node --expose-gc (run the bench through `pnpm bench`)')
  gc()
  gc()
  return process.memoryUsage().heapUsed
}

/** Peak resident set size of this process so far, in MB. */
export function peakRssMb(): number {
  return process.resourceUsage().maxRSS / 1024
}
