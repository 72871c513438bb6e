import type { TokenUsage } from '@deepseek-ai/dsh-llm'
import type { SubagentEndEvent, SubagentEvent } from './types'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /**
     * Log-only (ignorable), in the parent's log: a child agent started
     * (R-SUB-5). `sessionId` is the child's session (its own log, whose
     * `session/meta` names this session as `parentSession`), `callId` the
     * parent's tool call that started it, when one did. A UI draws the tree
     * from these; a person opens the child's transcript by its session id.
     */
    'subagent/started': { runId: string; sessionId: string; agentType: string; description: string; background: boolean; callId?: string }
    /**
     * Log-only (ignorable), in the parent's log: the child's run ended
     * (R-SUB-5), with the usage of all its model calls. `interrupted` is
     * written on resume for a child whose end the log never saw (the process
     * stopped); its usage is then unknown.
     */
    'subagent/finished': {
      runId: string
      status: 'completed' | 'failed' | 'cancelled' | 'interrupted'
      usage?: TokenUsage
      modelCalls?: number
      error?: { code: string; message: string }
    }
  }
}

declare module 'cordis' {
  interface Events {
    /**
     * A child agent started (it left the queue and exists; `run.agent` is the
     * child when it runs in this process). Scope-filtered by the parent's
     * id. Observation only; listener failures are contained.
     * @mode emit
     */
    'subagents/started'(event: SubagentEvent): void
    /**
     * A child's run ended and the child was disposed (also a run cancelled
     * while queued). Scope-filtered by the parent's id; contained.
     * @mode emit
     */
    'subagents/finished'(event: SubagentEndEvent): void
  }
}

export {}
