import { withInitiator, type Agent, type AgentStatus } from '@deepseek-ai/dsh-agent'
import type { Context } from './cordis'
import type { InboxState } from './inbox'
import type { MaintenanceQueue } from './maintenance'
import { runTurn } from './turn'
import type { TurnHost } from './turn-host'

/**
 * What the drain needs of its agent (`ReactLoopAgent`, which is it). An
 * interface of its own so that this file does not import `agent.ts`, which
 * imports it (no import circle, type-only ones included).
 */
export interface DrainHost extends TurnHost, Agent {
  /** A wakeup came since the drain last ended (see `ReactLoopAgent.woken`). */
  woken: boolean
  readonly maintenance: MaintenanceQueue
  readonly inboxState: InboxState
  readonly logger: ReturnType<Context['logger']>
  /** Writes the injections held while maintenance ran. */
  readonly releaseInjections: () => void
  hasWork(): boolean
  kick(): void
  settleIdle(): void
  /** `undefined` when the agent is idle (or disposing), else a promise that settles once it is (see `whenIdle`). */
  idleAfterStart(): Promise<void> | undefined
  setStatus(status: AgentStatus): void
}

/** Already settled: the drain's first round is chained on it, so it starts on a microtask. */
const STARTED: Promise<void> = Promise.resolve()

/**
 * One agent's drain (the "pump"): it runs the agent's work one piece at a
 * time, maintenance first, then turns, from a wakeup until nothing woken is
 * left. It can never spin: each round either runs a maintenance task
 * (removed from the queue first), or opens a turn (the log's turn count
 * grows), or the drain stops. A round that opened no turn (a refused claim
 * or `turn/start`, or a bug in the loop) ends the drain with the work left
 * parked, so at most one such round follows each wakeup.
 *
 * It starts on a microtask (never inside the admission that woke it) and
 * inside `withInitiator`, so every turn and task it chains runs as the
 * agent's. Not an async function: a turn that ran to its close synchronously
 * (`runTurn` returned nothing) is followed by the next round in the same
 * loop; a round that must wait (a turn, a task) chains the next round on
 * that promise with callbacks made once per agent. A drain costs one
 * promise to start and one per turn that waited, and no async frame.
 *
 * The start's promise doubles as `whenIdle()`'s while the drain waits to
 * start (`shareStart`): it then settles once the agent is idle after the
 * drain's first call (at once when that call left it idle, the usual case of
 * a turn that waited for nothing), so an admission followed by `whenIdle()`
 * costs one promise, not two.
 */
export class Drain {
  /** From `start()` until the drain's last round ended (its status back to `idle`). */
  running = false
  /** The log's turn count before the running turn: the progress guard. */
  private turnsBefore = 0
  /** `stopped()` callers, settled when the drain ends. */
  private waiters: Array<() => void> = []
  /** The start's promise from `start()` until the drain's first call runs, else `undefined`. */
  private starting: Promise<void> | undefined = undefined
  /** `whenIdle()` was handed `starting`: the first call's promise then settles once the agent is idle. */
  private shared = false

  constructor(private readonly agent: DrainHost) {}

  /** Starts the drain (the agent checked it is not running and has work). */
  start(): void {
    this.running = true
    withInitiator(this.agent, this.begin)
  }

  /** Settles once the drain is not running (at once when it is not). */
  stopped(): Promise<void> {
    if (!this.running) return STARTED
    return new Promise((resolve) => this.waiters.push(resolve))
  }

  /**
   * The start's promise, for `whenIdle()`, while the drain waits to start
   * (`undefined` otherwise): it settles once the agent is idle after the
   * drain's first call.
   */
  shareStart(): Promise<void> | undefined {
    if (this.starting === undefined) return undefined
    this.shared = true
    return this.starting
  }

  private readonly begin = (): void => {
    this.starting = STARTED.then(this.first)
  }

  /** The drain's first call. The flag is read before the rounds: a start they schedule is shared apart. */
  private readonly first = (): Promise<void> | undefined => {
    const shared = this.shared
    this.shared = false
    this.starting = undefined
    this.round()
    return shared ? this.agent.idleAfterStart() : undefined
  }

  /** Runs rounds until one must wait (chained) or the drain ends. */
  private readonly round = (): void => {
    const agent = this.agent
    try {
      while (!agent.disposing && !agent.failed.error) {
        const task = agent.maintenance.next()
        if (task) {
          // Injections held while it ran are written as soon as it settles. `run` never rejects.
          void agent.maintenance.run(task, agent.releaseInjections).then(this.round)
          return
        }
        if (!agent.woken || (!agent.inboxState.hasSteering && !agent.inboxState.hasTurnWork)) break
        agent.setStatus('running')
        // A status listener may have disposed the agent or changed the inbox.
        if (agent.disposing || agent.failed.error) break
        const steering = agent.inboxState.hasSteering
        if (!steering && !agent.inboxState.hasTurnWork) continue
        this.turnsBefore = agent.session.lastTurn
        let turn: Promise<void> | undefined
        try {
          turn = runTurn(agent, steering ? 'steering' : 'prompt')
        } catch (error) {
          turn = Promise.reject(error)
        }
        if (turn !== undefined) {
          void turn.then(this.turnEnded, this.turnThrew)
          return
        }
        // The turn ran to its close in this call: the next round follows in this loop (no recursion).
        if (!this.progressed()) break
      }
    } catch (error) {
      // Nothing above throws (notifications are contained); reaching here is a bug in the loop itself.
      agent.logger.error(error)
    }
    this.end()
  }

  private readonly turnEnded = (): void => {
    if (this.progressed()) this.round()
    else this.end()
  }

  /** The progress guard: whether the last round opened a turn. After a failure the round is already reported; anything else is a bug. */
  private progressed(): boolean {
    const agent = this.agent
    if (agent.session.lastTurn !== this.turnsBefore) return true
    if (!agent.failed.error) agent.logger.error('agent %s: a drain round opened no turn; the pending work stays parked until the next wakeup', agent.id)
    return false
  }

  private readonly turnThrew = (error: unknown): void => {
    // runTurn contains every failure; reaching here is a bug in the loop itself.
    this.agent.logger.error(error)
    this.turnEnded()
  }

  /** The drain's end: parked work stays parked until the next wakeup; woken work left starts a new drain. */
  private end(): void {
    const agent = this.agent
    agent.woken = false
    agent.setStatus('idle')
    this.running = false
    if (this.waiters.length) {
      const waiters = this.waiters
      this.waiters = []
      for (let i = 0; i < waiters.length; i++) waiters[i]!()
    }
    if (agent.hasWork()) agent.kick()
    else agent.settleIdle()
  }
}
