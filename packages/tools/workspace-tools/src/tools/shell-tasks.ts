import type { Agent } from '@deepseek-ai/dsh-agent'

/**
 * What the shell's background mode needs of `ctx.tasks` (dsh-tasks), written
 * structurally so this package does not depend on it: start a task owned by
 * the calling agent, whose outcome dsh-tasks delivers to the agent's model
 * when it ends, and which it stops when the agent goes away.
 */
export interface ShellTasks {
  start(spec: {
    owner: Agent
    kind: string
    title: string
    callId?: string
    run(signal: AbortSignal): Promise<string>
    output?(): string
  }): { readonly id: string }
}
