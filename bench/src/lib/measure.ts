/** Small measuring helpers shared by the scenarios. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** Wall and process CPU time (user + system, all threads) of `work`, in milliseconds. */
export async function timed(work: () => Promise<void>): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  await work()
  const wallMs = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  return { wallMs, cpuMs: (cpu.user + cpu.system) / 1000 }
}

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
