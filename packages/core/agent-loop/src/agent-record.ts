import { AgentError, type AgentHandle, type AgentLoadReport, type AgentOptions } from '@deepseek-ai/dsh-agent'
import { scoped } from '@deepseek-ai/dsh-scope'
import type { Session } from '@deepseek-ai/dsh-session'
import { ReactLoopAgent } from './agent'
import type { Context, Fiber } from './cordis'
import { fiberLive } from './fiber'
import type { LoopEnvironment } from './loop-environment'
import { LOOP_UNLOADED, OWNER_UNLOADED } from './pending-call'

/** The plugin behind each agent's private scope: a child fiber of the loop that agent-local registrations revert with. */
const AgentScope = { name: 'dsh-agent-scope', apply: () => {} }

/** One agent's private resources and its single, memoized teardown boundary. */
export interface AgentRecord {
  readonly agent: ReactLoopAgent
  readonly handle: AgentHandle
  /**
   * Hands the record the owner binding: the owner's fiber (checked once the
   * agent has been announced) and the function that removes the owner's
   * effect (called by the teardown once the agent is detached).
   */
  adoptOwner(owner: Fiber, unbind: () => void): void
  /**
   * Enters the session store and the agent registry, then announces both:
   * `session/created`, then `agent/created` (R-LIFE-1). A vetoing listener's
   * error is rethrown after both entries were detached (each announced one
   * with its paired disposal). Throws `ABORTED` when a created listener
   * unloaded the owner or started the teardown: the publication stands and
   * the caller's rollback (`dispose`) detaches it, paired.
   */
  publish(): void
  /**
   * The one memoized, fully settled teardown (handle dispose, owner unload,
   * loop unload, rollback): stop and drain → detach the agent → detach the
   * session → revoke the scope. `cause` says why, as a clause ("its owner
   * unloaded"); the first cause given wins.
   */
  dispose(cause: string): Promise<void>
}

export interface RecordOptions {
  /** How the call that builds the record reads in messages, e.g. `create("a")`. */
  readonly operation: string
  readonly agentOptions: AgentOptions
  readonly resumed: boolean
  /** Set on the handle (resumed agents). */
  readonly loadReport?: AgentLoadReport
  /** Called once when the teardown starts, with its cause (stops a create/resume call still under way). */
  readonly onTeardown?: (cause: string) => void
}

/**
 * Builds an agent around a private `session`: its scope (a child fiber of the
 * loop, owned by one effect on the loop's fiber), the agent, its handle, and
 * the teardown. Nothing is published until `publish`.
 */
export function buildRecord(home: Context, env: LoopEnvironment, session: Session, options: RecordOptions): AgentRecord {
  let scope!: ReturnType<Context['plugin']>
  let detachSession: (() => void) | undefined
  let detachAgent: (() => void) | undefined
  let unbindOwner: (() => void) | undefined
  let ownerFiber: Fiber | undefined
  let cause: string | undefined
  let agent: ReactLoopAgent | undefined

  // Memoized before they run: a dispose() from a listener of the teardown's own events gets the same promise.
  const close = memoized(async () => {
    options.onTeardown?.(cause ?? LOOP_UNLOADED)
    await agent?.stop()
    detachAgent?.()
    detachSession?.()
    unbindOwner?.()
    env.llm.forgetLoopRequests(session.id)
  })
  const finish = memoized(async () => {
    await close()
    await scope.dispose()
  })

  // One effect on the loop's fiber owns the scope fiber and the teardown, in that order: on
  // provider unload, Cordis disposes it as a unit, so the drain and the detaches run before the
  // agent's scope is revoked (a plain child fiber would be revoked concurrently).
  const lifetime = home.effect(function* () {
    scope = home.plugin(AgentScope)
    yield scope.dispose
    yield () => dispose(LOOP_UNLOADED)
  }, `agent(${session.id})`)

  function dispose(why: string): Promise<void> {
    cause ??= why
    Promise.resolve(lifetime()).catch((error) => home.logger('dsh-agent-loop').warn(error))
    return finish()
  }

  try {
    agent = new ReactLoopAgent(env, session, scoped(scope.ctx, session.id), Object.freeze({ ...options.agentOptions }), options.resumed)
  } catch (error) {
    dispose('building the agent failed').catch((cleanup) => home.logger('dsh-agent-loop').warn(cleanup))
    throw error
  }
  const built = agent
  const handle: AgentHandle = Object.freeze({
    agent: built,
    ...(options.loadReport ? { loadReport: options.loadReport } : {}),
    dispose: () => dispose('its handle was disposed'),
  })

  return {
    agent: built,
    handle,
    adoptOwner(owner, unbind) {
      ownerFiber = owner
      unbindOwner = unbind
    },
    publish() {
      const sessionEntry = env.sessions.enterUnannounced(session)
      let agentEntry: ReturnType<Context['agents']['enterUnannounced']>
      try {
        agentEntry = home.agents.enterUnannounced(built)
      } catch (error) {
        sessionEntry.detach()
        throw error
      }
      detachAgent = agentEntry.detach
      detachSession = sessionEntry.detach
      try {
        // Both are entered before either is announced: a session/created listener finds the agent.
        sessionEntry.announce()
        // From here `agent/created` listeners may already send input; the drain starts only in `start`.
        built.lifecycle.to('published')
        agentEntry.announce()
      } catch (error) {
        // A veto: nothing of the agent ever ran, so its entries go at once, agent first.
        if (built.lifecycle.stage === 'published') built.lifecycle.to('built')
        detachAgent = detachSession = undefined
        agentEntry.detach()
        sessionEntry.detach()
        throw error
      }
      // A created listener may have unloaded the owner (or started the teardown): the publication
      // stands (created was announced), and the caller's rollback now tears it down, paired.
      if ((ownerFiber && !fiberLive(ownerFiber)) || built.lifecycle.stage === 'disposing') {
        const why = cause ?? OWNER_UNLOADED
        throw new AgentError('ABORTED', `${options.operation} was rolled back: ${why} while agent "${session.id}" was being announced`)
      }
    },
    dispose,
  }
}

/**
 * `run` once: the first call starts it (its synchronous part runs at once)
 * and every call, including one made from inside that synchronous part,
 * returns the same promise.
 */
function memoized(run: () => Promise<void>): () => Promise<void> {
  let promise: Promise<void> | undefined
  return () => {
    if (promise) return promise
    let adopt!: (value: Promise<void>) => void
    promise = new Promise<void>((resolve) => (adopt = resolve))
    adopt(run())
    return promise
  }
}
