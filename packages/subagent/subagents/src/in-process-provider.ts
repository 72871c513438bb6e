import type { Agent, AgentHandle, AgentRegistry, CreateAgentOptions } from '@deepseek-ai/dsh-agent'
import type { SystemPrompt } from '@deepseek-ai/dsh-system-prompt'
import { childOutcome } from './child-outcome'
import { personaSection, setUpChild } from './child-setup'
import type { Context } from './cordis'
import type { ChildOutcome, ProviderHooks, SubagentProvider, SubagentRequest } from './types'

/** What the provider needs of dsh-permissions (read with `ctx.get('permissions')`): the parent link. */
export interface PermissionsLink {
  inherit(child: Agent, parent: Agent): void
}

/** The source of a child's first prompt. */
export const SUBAGENTS_SOURCE = Object.freeze({ kind: 'plugin' as const, plugin: 'subagents' })

/**
 * The in-process provider (R-SUB-1): the child is an agent of the same app,
 * created with the parent's own `ctx.agents.create()` (so the parent's
 * teardown takes it too), with its own session whose meta names the parent
 * session (`parentSession`). The provider owns the child's handle and
 * disposes it when the child has answered, when the run is cancelled (after
 * cancelling the child's turn with cause `{ kind: 'parent' }`), or when the
 * child could not start. With dsh-permissions mounted, the child's mode is
 * capped by the parent's (`permissions.inherit`), on top of the link the
 * session meta gives it.
 */
export class InProcessProvider implements SubagentProvider {
  readonly name = 'in-process'

  constructor(
    private readonly permissions: () => PermissionsLink | undefined,
    private readonly warn: (message: string) => void,
    /** The app's `ctx.agents`, held: the child is then created through its factory directly. */
    private readonly agents?: AgentRegistry,
    /**
     * The app's `ctx.systemPrompt`, held: the child's persona is then registered for its session id
     * with `sectionFor` before it exists (no Cordis effect per child) and removed once it is disposed.
     */
    private readonly systemPrompt?: Pick<SystemPrompt, 'sectionFor'>,
  ) {}

  async run(request: SubagentRequest, signal: AbortSignal, hooks: ProviderHooks): Promise<ChildOutcome> {
    const removePersona = this.systemPrompt?.sectionFor(request.sessionId, personaSection(request.type))
    try {
      return await this.drive(request, signal, hooks, removePersona === undefined)
    } finally {
      removePersona?.()
    }
  }

  /** Creates the child, has it answer (or cancels it), disposes it; `persona`: register its persona through its own context. */
  private async drive(request: SubagentRequest, signal: AbortSignal, hooks: ProviderHooks, persona: boolean): Promise<ChildOutcome> {
    const { parent, background, type } = request
    const cwd = parent.session.meta.cwd
    let handle: AgentHandle
    try {
      const options: CreateAgentOptions = {
        sessionId: request.sessionId,
        meta: { parentSession: parent.id, ...(cwd !== undefined ? { cwd } : {}) },
        agentOptions: request.agentOptions,
        // A foreground child with its persona given by `sectionFor` needs nothing on its scope.
        ...(background || persona ? { setup: (ctx: Context) => setUpChild(ctx, { type, background, persona }) } : {}),
        // No `signal`: a new session's creation has nothing to wait for (no load, a synchronous setup),
        // and an abort listener on the run's signal for it cost more than the rest of the options; a
        // cancel that lands meanwhile is seen right after (the child never starts its turn).
      }
      // Exactly `parent.ctx.agents.create(options)` (the parent's context owns the child), without
      // the lookup of `agents` through that context, which costs Cordis an Error per call.
      const factory = this.agents?.factory
      handle = await (factory ? factory.createAgent(parent.ctx, options) : parent.ctx.agents.create(options))
    } catch (error) {
      if (signal.aborted) return notRun('CANCELLED', 'the subagent was stopped before it started', 'cancelled')
      return notRun('SUBAGENT_FAILED', `the subagent could not start: ${error instanceof Error ? error.message : String(error)}`, 'failed')
    }
    if (signal.aborted) {
      // Cancelled while the child was being made: it never started, so nothing links or counts it.
      await handle.dispose()
      return notRun('CANCELLED', 'the subagent was stopped before it started', 'cancelled')
    }
    const child = handle.agent
    const from = child.session.events.length
    // Whether the cancel won: set when the signal aborts before the child went idle. A cancel that lands
    // after the child answered (during its disposal) does not turn the answer into a cancellation.
    // (Read through a function: TypeScript keeps `signal.aborted` narrowed to false from the check above.)
    const aborted = (): boolean => signal.aborted
    let cancelled = false
    try {
      try {
        this.permissions()?.inherit(child, parent)
      } catch (error) {
        this.warn(`subagent ${request.runId}: the permissions link to its parent failed (${error instanceof Error ? error.message : String(error)})`)
      }
      hooks.started(child)
      cancelled = aborted()
      if (!cancelled) {
        child.followup({ content: request.prompt, source: SUBAGENTS_SOURCE })
        cancelled = await answeredOrCancelled(child, signal)
      }
    } catch (error) {
      cancelled = aborted()
      this.warn(`subagent ${request.runId}: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      // The child's turn (cancelled, or done) closes, its tasks and processes end, its session is detached.
      await handle.dispose()
    }
    return childOutcome(child.session, from, cancelled)
  }
}

function notRun(code: string, message: string, status: 'failed' | 'cancelled'): ChildOutcome {
  return { status, answer: '', usage: { inputTokens: 0, outputTokens: 0 }, modelCalls: 0, error: { code, message } }
}

/**
 * Settles with false when the child is idle (it answered, and nothing it was
 * woken for is pending), or with true at once when `signal` aborts first:
 * then the child's open turn is cancelled with cause `parent` (its tasks
 * stop with it), and the disposal that follows closes it.
 */
function answeredOrCancelled(child: Agent, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const cancel = () => {
      child.cancel({ kind: 'parent' })
      resolve(true)
    }
    signal.addEventListener('abort', cancel, { once: true })
    const done = () => {
      signal.removeEventListener('abort', cancel)
      resolve(false)
    }
    child.whenIdle().then(done, done)
  })
}
