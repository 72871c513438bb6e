import { resolve } from 'node:path'
import '@deepseek-ai/dsh-agent'
import type { Agent } from '@deepseek-ai/dsh-agent'
import type {
  ApprovalAnswer,
  ApprovalRequest,
  ApprovalScope,
  PreExecuteDecision,
  ToolApproval,
  ToolCall,
  ToolCallResult,
  ToolInvocation,
} from '@deepseek-ai/dsh-tools'
import { AgentModes } from './agent-modes'
import { gatherFacts, suggestScope, type GatheredFacts, type WorkspaceToolsView } from './call-facts'
import { PermissionsConfig } from './config'
import { Context, Service } from './cordis'
import { DecisionLog } from './decision-log'
import { PermissionsError } from './errors'
import type { PermissionDecisionRecord } from './events'
import { exitPlanModeTool } from './exit-plan-mode'
import { isPermissionMode, type PermissionMode } from './modes'
import { RememberedAnswers } from './remembered-answers'
import { RepeatGuard } from './repeat-guard'
import { labelOf, matchRules, ruleProblem, type CallFacts, type LayeredRule, type PermissionDecision, type PermissionRule } from './rules'
import { SettingsLayers, layer, type WorkspaceSettingsStatus } from './settings-layers'
import { readOnlyProblem } from './shell/read-only'
import { genericQuestion, planDenial, planShellDenial, repeatDenial, ruleDenial, type ModeChangeCause } from './texts'

export type { WorkspaceSettingsStatus } from './settings-layers'

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
  private readonly modes: AgentModes
  private readonly log: DecisionLog
  private readonly repeats = new RepeatGuard()
  private readonly answers = new RememberedAnswers()
  private readonly facts = new WeakMap<ToolInvocation, Promise<GatheredFacts>>()
  private settings!: SettingsLayers

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
    const warn = (message: string) => ctx.logger('dsh-permissions').warn(message)
    this.modes = new AgentModes(config.mode, warn)
    this.log = new DecisionLog(warn)
  }

  async [Service.init](): Promise<void> {
    const { config } = this
    this.root = config.root !== undefined ? resolve(config.root) : this.workspaceTools()?.root
    this.settings = new SettingsLayers(this.root, config.userDirectory)
    await this.settings.load()

    this.home.sessions.registerType('permission/decision', { ignorable: true })
    this.home.sessions.registerType('permission/mode', { ignorable: true })
    this.home.on('tools/pre-execute', (invocation, next) => this.preExecute(invocation, next))
    this.home.tools.guard((invocation) => this.guard(invocation))
    this.home.on('tools/approval', (request, answer) => this.answered(request, answer))
    this.home.on('tools/result', (agent, call, result) => this.settled(agent, call, result))
    this.home.on('agent/created', (agent) => this.modes.track(agent))
    this.home.on('agent/disposed', (agent) => {
      this.modes.forget(agent)
      this.log.forget(agent)
      this.repeats.forget(agent)
      this.answers.forget(agent)
    })
    if (config.exitPlanMode) this.home.tools.register(exitPlanModeTool(this))
  }

  // ── modes ───────────────────────────────────────────────────────────

  /** The mode `agent` works under: its own, capped by its parent's. */
  mode(agent: Agent): PermissionMode {
    return this.modes.mode(agent)
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
    this.modes.set(agent, mode, options.cause ?? 'api')
  }

  /**
   * Makes `parent`'s mode the cap of `child`'s, from now on (for the
   * subagents package, or any code that starts an agent for another). The
   * child's mode drops at once if it was more permissive, and follows the
   * parent's later changes down. An agent whose session names a
   * `parentSession` is linked to it automatically when created.
   */
  inherit(child: Agent, parent: Agent): void {
    this.modes.inherit(child, parent)
  }

  /** The mode that an approved plan returns `agent` to. */
  modeAfterPlan(agent: Agent): PermissionMode {
    const before = this.modes.beforePlan(agent)
    return before === 'bypass' && !this.config.allowBypass ? 'default' : before
  }

  /** Whether `agent`'s plan mode comes from its parent (then only the parent can leave it). */
  planInherited(agent: Agent): boolean {
    return this.modes.own(agent) !== 'plan' && this.modes.mode(agent) === 'plan'
  }

  /** The approval service, when one is mounted. */
  approval(): ToolApproval | undefined {
    return this.home.get('approval')
  }

  // ── rules ───────────────────────────────────────────────────────────

  /** Every rule that applies to `agent` now, with its layer (remembered answers of its current mode last). */
  rules(agent: Agent): readonly LayeredRule[] {
    return [
      ...layer('defaults', this.config.defaults),
      ...this.settings.project,
      ...this.settings.user,
      ...layer('session', this.config.rules),
      ...this.answers.rules(agent, this.mode(agent)),
    ]
  }

  /**
   * Remembers `decision` for calls in `scope` for the rest of `agent`'s
   * session, in its current mode only (never written to a file). What an
   * approval answer with `remember` does.
   */
  remember(agent: Agent, scope: ApprovalScope & { tool: string }, decision: 'allow' | 'deny', mode = this.mode(agent)): void {
    this.answers.remember(agent, scope, decision, mode)
  }

  /** The answers remembered for `agent` in `mode` (default: its current mode). */
  remembered(agent: Agent, mode = this.mode(agent)): readonly PermissionRule[] {
    return this.answers.rules(agent, mode).map((layered) => layered.rule)
  }

  /**
   * What the checks decide for `invocation` now (for UIs and tests; the
   * pipeline calls it through its listener and guard). Never asks anyone.
   * The order: the repeat guard, deny rules, plan mode, ask rules, allow
   * rules, then the mode's table by effect.
   */
  async decide(invocation: ToolInvocation): Promise<PermissionVerdict> {
    const { agent, call } = invocation
    const mode = this.mode(agent)
    const facts = await this.factsOf(invocation)
    const tool = call.name
    const final = (rule: string, reason: string): PermissionVerdict => ({ decision: 'deny', final: true, rule, mode, reason })
    const verdict = (decision: 'allow' | 'ask', rule: string, scope?: ApprovalScope): PermissionVerdict => ({
      decision,
      final: false,
      rule,
      mode,
      ...(decision === 'ask' ? { question: this.question(invocation) } : {}),
      ...(scope ? { scope } : {}),
    })

    const failures = this.repeats.failures(agent, call)
    if (failures >= this.config.repeatLimit) return final('repeat guard', repeatDenial(tool, failures))
    const matched = matchRules(this.rules(agent), facts)
    if (matched?.decision === 'deny') return final(labelOf(matched.rules[0]!), ruleDenial(labelOf(matched.rules[0]!)))

    let readOnlyCommand = false
    if (mode === 'plan' && facts.effect !== 'read') {
      const inherited = this.planInherited(agent)
      if (!facts.shell || !facts.command) return final('plan mode: read-only', planDenial(tool, facts.effect, inherited))
      const problem = readOnlyProblem(facts.command, this.config.readOnlyCommands)
      if (problem) return final('plan mode: read-only', planShellDenial(problem, inherited))
      readOnlyCommand = true
    }
    if (matched?.decision === 'ask') {
      return mode === 'bypass' ? verdict('allow', `mode bypass (over ${labelOf(matched.rules[0]!)})`) : verdict('ask', labelOf(matched.rules[0]!))
    }
    if (matched?.decision === 'allow') return verdict('allow', matched.rules.map(labelOf).join(' + '))
    if (readOnlyCommand) return verdict('allow', 'plan mode: read-only command')
    if (facts.effect === 'read') return verdict('allow', `mode ${mode}: read`)
    if (mode === 'bypass') return verdict('allow', 'mode bypass')
    if (facts.effect === 'write' && mode === 'accept-edits' && facts.path?.inside) {
      // A write there runs code or changes the rules later (a git hook or config, the workspace's permission rules):
      // the mode's blanket allow does not cover it; a rule or an answer of the person's may.
      if (!selfGrantingPath(facts.path)) return verdict('allow', 'mode accept-edits: write inside the workspace')
      return verdict('ask', 'mode accept-edits: a write to .git or .dsh asks', suggestScope(tool, facts))
    }
    return verdict('ask', `mode ${mode}: ${facts.effect} asks`, suggestScope(tool, facts))
  }

  // ── the workspace settings and trust ────────────────────────────────

  /** The workspace's `.dsh/settings.json`: whether it exists, is trusted, and how many rules it holds. Undefined without a root. */
  workspaceSettings(): WorkspaceSettingsStatus | undefined {
    return this.settings.status
  }

  /**
   * The person trusts the workspace: recorded in the trust store of the
   * user's directory (in memory only with `userDirectory: false`), and its
   * `.dsh/settings.json` rules apply from now on. Throws `INVALID_SETTINGS`
   * when the file is malformed (then nothing of it applies), `TRUST_STORE`
   * when the store cannot be written.
   */
  trustWorkspace(): Promise<WorkspaceSettingsStatus | undefined> {
    return this.settings.trust()
  }

  // ── the pipeline's seams ────────────────────────────────────────────

  private async preExecute(invocation: ToolInvocation, next: () => Promise<PreExecuteDecision>): Promise<PreExecuteDecision> {
    const inner = await next()
    const verdict = await this.decide(invocation)
    const { agent, call } = invocation
    const record = (decision: PermissionDecision, rule: string): PermissionDecisionRecord => ({ callId: String(call.id), tool: call.name, decision, rule, mode: verdict.mode })
    const other = 'another tools/pre-execute policy'
    if (verdict.decision === 'deny') {
      this.log.log(agent, record('deny', verdict.rule))
      return { kind: 'deny', reason: verdict.reason! }
    }
    if (inner.kind === 'deny') {
      this.log.log(agent, record('deny', other))
      return inner
    }
    if (verdict.decision === 'ask' || inner.kind === 'ask') {
      const ours = verdict.decision === 'ask'
      this.log.asking(agent, record('ask', ours ? verdict.rule : other))
      const reason = ours ? verdict.question : inner.kind === 'ask' ? inner.reason : undefined
      return { kind: 'ask', ...(reason !== undefined ? { reason } : {}), ...(ours && verdict.scope ? { scope: verdict.scope } : {}) }
    }
    this.log.log(agent, record('allow', verdict.rule))
    return { kind: 'allow' }
  }

  /** The guard: the final denials again, judged now (a mode changed while the person was asked still counts). */
  private async guard(invocation: ToolInvocation): Promise<{ kind: 'deny'; reason: string } | undefined> {
    const verdict = await this.decide(invocation)
    if (!verdict.final) return undefined
    // The listener let the call through (the mode changed since, or an outer policy decided without
    // asking it): the guard's denial is logged as the call's decision too.
    this.log.log(invocation.agent, { callId: String(invocation.call.id), tool: invocation.call.name, decision: 'deny', rule: verdict.rule, mode: verdict.mode })
    return { kind: 'deny', reason: verdict.reason! }
  }

  private answered(request: ApprovalRequest, answer: ApprovalAnswer): void {
    const askedIn = this.log.answered(request.agent, String(request.call.id), answer)
    if (answer.remember) {
      this.remember(request.agent, { ...answer.remember, tool: answer.remember.tool ?? request.call.name }, answer.decision, askedIn ?? this.mode(request.agent))
    }
  }

  private settled(agent: Agent, call: ToolCall, result: ToolCallResult): void {
    this.log.settled(agent, String(call.id))
    this.repeats.record(agent, call, result.error !== undefined)
  }

  private question(invocation: ToolInvocation): string {
    return this.workspaceTools()?.describe?.(invocation) ?? genericQuestion(invocation.call.arguments)
  }

  private workspaceTools(): WorkspaceToolsView | undefined {
    return this.home.get('workspaceTools') as WorkspaceToolsView | undefined
  }

  private factsOf(invocation: ToolInvocation): Promise<GatheredFacts> {
    let facts = this.facts.get(invocation)
    if (!facts) {
      const root = this.root ?? invocation.agent.session?.meta.cwd
      facts = gatherFacts(invocation, { root, shellTools: this.config.shellTools, workspace: this.workspaceTools() })
      this.facts.set(invocation, facts)
    }
    return facts
  }
}

export namespace Permissions {
  export type Config = PermissionsConfig
}

/**
 * Whether a write to `path` (inside the workspace) could run code or widen
 * permissions later, so that accept-edits still asks about it: anything in a
 * `.git` directory at any depth (hooks and `config` run on the person's next
 * `git` command, and do not show in `git diff`) and in the workspace's
 * `.dsh` directory (its `settings.json` holds the workspace's permission
 * rules). Both spellings of a path reached through a link are checked, and
 * names are compared without case (a case-insensitive file system opens
 * `.GIT/hooks` as `.git/hooks`).
 */
function selfGrantingPath(path: NonNullable<CallFacts['path']>): boolean {
  const spellings = [path.relative, path.resolved?.relative]
  return spellings.some((relative) => {
    if (relative === undefined) return false
    const parts = relative.toLowerCase().split('/')
    return parts[0] === '.dsh' || parts.includes('.git')
  })
}
