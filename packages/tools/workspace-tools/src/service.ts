import '@deepseek-ai/dsh-agent'
import { effectOf, isToolError, type ToolDefinition, type ToolInvocation } from '@deepseek-ai/dsh-tools'
import { describeCall } from './approval'
import { WORKSPACE_TOOL_NAMES, WorkspaceToolsConfig, type WorkspaceToolName } from './config'
import { Context, Service } from './cordis'
import type { ToolHost } from './host'
import { FileLocks } from './file-locks'
import { ReadLedger } from './read-ledger'
import { detectSandbox, findExecutable, type SandboxStatus } from './sandbox'
import { editFileTool } from './tools/edit-file'
import { globTool } from './tools/glob'
import { grepTool } from './tools/grep'
import { listDirTool } from './tools/list-dir'
import { readFileTool } from './tools/read-file'
import { shellTool } from './tools/shell'
import type { ShellTasks } from './tools/shell-tasks'
import { writeFileTool } from './tools/write-file'
import { Workspace } from './workspace'

declare module 'cordis' {
  interface Context {
    workspaceTools: WorkspaceTools
  }
}

/**
 * `ctx.workspaceTools`: the workspace tools (`read_file`, `list_dir`,
 * `glob`, `grep`, `write_file`, `edit_file`, `shell`) confined to one
 * directory, registered on `ctx.tools` (global to every agent, reverted with
 * the plugin).
 *
 * When it starts it opens the workspace (a missing root fails the plugin with
 * `WorkspaceRootError`) and decides how `shell` runs (bubblewrap when
 * available; `SandboxUnavailableError` when it was required and is not).
 *
 * Approval: a `tools/pre-execute` listener turns the `allow` of a call whose
 * effect is in `askBefore` (`write` and `execute` by default) into `ask`,
 * with `describe()`'s question as the reason, so the call goes to
 * `ctx.approval` (a denial when none is mounted). A call whose path would be
 * refused is not asked about (the body refuses it with its own code). A
 * policy registered after this one that denies still wins. When a
 * permissions service is mounted (`ctx.permissions`, dsh-permissions), this
 * listener asks nothing: the permissions decide, by their mode and rules,
 * and ask with `describe()`'s question themselves.
 */
export class WorkspaceTools extends Service {
  static readonly inject = ['tools']
  static readonly Config = WorkspaceToolsConfig

  /** The tools' definitions, by name (those excluded by the config are absent). */
  readonly definitions: Readonly<Partial<Record<WorkspaceToolName, ToolDefinition>>> = {}
  /** How `shell` runs here. */
  sandbox: SandboxStatus = { kind: 'none', reason: 'not started' }
  private workspace!: Workspace
  private readonly ledger = new ReadLedger()
  private readonly home: Context
  /** Every registered definition of ours, by tool name (the shell's background variant too). */
  private readonly names = new Map<ToolDefinition, WorkspaceToolName>()

  constructor(
    ctx: Context,
    private readonly config: WorkspaceToolsConfig,
  ) {
    super(ctx, 'workspaceTools')
    this.home = ctx
  }

  /** The workspace root as given (absolute). */
  get root(): string {
    return this.workspace.root
  }

  async [Service.init](): Promise<void> {
    const { config } = this
    this.workspace = await Workspace.open(config.root)
    const excluded = new Set(config.exclude)
    this.sandbox = excluded.has('shell')
      ? { kind: 'none', reason: 'the shell tool is excluded' }
      : await detectSandbox(config.shell, this.workspace.realRoot)
    const skipDirectories = new Set(config.skipDirectories)
    const host: ToolHost = {
      workspace: this.workspace,
      ledger: this.ledger,
      locks: new FileLocks(),
      limits: config.limits,
      walkOptions: (signal) => ({ signal, gitignore: config.gitignore, skipDirectories, maxEntries: config.limits.maxWalkEntries }),
    }
    const shell = (await findExecutable('bash')) ?? '/bin/sh'
    // Each builder returns its own ToolDefinition<Args>; the registry holds them as ToolDefinition.
    const build: Record<WorkspaceToolName, () => object> = {
      read_file: () => readFileTool(host),
      list_dir: () => listDirTool(host),
      glob: () => globTool(host),
      grep: () => grepTool(host),
      write_file: () => writeFileTool(host),
      edit_file: () => editFileTool(host),
      shell: () => shellTool(host, { config: config.shell, sandbox: this.sandbox, shell }),
    }
    const names = this.names
    const definitions = this.definitions as Partial<Record<WorkspaceToolName, ToolDefinition>>
    for (const name of WORKSPACE_TOOL_NAMES) {
      if (excluded.has(name)) continue
      const definition = build[name]() as ToolDefinition
      definitions[name] = definition
      names.set(definition, name)
      this.home.tools.register(definition)
    }
    if (definitions.shell) {
      // With ctx.tasks (dsh-tasks) mounted, shell takes `background: true`: that variant shadows the
      // plain one while the tasks service is there, and the plain one is back when it goes.
      const shellSetup = { config: config.shell, sandbox: this.sandbox, shell }
      this.home.inject(['tools', 'tasks'], (inner) => {
        const variant = shellTool(host, shellSetup, inner.get('tasks') as ShellTasks) as ToolDefinition
        names.set(variant, 'shell')
        inner.tools.register(variant)
        inner.effect(() => () => void names.delete(variant))
      })
    }
    const askBefore = new Set<string>(config.askBefore)
    const workspace = this.workspace
    this.home.on('tools/pre-execute', async (invocation, next) => {
      const name = names.get(invocation.tool)
      if (name === undefined || !askBefore.has(effectOf(invocation.tool))) return next()
      // A permissions service (dsh-permissions, `ctx.permissions`) decides who is asked, and with
      // describe()'s question: asking here as well would ask twice, or against its mode.
      if (this.home.get('permissions')) return next()
      if (name === 'write_file' || name === 'edit_file') {
        // Nobody is asked about a change that cannot happen: the body refuses it with its own code.
        try {
          const target = await workspace.writable(String((invocation.args as { path?: unknown }).path))
          if (name === 'edit_file' && !target.exists) return next()
        } catch (error) {
          if (isToolError(error)) return next()
          throw error
        }
      }
      const decision = await next()
      if (decision.kind !== 'allow') return decision
      return { kind: 'ask', reason: describeCall(name, invocation.args, this.sandbox) }
    })
    this.home.on('agent/disposed', (agent) => this.ledger.forget(agent.id))
  }

  /**
   * The approval question for a call of one of these tools (`write 12 bytes
   * to notes.txt`, `run "npm test" in the workspace. NOT sandboxed …`), or
   * undefined for another tool or a tool that only reads. For permission
   * plugins that ask on their own.
   */
  describe(invocation: Pick<ToolInvocation, 'tool' | 'args'>): string | undefined {
    const name = this.names.get(invocation.tool)
    return name === undefined ? undefined : describeCall(name, invocation.args, this.sandbox)
  }

  /** Whether a path the model wrote stays inside the workspace (symbolic links resolved; it may not exist yet). */
  async contains(path: string): Promise<boolean> {
    try {
      await this.workspace.writable(path)
      return true
    } catch {
      return false
    }
  }
}

export namespace WorkspaceTools {
  export type Config = WorkspaceToolsConfig
}
