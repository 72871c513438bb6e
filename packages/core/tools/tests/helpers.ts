import { Context } from 'cordis'
import { scoped } from '@deepseek-ai/dsh-scope'
import { SessionId } from '@deepseek-ai/dsh-session'
import { CallId } from '@deepseek-ai/dsh-llm'
import type { Agent } from '@deepseek-ai/dsh-agent'
import Tools, { type ToolCall, type ToolDefinition } from '@deepseek-ai/dsh-tools'

/** A stand-in agent: the tools service only reads `id` and `ctx`. */
export function fakeAgent(root: Context, id: string): Agent {
  return { id: SessionId(id), ctx: scoped(root, id) } as unknown as Agent
}

/** A root context with `ctx.tools` mounted. */
export async function mountTools(config?: { defaultTimeoutMs?: number }) {
  const root = new Context()
  await root.plugin(Tools, config)
  return root
}

export function call(name: string, args: unknown = {}, id = 'call_1'): ToolCall {
  return { id: CallId(id), name, arguments: typeof args === 'string' ? args : JSON.stringify(args) }
}

/** A plain-JSON-Schema tool whose body returns `output`. */
export function echoTool(name: string, output: ToolDefinition['execute'] = () => 'ok', extra: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name,
    description: `the ${name} tool`,
    parameters: { type: 'object', properties: {} },
    execute: output,
    ...extra,
  }
}

export interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
  reject(error: unknown): void
}

export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void
  let reject!: (error: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** The model-visible text and flag of a result's single tool-result block. */
export function resultText(result: { message: { content: readonly unknown[] } }): { text: string; isError: boolean } {
  const block = result.message.content[0] as { type: string; content: { type: string; text?: string }[]; isError?: boolean }
  return { text: block.content.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join(''), isError: block.isError === true }
}
