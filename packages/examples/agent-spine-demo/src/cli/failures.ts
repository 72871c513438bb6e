import type { AgentHandle, AgentLoadReport } from '@deepseek-ai/dsh-agent'

/**
 * The `agent/error` codes after which the session's log is no longer being
 * saved (the agent is failed: it takes no more work until disposed). A run
 * that saw one exits non-zero and never offers `--resume` of what it could
 * not save.
 */
export const PERSISTENCE_CODES: ReadonlySet<string> = new Set(['PERSISTENCE_FAILED', 'APPEND_REFUSED'])

/** One `agent/error`, as the command line reports it. */
export interface AgentFailure {
  /** The error's `code` (`PERSISTENCE_FAILED`, `APPEND_REFUSED`, an LLM code, …); `ERROR` when it has none. */
  code: string
  message: string
  turn: number
  step: number | undefined
  /** The log stopped being saved (see `PERSISTENCE_CODES`). */
  persistence: boolean
}

/** Reads an `agent/error` payload (an `AgentError`, an `LlmError`, anything thrown). */
export function agentFailure(turn: number, step: number | undefined, error: unknown): AgentFailure {
  const code = codeOf(error) ?? 'ERROR'
  const message = error instanceof Error ? error.message : String(error)
  return { code, message, turn, step, persistence: PERSISTENCE_CODES.has(code) }
}

/** The string `code` of an error, if it has one. */
export function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code
  return typeof code === 'string' && code ? code : undefined
}

/**
 * The load report of a resumed agent (`AgentHandle.loadReport`: what the
 * persistence backend repaired and warned about); `undefined` for a created
 * agent and for a load that found nothing.
 */
export function loadReportOf(handle: AgentHandle): AgentLoadReport | undefined {
  const report = handle.loadReport
  if (!report || (report.repairs.length === 0 && report.warnings.length === 0)) return undefined
  return report
}

/** The lines that tell the person what a load repaired or warned about. */
export function describeLoadReport(report: AgentLoadReport): string[] {
  const lines: string[] = []
  for (const repair of report.repairs) lines.push(`! repaired on load: ${repair.detail} (${repair.type} at seq ${repair.seq})`)
  for (const warning of report.warnings) {
    // Backends' messages usually name the file and the sidecar already; add what they leave out.
    const where = warning.file && !warning.message.includes(warning.file) ? ` (${warning.file}${warning.line !== undefined ? `:${warning.line}` : ''})` : ''
    const sidecar = warning.sidecar && !warning.message.includes(warning.sidecar) ? `; the cut bytes were copied to ${warning.sidecar}` : ''
    lines.push(`! load warning ${warning.code}: ${warning.message}${where}${sidecar}`)
  }
  return lines
}
