import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import Compaction from '@deepseek-ai/dsh-compaction'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import AnthropicProviders from '@deepseek-ai/dsh-llm-anthropic'
import OpenAiProviders from '@deepseek-ai/dsh-llm-openai'
import ScriptedPlugin from '@deepseek-ai/dsh-llm-scripted'
import Permissions from '@deepseek-ai/dsh-permissions'
import WorkspaceTools from '@deepseek-ai/dsh-workspace-tools'
import type { InvariantViolation } from '@deepseek-ai/dsh-invariants'
import type { ApprovalRequest, ApprovalResponse } from '@deepseek-ai/dsh-tools'
import { Context } from '../cordis'
import { AgentSpine } from '@deepseek-ai/dsh-agent-spine'
import { ApprovalService } from './approval'
import { mountMcp } from './mcp'
import { mountSubagents } from './subagents'
import type { DemoSettings } from './settings'

/** The running Cordis app of the command line. */
export interface DemoApp {
  /** A context of the app that injects `agents`, `sessions`, `sessionPersistence`, `permissions` and `compaction`: agents created through it belong to the app. */
  readonly ctx: Context
  /** Unloads everything; sessions still live are drained and flushed first. */
  dispose(): Promise<void>
}

/** Extras of the app, from the environment. */
export interface AppOptions {
  /**
   * `DSH_DEMO_PLUGIN`: the path of a module whose default export is a Cordis
   * plugin, mounted after everything else (e.g. a tool of your own). The
   * command line's subprocess tests mount their fault fixtures with it (a tool
   * that never settles, a log that cannot be flushed).
   */
  plugin?: string
}

/**
 * Composes the app: the spine bundle, JSONL persistence under
 * `settings.dataDir`, the model adapter of `settings.route`, the workspace
 * tools confined to `settings.cwd`, the permissions (outside the spine
 * bundle: mode `settings.mode`, `bypass` only when that flag chose it; rules
 * from `~/.dsh/settings.json` and, once trusted, the workspace's
 * `.dsh/settings.json`), dsh-compaction (also outside the bundle: the
 * model's window from its adapter, its default threshold), and `ctx.approval`
 * backed by `decide`.
 * A broken runtime invariant (the spine's companions check every request
 * against the log) is handed to `onViolation`. Rejects when a part cannot
 * start (e.g. the workspace does not exist, or `options.plugin` cannot be
 * loaded).
 */
export async function startApp(
  settings: DemoSettings,
  decide: (request: ApprovalRequest) => Promise<ApprovalResponse>,
  onViolation: (violation: InvariantViolation) => void,
  options: AppOptions = {},
): Promise<DemoApp> {
  const root = new Context()
  let ready!: (ctx: Context) => void
  const injected = new Promise<Context>((resolve) => (ready = resolve))
  const route = settings.route
  const fiber = root.plugin({
    name: 'dsh-demo',
    async apply(ctx: Context) {
      await ctx.plugin(ApprovalService, decide)
      ctx.on('invariants/violation', onViolation)
      await ctx.plugin(AgentSpine, settings.spine)
      await ctx.plugin(JsonlSessionPersistence, { directory: settings.dataDir })
      if (route.kind === 'scripted') await ctx.plugin(ScriptedPlugin, route.scripted)
      else if (route.kind === 'anthropic') await ctx.plugin(AnthropicProviders, { providers: [route.config] })
      else await ctx.plugin(OpenAiProviders, { providers: [route.config] })
      await ctx.plugin(WorkspaceTools, { root: settings.cwd })
      await ctx.plugin(Permissions, { root: settings.cwd, mode: settings.mode, allowBypass: settings.mode === 'bypass' })
      await ctx.plugin(Compaction)
      await mountSubagents(ctx)
      await mountMcp(ctx, settings.mcpServers)
      if (options.plugin !== undefined) await ctx.plugin(await loadPlugin(options.plugin))
      ctx.inject(['agents', 'sessions', 'sessionPersistence', 'permissions', 'compaction'], (inner) => ready(inner))
    },
  })
  await fiber
  const ctx = await injected
  return { ctx, dispose: () => fiber.dispose() }
}

async function loadPlugin(file: string): Promise<Parameters<Context['plugin']>[0]> {
  const module = (await import(pathToFileURL(resolve(file)).href)) as { default?: unknown }
  if (!module.default) throw new Error(`DSH_DEMO_PLUGIN: ${file} has no default export (a Cordis plugin)`)
  return module.default as Parameters<Context['plugin']>[0]
}
