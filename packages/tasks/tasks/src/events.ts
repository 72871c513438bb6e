import type { ContentBlock } from '@deepseek-ai/dsh-llm'
import type { TaskEndEvent, TaskEnding, TaskEvent, TaskProgressEvent } from './types'

/** How an outcome reached the owner's model (`task/delivered`). */
export type TaskDeliveryRoute =
  /** Next-step input with a wakeup: read at the next step boundary, or a steering turn when idle. */
  | 'steer'
  /** A durable injection (no wakeup): the model reads it with its next request. */
  | 'inject'
  /** The result of the tool call that stopped it (`task_kill`). */
  | 'result'

declare module '@deepseek-ai/dsh-session' {
  interface SessionEventMap {
    /**
     * Log-only (ignorable): a background task owned by this agent started
     * (R-TSK-2). `callId` is the tool call that started it, when one did.
     * With `task/delivered` it lets a resume find the tasks whose outcome
     * never reached the model.
     */
    'task/started': { id: string; kind: string; title: string; callId?: string }
    /**
     * Log-only (ignorable): a task's outcome was handed to this agent's model
     * (R-TSK-2): admitted as `steer` input (`messageId` is the inbox item, see
     * `inbox/*`), injected (`inject`: `messageId` is the injected
     * `user/message`), or reported by the result of the call that stopped it
     * (`result`). Written when the outcome is admitted; a steering item that
     * is discarded before the model read it (a cancel) is admitted again as
     * an injection, with a second record.
     */
    'task/delivered': { id: string; status: TaskEnding; via: 'steer' | 'inject' | 'result'; messageId?: string }
    /**
     * Log-only (ignorable): a task ended while this agent was being closed,
     * so its outcome could not be admitted (R-TSK-2). The notice is kept here
     * (`content`, what the model would have read) and a resume delivers it
     * once, as an injection, instead of reporting the task as interrupted.
     */
    'task/undelivered': { id: string; status: TaskEnding; content: ContentBlock[] }
  }
}

declare module 'cordis' {
  interface Events {
    /**
     * A background task started (`ctx.tasks.start`). Scope-filtered by the
     * owner's id. Observation only; listener failures are contained.
     * @mode emit
     */
    'tasks/started'(event: TaskEvent): void
    /**
     * A task's work reported progress (`control.progress(note)`): for UIs,
     * never sent to the model. Scope-filtered by the owner's id; contained.
     * @mode emit
     */
    'tasks/progress'(event: TaskProgressEvent): void
    /**
     * A task's work completed; emitted before its outcome is delivered to the
     * owner. Scope-filtered by the owner's id; contained.
     * @mode emit
     */
    'tasks/finished'(event: TaskEndEvent): void
    /**
     * A task's work failed (it threw); emitted before its outcome is
     * delivered. Scope-filtered by the owner's id; contained.
     * @mode emit
     */
    'tasks/failed'(event: TaskEndEvent): void
    /**
     * A task was stopped (`result.stoppedBy` says by whom) and its work has
     * settled; emitted before the owner is told, if it is told.
     * Scope-filtered by the owner's id; contained.
     * @mode emit
     */
    'tasks/cancelled'(event: TaskEndEvent): void
  }
}

export {}
