import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import { PermissionsError } from './errors'
import { isPermissionMode, morePermissive, stricterMode, type PermissionMode } from './modes'
import { modeMessage, type ModeChangeCause } from './texts'

/** One agent's mode, its parent link, and what the model was told. */
interface ModeState {
  readonly agent: Agent
  /** The mode set for this agent (the mode it works under may be stricter: see `parent`). */
  own: PermissionMode
  /** The mode it had before it entered plan mode (where an approved plan returns to). */
  beforePlan?: PermissionMode
  /** The agent whose mode caps this one's. */
  parent?: SessionId
  /** The cap left by a parent that is gone (its last mode), or `default` for a parent never seen. */
  orphanCeiling?: PermissionMode
  /** The mode the model was last told (from the log on resume; `default` before any message). */
  told: PermissionMode
}

/** How deep parent links are followed (a deeper chain is treated as planning: fail closed). */
const MAX_DEPTH = 32

/**
 * The modes of the agents this service knows: each agent's own mode, capped
 * by its parent's (R-PRM-2a), and the telling of every change of the mode an
 * agent works under: a `permission/mode` log event, then one injected
 * message (R-PRM-3).
 */
export class AgentModes {
  private readonly agents = new Map<SessionId, ModeState>()

  constructor(
    private readonly startMode: PermissionMode,
    private readonly warn: (message: string) => void,
  ) {}

  /** The mode `agent` works under: its own, capped by its parent's. */
  mode(agent: Agent): PermissionMode {
    return this.effective(this.state(agent))
  }

  /** The agent's own mode (before its parent's cap). */
  own(agent: Agent): PermissionMode {
    return this.state(agent).own
  }

  /** The mode an approved plan returns `agent` to (its mode before planning, else the start mode, else `default`). */
  beforePlan(agent: Agent): PermissionMode {
    return this.state(agent).beforePlan ?? (this.startMode === 'plan' ? 'default' : this.startMode)
  }

  /** Sets `agent`'s own mode and tells it (and its children) when the mode they work under changed. Throws `ABOVE_PARENT`. */
  set(agent: Agent, mode: PermissionMode, cause: ModeChangeCause): void {
    const state = this.state(agent)
    const ceiling = this.ceiling(state, 0)
    if (ceiling !== undefined && morePermissive(mode, ceiling)) {
      throw new PermissionsError('ABOVE_PARENT', `agent ${agent.id} cannot be in ${mode} mode: its parent is in ${ceiling} mode, and a child is never more permissive than its parent`)
    }
    if (mode === 'plan' && state.own !== 'plan') state.beforePlan = state.own
    state.own = mode
    this.tell(state, cause)
  }

  /** Links `child` under `parent` (their mode caps its mode from now on). Throws `UNKNOWN_AGENT` for a loop. */
  inherit(child: Agent, parent: Agent): void {
    if (child.id === parent.id) throw new PermissionsError('UNKNOWN_AGENT', `agent ${child.id} cannot be its own parent`)
    const state = this.state(child)
    this.state(parent)
    for (let up: SessionId | undefined = parent.id; up !== undefined; up = this.agents.get(up)?.parent) {
      if (up === child.id) throw new PermissionsError('UNKNOWN_AGENT', `agent ${parent.id} descends from ${child.id}: a parent link would make a loop`)
    }
    state.parent = parent.id
    state.orphanCeiling = undefined
    this.tell(state, 'parent')
  }

  /**
   * Starts tracking an agent (at `agent/created`, or at its first call): the
   * start mode, its parent from the session meta's `parentSession`, and what
   * the model was told before (a resumed log). Tells it at once when that
   * differs.
   */
  track(agent: Agent): void {
    this.state(agent)
  }

  /** Forgets an agent; its children keep its last mode as their cap. */
  forget(agent: Agent): void {
    const gone = this.agents.get(agent.id)
    if (!gone) return
    const last = this.effective(gone)
    this.agents.delete(agent.id)
    for (const state of this.agents.values()) if (state.parent === agent.id) state.orphanCeiling = last
  }

  private state(agent: Agent): ModeState {
    const existing = this.agents.get(agent.id)
    if (existing) return existing
    const state: ModeState = { agent, own: this.startMode, told: lastToldMode(agent) }
    this.agents.set(agent.id, state)
    const parent = agent.session?.meta.parentSession
    if (parent !== undefined && parent !== agent.id) {
      state.parent = parent
      // A parent this service never saw: its mode is unknown, so the child is held to `default`.
      if (!this.agents.has(parent)) state.orphanCeiling = 'default'
    }
    this.tell(state, 'start')
    return state
  }

  private effective(state: ModeState, depth = 0): PermissionMode {
    const ceiling = this.ceiling(state, depth)
    return ceiling === undefined ? state.own : stricterMode(state.own, ceiling)
  }

  private ceiling(state: ModeState, depth: number): PermissionMode | undefined {
    if (state.parent === undefined) return undefined
    if (depth > MAX_DEPTH) return 'plan'
    const parent = this.agents.get(state.parent)
    return parent ? this.effective(parent, depth + 1) : (state.orphanCeiling ?? 'default')
  }

  /** Tells the model (and the log) when the mode it works under changed; then its children. */
  private tell(state: ModeState, cause: ModeChangeCause): void {
    const mode = this.effective(state)
    if (mode !== state.told) {
      const previous = state.told
      state.told = mode
      const { agent } = state
      try {
        agent.session.append('permission/mode', { mode, previous, cause })
        agent.inject({ content: modeMessage(mode, cause), source: { kind: 'plugin', plugin: 'permissions' }, metadata: { permissionMode: mode } })
      } catch (error) {
        this.warn(`could not tell agent ${agent.id} about its ${mode} mode: ${error instanceof Error ? error.message : String(error)}`)
      }
    }
    for (const child of this.agents.values()) {
      if (child.parent === state.agent.id && child !== state) this.tell(child, 'parent')
    }
  }
}

/** The mode the model was last told in this session's log (`default` when never). */
function lastToldMode(agent: Agent): PermissionMode {
  const events = agent.session?.events
  if (!events) return 'default'
  for (let seq = events.length - 1; seq >= 0; seq--) {
    if (agent.session.typeAt(seq) !== 'permission/mode') continue
    const mode = (events[seq]!.data as { mode?: unknown }).mode
    if (isPermissionMode(mode)) return mode
  }
  return 'default'
}
