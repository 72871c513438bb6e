import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { Context } from 'cordis'
import { afterAll } from 'vitest'
import { z } from 'zod'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { CallId } from '@deepseek-ai/dsh-llm'
import type { AnySessionEvent } from '@deepseek-ai/dsh-session'
import { spine, type SpineOptions } from '@deepseek-ai/dsh-testkit'
import { defineTool, type ApprovalRequest, type ApprovalResponse, type ToolDefinition, type ToolEffect } from '@deepseek-ai/dsh-tools'
import Permissions, { type PermissionDecisionRecord, type PermissionsOptions } from '@deepseek-ai/dsh-permissions'

const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the file's tests. */
export function tempDir(prefix = 'dsh-perm-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Writes `files` (relative path → content) under `root`. */
export function writeTree(root: string, files: Record<string, string>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
}

/** What the stand-in tools did, in order. */
export const ran: string[] = []

/** A stand-in tool of one effect that records its call instead of doing anything. */
function recorder(name: string, effect: ToolEffect | undefined, parameters: z.ZodObject): ToolDefinition {
  return defineTool({
    name,
    description: `a ${effect ?? 'undeclared'} tool for tests`,
    parameters,
    ...(effect ? { effect } : {}),
    execute: (args) => {
      ran.push(`${name} ${JSON.stringify(args)}`)
      return `${name} done`
    },
  }) as ToolDefinition
}

/** One stand-in tool per effect, plus a `shell` (execute, `command`) and one that declares no effect. */
export const testTools: ToolDefinition[] = [
  recorder('read_thing', 'read', z.object({ path: z.string().optional() })),
  recorder('write_thing', 'write', z.object({ path: z.string() })),
  recorder('shell', 'execute', z.object({ command: z.string() })),
  recorder('fetch_thing', 'network', z.object({ url: z.string() })),
  recorder('mystery', undefined, z.object({})),
]

/** A tool that always fails (for the repeat guard). */
export const failing = defineTool({
  name: 'flaky',
  description: 'always fails',
  parameters: z.object({ n: z.number() }),
  effect: 'read',
  execute: () => {
    throw new Error('still broken')
  },
}) as ToolDefinition

export interface Harness {
  root: Context
  agent(id?: string, options?: { parent?: string }): Promise<Agent>
  /** Disposes an agent made by `agent()`. */
  dispose(agent: Agent): Promise<void>
  /** Every question the approval service was asked: `tool: reason [scope]`. */
  asked: string[]
  /** The next answers of the approval service (then `'deny'`). */
  answers: Array<ApprovalResponse | ((request: ApprovalRequest) => ApprovalResponse)>
  /** Runs one call directly through `ctx.tools.execute` (outside a turn). */
  call(agent: Agent, name: string, args: Record<string, unknown>): Promise<{ code: string; text: string }>
  model: Awaited<ReturnType<typeof spine>>['model']
  userDirectory: string
}

/**
 * The real spine (dsh-testkit) with the stand-in tools, an approval service
 * that records questions and answers from `answers`, and dsh-permissions on
 * a temporary user directory (never the real `~/.dsh`).
 */
export async function harness(
  options: {
    permissions?: PermissionsOptions
    model?: SpineOptions['model']
    /** Register the stand-in tools (default true). */
    standIns?: boolean
    approval?: boolean
    /** Mounted before the permissions plugin (e.g. the workspace tools, whose root it then reads). */
    before?: (root: Context) => PromiseLike<unknown>
  } = {},
): Promise<Harness> {
  const s = await spine({ model: options.model, tools: options.standIns === false ? [] : [...testTools, failing] })
  const asked: string[] = []
  const answers: Harness['answers'] = []
  if (options.approval !== false) {
    await s.root.plugin({
      apply: (ctx: Context) =>
        void ctx.provide('approval', {
          async request(request: ApprovalRequest) {
            asked.push(`${request.call.name}: ${request.reason}${request.scope ? ` [${JSON.stringify(request.scope)}]` : ''}`)
            const next = answers.shift() ?? 'deny'
            return typeof next === 'function' ? next(request) : next
          },
        }),
    })
  }
  if (options.before) await options.before(s.root)
  const userDirectory = options.permissions?.userDirectory ?? tempDir('dsh-home-')
  await s.root.plugin(Permissions, { ...options.permissions, userDirectory })
  let n = 0
  return {
    root: s.root,
    model: s.model,
    asked,
    answers,
    userDirectory: userDirectory === false ? '' : userDirectory,
    async agent(id = 'a', agentOptions = {}) {
      const handle = await s.root.agents.create({
        sessionId: id as never,
        agentOptions: { provider: 'scripted', model: 'test-model' },
        ...(agentOptions.parent ? { meta: { parentSession: agentOptions.parent as never } } : {}),
      })
      s.handles.push(handle)
      return handle.agent
    },
    async dispose(agent) {
      await s.handles.find((handle) => handle.agent === agent)?.dispose()
    },
    async call(agent, name, args) {
      const result = await s.root.tools.execute({ id: CallId(`call_${++n}`), name, arguments: JSON.stringify(args) }, { agent })
      const block = result.message.content[0] as unknown as { content: { text: string }[] }
      return { code: result.error?.code ?? 'ok', text: block.content.map((part) => part.text).join('') }
    },
  }
}

/** The `permission/decision` records of a session, without the call ids. */
export function decisions(events: readonly AnySessionEvent[]): Omit<PermissionDecisionRecord, 'callId'>[] {
  return events
    .filter((event) => event.type === 'permission/decision')
    .map((event) => {
      const { callId: _callId, ...rest } = event.data as PermissionDecisionRecord
      return rest
    })
}

/** The texts of the injected (`user/message` with `metadata.permissionMode`) messages. */
export function modeMessages(events: readonly AnySessionEvent[]): string[] {
  return events
    .filter((event) => event.type === 'user/message' && (event.data as { metadata?: { permissionMode?: string } }).metadata?.permissionMode !== undefined)
    .map((event) => (event.data as { message: { content: { text: string }[] } }).message.content.map((block) => block.text).join(''))
}
