/** Small measuring helpers shared by the scenarios. */

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
}

/**
 * Times `work`. Nothing else of the bench runs in the process meanwhile (no
 * `gc` performance observer either: it would add work to every collection,
 * most to the subject that collects most often; a scratch driver can record
 * GC pauses).
 */
export async function timed(work: () => Promise<void>): Promise<Timing> {
  const faults0 = process.resourceUsage().minorPageFault
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await work()
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000, faults: process.resourceUsage().minorPageFault - faults0 }
}

/**
 * The table row of a cold round's minor page faults (scenarios 1, 2 and 4):
 * how much fresh memory it touched (see docs/benchmarks.md, "The cold round
 * on this VM").
 */
export const COLD_ROUND_METRICS = [{ key: 'faults', label: 'minor page faults (cold round)', unit: '', digits: 0, compare: true }] as const

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
