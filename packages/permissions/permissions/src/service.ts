import { isAbsolute, join, relative, resolve, sep } from 'node:path'
import '@deepseek-ai/dsh-agent'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type { SessionId } from '@deepseek-ai/dsh-session'
import {
  effectOf,
  type ApprovalAnswer,
  type ApprovalRequest,
  type ApprovalScope,
  type PreExecuteDecision,
  type ToolCall,
  type ToolCallResult,
  type ToolEffect,
  type ToolApproval,
  type ToolInvocation,
} from '@deepseek-ai/dsh-tools'
import { PermissionsConfig } from './config'
import { Context, Service } from './cordis'
import { PermissionsError } from './errors'
import type { PermissionDecisionRecord } from './events'
import { exitPlanModeTool } from './exit-plan-mode'
import { isPermissionMode, morePermissive, stricterMode, type PermissionMode } from './modes'
import { labelOf, matchRules, ruleProblem, type CallFacts, type LayeredRule, type PermissionDecision, type PermissionRule } from './rules'
import { PROJECT_SETTINGS, SETTINGS_FILE, TrustStore, readSettingsRules } from './settings-files'
import { parseShellCommand, type ShellCommand } from './shell/command'
import { readOnlyProblem } from './shell/read-only'
import { genericQuestion, modeMessage, planDenial, planShellDenial, repeatDenial, ruleDenial, type ModeChangeCause } from './texts'

declare module 'cordis' {
  interface Context {
    permissions: Permissions
  }
}

/** What the permission checks decided for one call. */
export interface PermissionVerdict {
  readonly decision: PermissionDecision
  /** A denial that the guard enforces (plan mode, a deny rule, a remembered refusal, the repeat guard): nothing can allow the call again. */
  readonly final: boolean
  /** Why, in a few words, for the log (`mode default: write asks`, `user rule shell(command: "rm") → deny`). */
  readonly rule: string
  /** The mode the call was judged in. */
  readonly mode: PermissionMode
  /** For a denial: what the model reads after `tool call denied: `. */
  readonly reason?: string
  /** For an ask: the question. */
  readonly question?: string
  /** For an ask the mode's defaults raised: what an "always" answer covers. */
  readonly scope?: ApprovalScope
}

/** The workspace settings file and whether it applies. */
export interface WorkspaceSettingsStatus {
  /** `<root>/.dsh/settings.json`. */
  readonly file: string
  /** Whether the file exists. */
  readonly exists: boolean
  /** Whether the person trusts the workspace (the file's rules apply only then). */
  readonly trusted: boolean
  /** How many rules the file holds (counted even when not trusted: nothing else of it is used then). */
  readonly rules: number
}

interface AgentState {
  readonly agent: Agent
  /** The mode set for this agent (its effective mode may be stricter: see `parent`). */
  own: PermissionMode
  /** The mode it had before it entered plan mode (where an approved plan returns to). */
  beforePlan?: PermissionMode
  /** The agent whose mode caps this one's. */
  parent?: SessionId
  /** The cap left by a parent that is gone (its last mode), or `default` for a parent never seen. */
  orphanCeiling?: PermissionMode
  /** The mode the model was last told (from the log on resume; `default` before any message). */
  told: PermissionMode
  /** Remembered answers, by the mode they were given in. */
  readonly remembered: Map<PermissionMode, LayeredRule[]>
  /** Failures of identical calls in the current turn. */
  repeat: { turn: number; failures: Map<string, number> }
}

interface PendingDecision {
  record: PermissionDecisionRecord
  agent: Agent
  logged: boolean
}

/**
 * `ctx.permissions`: who may do what without asking (R-PRM-1 … R-PRM-3).
 *
 * It decides every tool call in a `tools/pre-execute` listener (allow, ask
 * or deny) and enforces its denials again as a guard (`ctx.tools.guard`),
 * so that no later listener, rule or remembered answer can allow what plan
 * mode, a deny rule, a remembered refusal or the repeat guard refused. Rules
 * come in layers (the defaults, the workspace's `.dsh/settings.json` once
 * the person trusted the workspace, the user's `~/.dsh/settings.json`, the
 * session's rules and remembered answers): any matching `deny` wins, then
 * any `ask`, then `allow`; with no rule, the agent's mode decides by the
 * call's effect. Asks go to `ctx.approval`; an answer given with `remember`
 * is kept for that agent's session and mode only, in memory. Every decision
 * is logged as `permission/decision`; every change of the mode an agent
 * works under is logged as `permission/mode` and told to the model with one
 * injected message.
 */
export class Permissions extends Service {
  static readonly inject = ['tools', 'sessions']
  static readonly Config = PermissionsConfig

  /** The workspace root, when one is known. */
  root: string | undefined
  private readonly home: Context
  private readonly agents = new Map<SessionId, AgentState>()
  private readonly pending = new Map<string, PendingDecision>()
  private readonly facts = new WeakMap<ToolInvocation, Promise<CallFacts & { effect: ToolEffect; shell: boolean }>>()
  private userRules: readonly LayeredRule[] = []
  private projectRules: readonly LayeredRule[] = []
  private project: WorkspaceSettingsStatus | undefined
  private trustStore: TrustStore | undefined
  private readonly trustedHere = new Set<string>()

  constructor(
    ctx: Context,
    readonly config: PermissionsConfig,
  ) {
    super(ctx, 'permissions')
    this.home = ctx
    if (!isPermissionMode(config.mode)) throw new PermissionsError('INVALID_MODE', `mode: ${JSON.stringify(config.mode)} is not a permission mode (plan, default, accept-edits, bypass)`)
    if (config.mode === 'bypass' && !config.allowBypass) {
      throw new PermissionsError('BYPASS_NOT_ALLOWED', 'mode: bypass needs allowBypass: true (bypass is only ever chosen explicitly)')
    }
    for (const rule of [...config.rules, ...config.defaults]) {
      const problem = ruleProblem(rule)
      if (problem) throw new PermissionsError('INVALID_SETTINGS', `rule ${JSON.stringify(rule)}: ${problem}`)
    }
  }

  async [Service.init](): Promise<void> {
    const { config } = this
    this.root = config.root !== undefined ? resolve(config.root) : (this.home.get('workspaceTools') as { root?: string } | undefined)?.root
    if (config.userDirectory !== false) {
      this.trustStore = new TrustStore(config.userDirectory)
      const file = join(config.userDirectory, SETTINGS_FILE)
      this.userRules = layer('user', (await readSettingsRules(file)) ?? [], file)
    }
    await this.loadProject()

    this.home.sessions.registerType('permission/decision', { ignorable: true })
    this.home.sessions.registerType('permission/mode', { ignorable: true })
    this.home.on('tools/pre-execute', (invocation, next) => this.preExecute(invocation, next))
    this.home.tools.guard((invocation) => this.guard(invocation))
    this.home.on('tools/approval', (request, answer) => this.answered(request, answer))
    this.home.on('tools/result', (agent, call, result) => this.settled(agent, call, result))
    this.home.on('agent/created', (agent) => void this.track(agent))
    this.home.on('agent/disposed', (agent) => this.forget(agent))
    if (config.exitPlanMode) this.home.tools.register(exitPlanModeTool(this))
  }

  // ── modes ───────────────────────────────────────────────────────────

  /** The mode `agent` works under: its own, capped by its parent's. */
  mode(agent: Agent): PermissionMode {
    return this.effective(this.state(agent))
  }

  /**
   * Sets `agent`'s mode. Throws `INVALID_MODE` for an unknown mode,
   * `BYPASS_NOT_ALLOWED` for `bypass` without `allowBypass`, and
   * `ABOVE_PARENT` when the agent has a parent whose mode is stricter. When
   * the mode the agent works under changes (its own, or a child's through
   * it), the change is logged (`permission/mode`) and the model is told
   * with one injected message; the system prompt and the tool list stay as
   * they are, so the cached prefix stays valid.
   */
  setMode(agent: Agent, mode: PermissionMode, options: { cause?: ModeChangeCause } = {}): void {
    if (!isPermissionMode(mode)) throw new PermissionsError('INVALID_MODE', `${JSON.stringify(mode)} is not a permission mode (plan, default, accept-edits, bypass)`)
    if (mode === 'bypass' && !this.config.allowBypass) {
      throw new PermissionsError('BYPASS_NOT_ALLOWED', 'bypass mode is only allowed when it was chosen explicitly at start (allowBypass)')
    }
    const state = this.state(agent)
    const ceiling = this.ceiling(state)
    if (ceiling !== undefined && morePermissive(mode, ceiling)) {
      throw new PermissionsError('ABOVE_PARENT', `agent ${agent.id} cannot be in ${mode} mode: its parent is in ${ceiling} mode, and a child is never more permissive than its parent`)
    }
    if (mode === 'plan' && state.own !== 'plan') state.beforePlan = state.own
    state.own = mode
    this.tell(state, options.cause ?? 'api')
  }

  /**
   * Makes `parent`'s mode the cap of `child`'s, from now on (for the
   * subagents package, or any code that starts an agent for another). The
   * child's mode drops at once if it was more permissive, and follows the
   * parent's later changes down. An agent whose session names a
   * `parentSession` is linked to it automatically when created.
   */
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

  /** The mode that an approved plan returns `agent` to. */
  modeAfterPlan(agent: Agent): PermissionMode {
    const state = this.state(agent)
    const before = state.beforePlan ?? (this.config.mode === 'plan' ? 'default' : this.config.mode)
    return before === 'bypass' && !this.config.allowBypass ? 'default' : before
  }

  /** The approval service, when one is mounted. */
  approval(): ToolApproval | undefined {
    return this.home.get('approval')
  }

  /** Whether `agent`'s plan mode comes from its parent (then only the parent can leave it). */
  planInherited(agent: Agent): boolean {
    const state = this.state(agent)
    return state.own !== 'plan' && this.effective(state) === 'plan'
  }

  // ── rules ───────────────────────────────────────────────────────────

  /** Every rule that applies to `agent` now, with its layer (remembered answers of its current mode last). */
  rules(agent: Agent): readonly LayeredRule[] {
    const state = this.state(agent)
    return [
      ...layer('defaults', this.config.defaults),
      ...this.projectRules,
      ...this.userRules,
      ...layer('session', this.config.rules),
      ...(state.remembered.get(this.effective(state)) ?? []),
    ]
  }

  /**
   * Remembers `decision` for calls in `scope` for the rest of `agent`'s
   * session, in its current mode only (never written to a file). What an
   * approval answer with `remember` does.
   */
  remember(agent: Agent, scope: ApprovalScope & { tool: string }, decision: 'allow' | 'deny', mode = this.mode(agent)): void {
    const state = this.state(agent)
    const match: { path?: string; command?: string } = {}
    if (scope.path !== undefined) match.path = scope.path
    if (scope.command !== undefined) match.command = scope.command
    const rule: PermissionRule = Object.freeze({ tool: scope.tool, ...(Object.keys(match).length ? { match: Object.freeze(match) } : {}), decision })
    const problem = ruleProblem(rule)
    if (problem) throw new PermissionsError('INVALID_SETTINGS', `cannot remember ${JSON.stringify(rule)}: ${problem}`)
    const list = state.remembered.get(mode) ?? []
    if (!list.some((existing) => JSON.stringify(existing.rule) === JSON.stringify(rule))) list.push(Object.freeze({ layer: 'remembered', rule }))
    state.remembered.set(mode, list)
  }

  /** The answers remembered for `agent` in `mode` (default: its current mode). */
  remembered(agent: Agent, mode = this.mode(agent)): readonly PermissionRule[] {
    return (this.state(agent).remembered.get(mode) ?? []).map((layered) => layered.rule)
  }

  /**
   * What the checks decide for `invocation` now (for UIs and tests; the
   * pipeline calls it through its listener and guard). Never asks anyone.
   */
  async decide(invocation: ToolInvocation): Promise<PermissionVerdict> {
    const state = this.state(invocation.agent)
    const mode = this.effective(state)
    const facts = await this.factsOf(invocation)
    const tool = invocation.call.name
    const final = (rule: string, reason: string): PermissionVerdict => ({ decision: 'deny', final: true, rule, mode, reason })

    const failures = this.failures(state, invocation.call)
    if (failures >= this.config.repeatLimit) return final('repeat guard', repeatDenial(tool, failures))
    const matched = matchRules(this.rules(invocation.agent), facts)
    if (matched?.decision === 'deny') return final(labelOf(matched.rules[0]!), ruleDenial(labelOf(matched.rules[0]!)))

    let readOnlyCommand = false
    if (mode === 'plan' && facts.effect !== 'read') {
      const inherited = state.own !== 'plan'
      if (!facts.shell || !facts.command) return final('plan mode: read-only', planDenial(tool, facts.effect, inherited))
      const problem = readOnlyProblem(facts.command, this.config.readOnlyCommands)
      if (problem) return final('plan mode: read-only', planShellDenial(problem, inherited))
      readOnlyCommand = true
    }
    if (matched?.decision === 'ask') {
      if (mode === 'bypass') return { decision: 'allow', final: false, rule: `mode bypass (over ${labelOf(matched.rules[0]!)})`, mode }
      return { decision: 'ask', final: false, rule: labelOf(matched.rules[0]!), mode, question: this.question(invocation) }
    }
    if (matched?.decision === 'allow') return { decision: 'allow', final: false, rule: matched.rules.map(labelOf).join(' + '), mode }
    if (readOnlyCommand) return { decision: 'allow', final: false, rule: 'plan mode: read-only command', mode }
    if (facts.effect === 'read') return { decision: 'allow', final: false, rule: `mode ${mode}: read`, mode }
    if (mode === 'bypass') return { decision: 'allow', final: false, rule: 'mode bypass', mode }
    if (facts.effect === 'write' && mode === 'accept-edits' && facts.path?.inside) {
      return { decision: 'allow', final: false, rule: 'mode accept-edits: write inside the workspace', mode }
    }
    const scope = suggestScope(tool, facts)
    return { decision: 'ask', final: false, rule: `mode ${mode}: ${facts.effect} asks`, mode, question: this.question(invocation), ...(scope ? { scope } : {}) }
  }

  // ── the workspace settings and trust ────────────────────────────────

  /** The workspace's `.dsh/settings.json`: whether it exists, is trusted, and how many rules it holds. Undefined without a root. */
  workspaceSettings(): WorkspaceSettingsStatus | undefined {
    return this.project
  }

  /**
   * The person trusts the workspace: recorded in the trust store of the
   * user's directory (in memory only with `userDirectory: false`), and its
   * `.dsh/settings.json` rules apply from now on. Throws `INVALID_SETTINGS`
   * when the file is malformed (then nothing of it applies), `TRUST_STORE`
   * when the store cannot be written.
   */
  async trustWorkspace(): Promise<WorkspaceSettingsStatus | undefined> {
    if (this.root === undefined) return undefined
    if (this.trustStore) await this.trustStore.trust(this.root)
    else this.trustedHere.add(resolve(this.root))
    await this.loadProject()
    return this.project
  }

  private async loadProject(): Promise<void> {
    const root = this.root
    if (root === undefined) return
    const file = join(root, PROJECT_SETTINGS)
    // The user's own settings file is never read a second time as a project's (a workspace at ~).
    if (this.config.userDirectory !== false && resolve(file) === resolve(this.config.userDirectory, SETTINGS_FILE)) {
      this.project = { file, exists: false, trusted: false, rules: 0 }
      return
    }
    const trusted = this.trustStore ? await this.trustStore.isTrusted(root) : this.trustedHere.has(resolve(root))
    let rules: PermissionRule[] | undefined
    try {
      rules = await readSettingsRules(file)
    } catch (error) {
      // An untrusted file is never used: its being malformed matters only once trusted.
      if (trusted) throw error
      this.project = { file, exists: true, trusted, rules: 0 }
      return
    }
    this.project = { file, exists: rules !== undefined, trusted, rules: rules?.length ?? 0 }
    this.projectRules = trusted ? layer('project', rules ?? [], file) : []
  }

  // ── the pipeline's seams ────────────────────────────────────────────

  private async preExecute(invocation: ToolInvocation, next: () => Promise<PreExecuteDecision>): Promise<PreExecuteDecision> {
    const inner = await next()
    const verdict = await this.decide(invocation)
    const record = (decision: PermissionDecision, rule: string): PermissionDecisionRecord => ({
      callId: String(invocation.call.id),
      tool: invocation.call.name,
      decision,
      rule,
      mode: verdict.mode,
    })
    if (verdict.decision === 'deny') {
      this.log(invocation.agent, record('deny', verdict.rule))
      return { kind: 'deny', reason: verdict.reason! }
    }
    if (inner.kind === 'deny') {
      this.log(invocation.agent, record('deny', 'another tools/pre-execute policy'))
      return inner
    }
    if (verdict.decision === 'ask' || inner.kind === 'ask') {
      const ours = verdict.decision === 'ask'
      this.pending.set(key(invocation.agent, invocation.call), {
        record: record('ask', ours ? verdict.rule : 'another tools/pre-execute policy'),
        agent: invocation.agent,
        logged: false,
      })
      const reason = ours ? verdict.question : inner.kind === 'ask' ? inner.reason : undefined
      return { kind: 'ask', ...(reason !== undefined ? { reason } : {}), ...(ours && verdict.scope ? { scope: verdict.scope } : {}) }
    }
    this.log(invocation.agent, record('allow', verdict.rule))
    return { kind: 'allow' }
  }

  /** The guard: the final denials again, judged now (a mode changed while the person was asked still counts). */
  private async guard(invocation: ToolInvocation): Promise<{ kind: 'deny'; reason: string } | undefined> {
    const verdict = await this.decide(invocation)
    if (!verdict.final) return undefined
    // The listener let the call through (the mode changed since, or an outer policy decided without
    // asking it): the guard's denial is logged as the call's decision too.
    this.log(invocation.agent, { callId: String(invocation.call.id), tool: invocation.call.name, decision: 'deny', rule: verdict.rule, mode: verdict.mode })
    return { kind: 'deny', reason: verdict.reason! }
  }

  private answered(request: ApprovalRequest, answer: ApprovalAnswer): void {
    const id = key(request.agent, request.call)
    const pending = this.pending.get(id)
    if (answer.remember) {
      const mode = pending?.record.mode ?? this.mode(request.agent)
      this.remember(request.agent, { ...answer.remember, tool: answer.remember.tool ?? request.call.name }, answer.decision, mode)
    }
    if (!pending || pending.logged) return
    pending.record.answer = answer.decision
    if (answer.remember) pending.record.remember = { ...answer.remember }
    this.log(pending.agent, pending.record)
  }

  private settled(agent: Agent, call: ToolCall, result: ToolCallResult): void {
    const id = key(agent, call)
    const pending = this.pending.get(id)
    this.pending.delete(id)
    if (pending && !pending.logged) this.log(agent, pending.record)
    // The repeat guard counts failures of identical calls within a turn.
    const state = this.agents.get(agent.id)
    if (!state) return
    const turn = agent.session?.position.openTurn?.turn ?? -1
    if (state.repeat.turn !== turn) state.repeat = { turn, failures: new Map() }
    const identity = callIdentity(call)
    if (result.error) state.repeat.failures.set(identity, (state.repeat.failures.get(identity) ?? 0) + 1)
    else state.repeat.failures.delete(identity)
  }

  /** Appends the decision; the call stays known (as logged) until its `tools/result`. */
  private log(agent: Agent, record: PermissionDecisionRecord): void {
    const id = key(agent, { id: record.callId })
    const pending = this.pending.get(id)
    if (pending) pending.logged = true
    else this.pending.set(id, { record, agent, logged: true })
    try {
      agent.session.append('permission/decision', { ...record, ...(record.remember ? { remember: { ...record.remember } } : {}) })
    } catch (error) {
      this.home.logger('dsh-permissions').warn('could not log the permission decision of call %s: %s', record.callId, error instanceof Error ? error.message : String(error))
    }
  }

  private failures(state: AgentState, call: ToolCall): number {
    const turn = state.agent.session?.position.openTurn?.turn ?? -1
    if (state.repeat.turn !== turn) return 0
    return state.repeat.failures.get(callIdentity(call)) ?? 0
  }

  private question(invocation: ToolInvocation): string {
    const workspace = this.home.get('workspaceTools') as { describe?(invocation: Pick<ToolInvocation, 'tool' | 'args'>): string | undefined } | undefined
    return workspace?.describe?.(invocation) ?? genericQuestion(invocation.call.arguments)
  }

  private factsOf(invocation: ToolInvocation): Promise<CallFacts & { effect: ToolEffect; shell: boolean }> {
    let facts = this.facts.get(invocation)
    if (!facts) {
      facts = this.gather(invocation)
      this.facts.set(invocation, facts)
    }
    return facts
  }

  private async gather(invocation: ToolInvocation): Promise<CallFacts & { effect: ToolEffect; shell: boolean }> {
    const args = (invocation.args ?? {}) as Record<string, unknown>
    const raw = typeof args.path === 'string' ? args.path : typeof args.file_path === 'string' ? args.file_path : undefined
    const root = this.root ?? invocation.agent.session?.meta.cwd
    let path: CallFacts['path']
    if (raw !== undefined && raw !== '' && !raw.includes('\0')) {
      const absolute = root !== undefined ? resolve(root, raw) : isAbsolute(raw) ? resolve(raw) : undefined
      const within = root !== undefined && absolute !== undefined ? relative(root, absolute) : isAbsolute(raw) ? undefined : relativeOf(raw)
      const lexicallyInside = within !== undefined && within !== '..' && !within.startsWith(`..${sep}`) && !isAbsolute(within)
      const relativePath = lexicallyInside ? within.split(sep).join('/') || '.' : undefined
      let inside = lexicallyInside && root !== undefined
      const workspace = this.home.get('workspaceTools') as { root?: string; definitions?: Record<string, unknown>; contains?(path: string): Promise<boolean> } | undefined
      // The workspace tools resolve symbolic links: a link out of the workspace is not inside.
      if (inside && workspace?.contains && Object.values(workspace.definitions ?? {}).includes(invocation.tool)) inside = await workspace.contains(raw)
      path = { absolute: absolute ?? raw, inside, ...(relativePath !== undefined ? { relative: relativePath } : {}) }
    }
    const command: ShellCommand | undefined = typeof args.command === 'string' ? await parseShellCommand(args.command) : undefined
    return {
      tool: invocation.call.name,
      effect: effectOf(invocation.tool),
      shell: this.config.shellTools.includes(invocation.call.name),
      ...(path ? { path } : {}),
      ...(command ? { command } : {}),
    }
  }

  // ── agents ──────────────────────────────────────────────────────────

  private state(agent: Agent): AgentState {
    return this.agents.get(agent.id) ?? this.track(agent)
  }

  /** Starts tracking an agent: its start mode, its parent from the session meta, and what the model was told before (a resumed log). */
  private track(agent: Agent): AgentState {
    const existing = this.agents.get(agent.id)
    if (existing) return existing
    const state: AgentState = {
      agent,
      own: this.config.mode,
      told: lastToldMode(agent),
      remembered: new Map(),
      repeat: { turn: -1, failures: new Map() },
    }
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

  private forget(agent: Agent): void {
    const gone = this.agents.get(agent.id)
    if (!gone) return
    const last = this.effective(gone)
    this.agents.delete(agent.id)
    for (const state of this.agents.values()) {
      if (state.parent === agent.id) state.orphanCeiling = last
    }
    for (const [id, pending] of this.pending) if (pending.agent.id === agent.id) this.pending.delete(id)
  }

  private ceiling(state: AgentState): PermissionMode | undefined {
    if (state.parent === undefined) return undefined
    const parent = this.agents.get(state.parent)
    return parent ? this.effective(parent) : state.orphanCeiling ?? 'default'
  }

  private effective(state: AgentState, depth = 0): PermissionMode {
    const ceiling = depth > 32 ? 'plan' : this.ceilingAt(state, depth)
    return ceiling === undefined ? state.own : stricterMode(state.own, ceiling)
  }

  private ceilingAt(state: AgentState, depth: number): PermissionMode | undefined {
    if (state.parent === undefined) return undefined
    const parent = this.agents.get(state.parent)
    return parent ? this.effective(parent, depth + 1) : state.orphanCeiling ?? 'default'
  }

  /** Tells the model (and the log) when the mode it works under changed; then its children. */
  private tell(state: AgentState, cause: ModeChangeCause): void {
    const mode = this.effective(state)
    if (mode !== state.told) {
      const previous = state.told
      state.told = mode
      const { agent } = state
      try {
        agent.session.append('permission/mode', { mode, previous, cause })
        agent.inject({ content: modeMessage(mode, cause), source: { kind: 'plugin', plugin: 'permissions' }, metadata: { permissionMode: mode } })
      } catch (error) {
        this.home.logger('dsh-permissions').warn('could not tell agent %s about its %s mode: %s', agent.id, mode, error instanceof Error ? error.message : String(error))
      }
    }
    for (const child of this.agents.values()) {
      if (child.parent === state.agent.id && child !== state) this.tell(child, 'parent')
    }
  }
}

export namespace Permissions {
  export type Config = PermissionsConfig
}

function layer(name: LayeredRule['layer'], rules: readonly PermissionRule[], file?: string): LayeredRule[] {
  return rules.map((rule) => Object.freeze({ layer: name, rule, ...(file !== undefined ? { file } : {}) }))
}

function key(agent: Agent, call: { id: unknown }): string {
  return `${agent.id}\u0000${String(call.id)}`
}

/** Two calls are identical when they name the same tool with the same arguments (keys in any order). */
function callIdentity(call: ToolCall): string {
  try {
    return `${call.name}\u0000${stableJson(JSON.parse(call.arguments || '{}'))}`
  } catch {
    return `${call.name}\u0000${call.arguments}`
  }
}

function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((name) => `${JSON.stringify(name)}:${stableJson((value as Record<string, unknown>)[name])}`)
      .join(',')}}`
  }
  return JSON.stringify(value)
}

function relativeOf(raw: string): string {
  const parts: string[] = []
  for (const part of raw.split(/[\\/]+/)) {
    if (part === '' || part === '.') continue
    if (part === '..') {
      if (!parts.length) return `..${sep}`
      parts.pop()
    } else parts.push(part)
  }
  return parts.join(sep)
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

/**
 * What an "always" answer to a question the mode raised covers: edits in
 * the file's directory (`src/cli/**`, or the file itself at the root), a
 * command by its first word or two (`git status`, `npm test`, `ls`; none for
 * a compound command or one that writes a file), or every call of the tool.
 */
function suggestScope(tool: string, facts: CallFacts): ApprovalScope | undefined {
  if (facts.command) {
    const command = facts.command
    if (command.kind !== 'parsed' || command.parts.length !== 1 || command.writes.length) return undefined
    const part = command.parts[0]!
    const [first, second] = part.words
    if (part.assignments || !first || first.text === undefined || first.expands || !/^[\w.+-][\w./+-]*$/.test(first.text)) return undefined
    const words = [first.text]
    if (second && second.text !== undefined && !second.expands && /^[a-z][\w:-]*$/i.test(second.text)) words.push(second.text)
    return { tool, command: words.join(' ') }
  }
  if (facts.path) {
    const relativePath = facts.path.relative
    if (!facts.path.inside || relativePath === undefined || relativePath === '.') return undefined
    const slash = relativePath.lastIndexOf('/')
    return { tool, path: slash < 0 ? relativePath.replace(/[*?[\]{}\\]/g, '\\$&') : `${relativePath.slice(0, slash).replace(/[*?[\]{}\\]/g, '\\$&')}/**` }
  }
  return { tool }
}
