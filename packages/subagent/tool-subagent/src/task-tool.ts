import { z } from 'zod'
import { SubagentsError, allowListMatcher, type AgentType, type SubagentResult, type SubagentRun, type Subagents } from '@deepseek-ai/dsh-subagents'
import type { TaskHandle, Tasks } from '@deepseek-ai/dsh-tasks'
import { defineTool, effectOf, type ToolRegistry } from '@deepseek-ai/dsh-tools'
import { taskToolError } from './errors'
import { answerText, startedText } from './task-text'

/** What the `task` tool works with. */
export interface TaskToolHost {
  readonly tools: ToolRegistry
  readonly subagents: Subagents
  readonly tasks: Tasks
  /** Whether `task_list` / `task_output` / `task_kill` are registered (the texts mention them). */
  readonly managed: boolean
  readonly maxAnswerChars: number
  readonly timeoutMs: number
}

/** The tool's name (also how the concurrency check recognizes it among a type's tools). */
const TASK = 'task'

/**
 * A prompt or description of only whitespace is refused by the validator (INVALID_ARGUMENTS naming the
 * field), as `spawn()` would refuse it anyway; a refinement, so the JSON schema the model reads is unchanged.
 */
const notBlank = (text: string) => text.trim() !== ''
const BLANK = 'must not be blank'

/** dsh-tools' "no deadline": a foreground child has none of its own by default; the caller's cancel stops it. */
const NO_DEADLINE = 0

/**
 * `task` (R-SUB-3): starts a subagent of one of the configured agent types.
 *
 * - Foreground (default): the call waits for the child; its result is the
 *   child's final answer and a usage line. Cancelling the parent's turn
 *   cancels the child (cause `parent`) and the call ends `ABORTED`.
 * - `background: true`: the result is a task id at once (`ctx.tasks`), and
 *   the answer reaches the parent later as a message (R-TSK-2).
 *
 * A call is concurrency-safe only when every tool its agent type allows
 * has the `read` effect (`task` among them only when every configured type
 * only reads): several read-only children of one step then run at once
 * (their results still come in model order); any other call is exclusive. The effect of `task` itself is `read`: it changes nothing by
 * itself, and each of the child's calls is judged on its own, under a
 * permission mode never above the parent's.
 */
export function taskTool(host: TaskToolHost) {
  const types = host.subagents.types()
  const names = types.map((type) => type.name) as [string, ...string[]]
  const fallback = host.subagents.type()!
  const readOnly = readOnlyCheck(host.tools, types)
  return defineTool({
    name: TASK,
    description: describeTask(types, fallback, host.managed),
    parameters: z.object({
      description: z.string().min(1).max(200).refine(notBlank, BLANK).describe('A short (3-5 word) title of the task'),
      prompt: z
        .string()
        .min(1)
        .refine(notBlank, BLANK)
        .describe('The task for the subagent, with everything it needs to know: it sees nothing of this conversation but this prompt'),
      agentType: z.enum(names).optional().describe(`The agent type (default ${fallback.name})`),
      background: z.boolean().optional().describe('Run it in the background: the result is a task id at once, and the answer comes later as a message'),
    }),
    effect: 'read',
    timeoutMs: host.timeoutMs > 0 ? host.timeoutMs : NO_DEADLINE,
    isConcurrencySafe: ({ agentType }) => readOnly(host.subagents.type(agentType) ?? fallback),
    async execute({ description, prompt, agentType, background }, run) {
      let child: SubagentRun
      try {
        child = host.subagents.spawn({
          parent: run.agent,
          prompt,
          description,
          background: background === true,
          callId: run.callId,
          ...(agentType !== undefined ? { agentType } : {}),
          ...(background ? {} : { signal: run.signal }),
        })
      } catch (error) {
        if (error instanceof SubagentsError && (error.code === 'UNKNOWN_AGENT_TYPE' || error.code === 'DEPTH_LIMIT')) throw taskToolError(error.code, error.message, error)
        throw error
      }
      if (background) {
        let task: TaskHandle
        try {
          task = host.tasks.start({
            owner: run.agent,
            kind: 'subagent',
            title: `${child.agentType} "${description}"`,
            callId: run.callId,
            output: () => child.output(),
            run: async (signal) => {
              signal.addEventListener('abort', () => child.cancel(), { once: true })
              const result = await child.result()
              if (result.status === 'completed') return answerText(result, host.maxAnswerChars)
              throw Object.assign(new Error(failureText(result)), { code: result.error?.code ?? 'SUBAGENT_FAILED' })
            },
          })
        } catch (error) {
          child.cancel()
          throw error
        }
        // However the task ends (also stopped before its work ran, which then never runs), the child ends with it.
        void task.result().then(() => child.cancel())
        return startedText(task, child, host.managed)
      }
      const result = await child.result()
      if (result.status === 'completed') return answerText(result, host.maxAnswerChars)
      if (result.status === 'cancelled') {
        throw taskToolError('ABORTED', `the ${result.agentType} subagent was stopped before it answered${run.signal.aborted ? ' (this turn was cancelled)' : ''}`)
      }
      throw taskToolError('SUBAGENT_FAILED', failureText(result))
    },
  })
}

/** Why a run did not complete, with its last words when it had any. */
function failureText(result: SubagentResult): string {
  const why = result.status === 'cancelled' ? 'was stopped before it answered' : `failed: ${result.error?.message ?? 'unknown error'}`
  return `the ${result.agentType} subagent ${why}${result.answer ? `. Its last message: ${result.answer.slice(0, 2_000)}` : ''}`
}

/**
 * Whether every tool an agent type allows has the `read` effect (the tools
 * registered now: a tool that does not exist cannot be called). `task`
 * itself counts as read-only only when every configured type's other tools
 * are: a child that may call it can start a child of any type, whose writes
 * would otherwise overlap another call's. Cached per registry version and type.
 */
function readOnlyCheck(tools: ToolRegistry, types: readonly AgentType[]): (type: AgentType) => boolean {
  let version = -1
  const cache = new Map<AgentType, boolean>()
  let startsOnlyReaders: boolean | undefined
  const reads = (type: AgentType, taskReads: boolean) => {
    const allowed = type.tools ? allowListMatcher(type.tools) : () => true
    return tools.schemas().every((schema) => !allowed(schema.name) || (schema.name === TASK ? taskReads : effectOf(tools.definition(schema.name)!) === 'read'))
  }
  return (type) => {
    if (tools.version !== version) {
      version = tools.version
      cache.clear()
      startsOnlyReaders = undefined
    }
    let safe = cache.get(type)
    if (safe === undefined) {
      startsOnlyReaders ??= types.every((each) => reads(each, true))
      safe = reads(type, startsOnlyReaders)
      cache.set(type, safe)
    }
    return safe
  }
}

/** The tool's description: what a subagent is, how the result comes, and the types. */
function describeTask(types: readonly AgentType[], fallback: AgentType, managed: boolean): string {
  const lines = types.map((type) => `- ${type.name}: ${type.description.trim()}${type.tools ? ` (tools: ${type.tools.join(', ') || 'none'})` : ''}`)
  return [
    'Start a subagent: a separate agent with its own context that works on one task and reports back. ' +
      'It sees none of this conversation, only your prompt, so give it everything it needs. ' +
      'Use it for self-contained work (such as searching a large codebase) whose details you do not need to keep; ' +
      'several calls in one message run at the same time when their agent types only read.',
    'By default you wait and the result is its final answer. With background: true the result is a task id at once and the answer comes later as a message' +
      (managed ? '; task_list, task_output and task_kill manage background tasks.' : '.'),
    `Agent types (default ${fallback.name}):`,
    ...lines,
  ].join('\n')
}
