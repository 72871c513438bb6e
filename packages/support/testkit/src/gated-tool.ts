import { defineTool, type ToolDefinition } from '@deepseek-ai/dsh-tools'
import { z } from 'zod'
import { deferred, type Deferred } from './deferred'

/** What `gatedTool` returns. */
export interface GatedTool {
  /** The tool to register; its parameters are `{ key: string }`. */
  readonly tool: ToolDefinition<any>
  /** Releases the call (or the future call) whose `key` is `key`; its result is `value` (default `result <key>`). */
  release(key: string, value?: string): void
}

/**
 * A tool whose calls wait for the test: the call with arguments `{ key }`
 * logs `start <key>`, waits until `release(key)`, defers a context entry
 * `ctx <key>`, logs `end <key>` and returns the released value. With it a test
 * orders a tool batch deterministically (which call ends first, what runs
 * while another waits). `safe` is its concurrency safety, fixed or asked at
 * each call.
 */
export function gatedTool(name: string, options: { safe: boolean | (() => boolean); log: string[] }): GatedTool {
  const gates = new Map<string, Deferred<string>>()
  const gate = (key: string) => {
    let entry = gates.get(key)
    if (!entry) gates.set(key, (entry = deferred<string>()))
    return entry
  }
  const tool = defineTool({
    name,
    description: `${name} waits for the test`,
    parameters: z.object({ key: z.string() }),
    isConcurrencySafe: () => (typeof options.safe === 'function' ? options.safe() : options.safe),
    execute: async ({ key }, run) => {
      options.log.push(`start ${key}`)
      const out = await gate(key).promise
      run.deferContext({ label: `ctx ${key}`, content: `context of ${key}` })
      options.log.push(`end ${key}`)
      return out
    },
  })
  return { tool, release: (key: string, value = `result ${key}`) => gate(key).resolve(value) }
}
