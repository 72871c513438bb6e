// The session event this package logs, merged into dsh-session's map (and so into the catalog).
import '@deepseek-ai/dsh-session'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /**
     * Log-only: a failed model call will be retried after `delayMs`. Written
     * between the failed step's `step/end` and the retry's `step/start`; never
     * model-visible.
     */
    'llm/retry': { turn: number; step: number; code: string; attempt: number; delayMs: number; message: string }
  }
}
