import type { Agent } from '@deepseek-ai/dsh-agent'
import type { ApprovalAnswer, ApprovalRequest } from './approval'
import type {
  PostExecuteDecision,
  PreExecuteDecision,
  ToolCall,
  ToolCallResult,
  ToolChange,
  ToolDispatch,
  ToolInvocation,
  ToolOutput,
} from './types'

type Awaitable<T> = T | Promise<T>

// Every tools/* event about a call is dispatched scope-filtered by the
// initiating agent's id: a listener registered in an agent's scoped context
// (`agent.ctx`) sees only that agent's calls; global listeners see every call.
declare module 'cordis' {
  interface Events {
    /**
     * A tool registration appeared or went away in a way that changes what
     * some agent sees (a registration shadowed by a newer one of the same name
     * and scope leaves silently). Scope-filtered by `change.agentId` when the
     * registration is agent-local; global otherwise. Listener failures are
     * contained. Read the new set with `ctx.tools.schemas(agent)`.
     * @mode emit
     */
    'tools/change'(change: ToolChange): void
    /**
     * Policy before a call runs, after its arguments were parsed and
     * validated. The innermost default is `{ kind: 'allow' }`. A listener
     * returns `deny` to refuse the call, `ask` to hand it to the `ctx.approval`
     * service (a denial when none is mounted), or what `next()` returned. A
     * throw denies the call (fail closed). Guards (`ctx.tools.guard`) run
     * after this and can still deny what it allowed.
     * @mode waterfall
     */
    'tools/pre-execute'(invocation: ToolInvocation, next: () => Promise<PreExecuteDecision>): Awaitable<PreExecuteDecision>
    /**
     * The `ctx.approval` service answered an `ask`: `answer` is its reply in
     * full form (`'allow'`/`'deny'` become `{ decision }`; a malformed reply
     * is `{ decision: 'deny' }`). Emitted before the call goes on to the
     * guards (an `allow`) or is refused (a `deny`, with the answer's feedback
     * in the denial the model reads). A policy that asked with a `scope`
     * remembers an answer carrying `remember` here. Not emitted when no
     * approval service is mounted, when it throws, or when the call is aborted
     * while it waits. Observe only: listener failures are contained.
     * @mode emit
     */
    'tools/approval'(request: ApprovalRequest, answer: ApprovalAnswer): void
    /**
     * Middleware around dispatch (timeouts, metrics, tracing). The innermost
     * step runs the tool body. A wrapper may replace only `dispatch.signal`
     * before calling `next()`; the body still sees an abort of the caller's
     * signal. The wrappers' return values are ignored: the result is the
     * body's. A wrapper that returns without calling `next()` fails the call
     * (`TOOL_ERROR`); a throw before the body returned becomes an error result
     * (`TIMEOUT` for an error named `TimeoutError` or a `ToolError` with that
     * code). A throw after the body returned (a second `next()` included) is
     * reported as a listener failure and the call keeps the body's result: its
     * side effect happened. `next()` runs the body once.
     * @mode waterfall
     */
    'tools/execute'(dispatch: ToolDispatch, next: () => Promise<ToolOutput>): Awaitable<ToolOutput>
    /**
     * Policy on a successful body's output, before `finalizeContent`. The
     * innermost default is `{ kind: 'accept' }`. `replace` substitutes the
     * output (e.g. redaction); `block` withholds the output and the call's
     * deferred contexts from the model (a `BLOCKED` error result). A throw
     * blocks (fail closed). Not dispatched for calls that failed earlier.
     * @mode waterfall
     */
    'tools/post-execute'(
      invocation: ToolInvocation,
      output: ToolOutput,
      next: () => Promise<PostExecuteDecision>,
    ): Awaitable<PostExecuteDecision>
    /**
     * The final result of every call that went through `ctx.tools.execute`,
     * including unknown tools, invalid arguments, denials and aborts. Observe
     * only: listener failures are contained and logged.
     * @mode emit
     */
    'tools/result'(agent: Agent, call: ToolCall, result: ToolCallResult): void
  }
}

export {}
