import { AgentError, type AgentLoadReport } from '@deepseek-ai/dsh-agent'
import { SessionId, type LoadedSession } from '@deepseek-ai/dsh-session'

export function invalid(message: string): AgentError {
  return new AgentError('INVALID_OPTIONS', message)
}

/** How a create/resume call reads in messages: `create("a")`, `resume("b")`. */
export function operation(name: string, id: unknown): string {
  return typeof id === 'string' ? `${name}(${JSON.stringify(id)})` : `${name}()`
}

export function checkId(id: unknown): string {
  if (typeof id !== 'string' || id.length === 0) throw invalid('a session id must be a non-empty string')
  return id
}

export function checkMeta(meta: unknown): { cwd?: string; parentSession?: SessionId } {
  if (meta === null || typeof meta !== 'object' || Array.isArray(meta)) throw invalid('meta must be an object')
  const { cwd, parentSession } = meta as { cwd?: unknown; parentSession?: unknown }
  if (cwd !== undefined && typeof cwd !== 'string') throw invalid('meta.cwd must be a string')
  if (parentSession !== undefined && typeof parentSession !== 'string') throw invalid('meta.parentSession must be a string')
  const out: { cwd?: string; parentSession?: SessionId } = {}
  if (cwd !== undefined) out.cwd = cwd
  if (parentSession !== undefined) out.parentSession = SessionId(parentSession)
  return out
}

/**
 * The load report of a resumed agent: a frozen snapshot of the backend's
 * `repairs` and `warnings` (a backend that reports neither gets empty lists).
 */
export function loadReport(loaded: LoadedSession): AgentLoadReport {
  const snapshot = <T>(items: readonly T[] | undefined): readonly T[] =>
    Object.freeze((items ?? []).map((item) => Object.freeze(structuredClone(item))))
  return Object.freeze({ repairs: snapshot(loaded.repairs), warnings: snapshot(loaded.warnings) })
}

/** Whether a load report has anything to say. */
export function reportsSomething(report: AgentLoadReport | undefined): report is AgentLoadReport {
  return report !== undefined && (report.repairs.length > 0 || report.warnings.length > 0)
}

/**
 * What a load reported, for the log of a resume that was rolled back after
 * its load (a refused prepare, a failed setup, a veto, an unload): the
 * backend already cut the torn tail and stored the repairs, so the next load
 * finds a clean file and nobody else will ever say so. One line per warning
 * and repair; `undefined` when the report says nothing.
 */
export function droppedReport(id: string, report: AgentLoadReport | undefined, error: unknown): string | undefined {
  if (!reportsSomething(report)) return undefined
  const lines = [
    ...report.warnings.map((warning) => `  ${warning.code}: ${warning.message}`),
    ...report.repairs.map((repair) => `  repaired at seq ${repair.seq} (${repair.type}): ${repair.detail}`),
  ]
  return `the resume of session ${id} was rolled back (${causeOf(error)}); what its load reported stays in the stored session:\n${lines.join('\n')}`
}

/** A rollback's cause as a clause, from the error that caused it. */
export function causeOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
