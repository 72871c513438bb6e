import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { FakeProvider, openStream, send } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { CliError } from '../src/cli/errors'
import { resolveSettings } from '../src/cli/settings'
import { onlySession, runDemo, tempDir, workspace } from './helpers'

type Event = { type: string } & Record<string, unknown>

/** One answer of the Messages API event stream: `blocks` are `[content_block_start, ...deltas]` per block. */
function answer(blocks: Event[][], stopReason: string, usage: Record<string, number>): Event[] {
  const events: Event[] = [{ type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', content: [], usage: { input_tokens: usage.input_tokens, output_tokens: 1 } } }]
  blocks.forEach((block, index) => {
    for (const event of block) events.push({ ...event, index })
    events.push({ type: 'content_block_stop', index })
  })
  events.push({ type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage }, { type: 'message_stop' })
  return events
}

async function resolved(args: string[], env: NodeJS.ProcessEnv) {
  try {
    const settings = await resolveSettings(args, env, tempDir())
    if (settings === 'help') throw new Error('unexpected help')
    const { route } = settings
    return { kind: route.kind, provider: route.provider, model: route.model }
  } catch (error) {
    if (error instanceof CliError) return { code: error.code, message: error.message }
    throw error
  }
}

describe('dsh-demo --provider anthropic (dsh-llm-anthropic)', { timeout: 240_000 }, () => {
  it('chooses the Anthropic adapter by provider or by a model only its presets list, and asks for the key first', async () => {
    const keys = { ANTHROPIC_API_KEY: 'sk-ant-x', DEEPSEEK_API_KEY: 'sk-ds-x' }
    expect([
      await resolved(['--provider', 'anthropic'], keys),
      await resolved(['--provider', 'deepseek-anthropic'], keys),
      await resolved(['--model', 'claude-opus-5-5'], keys),
      // A model the OpenAI-compatible DeepSeek preset lists keeps that route.
      await resolved(['--model', 'deepseek-v4-flash'], keys),
      await resolved(['--provider', 'anthropic'], {}),
    ]).toEqual([
      { kind: 'anthropic', provider: 'anthropic', model: 'claude-sonnet-5-5' },
      { kind: 'anthropic', provider: 'deepseek-anthropic', model: 'deepseek-v4-flash' },
      { kind: 'anthropic', provider: 'anthropic', model: 'claude-opus-5-5' },
      { kind: 'openai', provider: 'deepseek', model: 'deepseek-v4-flash' },
      { code: 'INVALID_MODEL', message: 'ANTHROPIC_API_KEY is not set: export the API key of provider "anthropic" in it (or name another variable with --api-key-env)' },
    ])
  })

  it('runs a tool turn against a Messages API server: breakpoints on every request, the second reading where the first ended, cache hits in the cost line, no key in the output', async () => {
    const cwd = workspace()
    const data = tempDir()
    const secret = 'sk-ant-demo-0123456789abcdef'
    const server = await FakeProvider.start()
    const replies = [
      answer(
        [
          [
            { type: 'content_block_start', content_block: { type: 'thinking', thinking: '', signature: '' } },
            { type: 'content_block_delta', delta: { type: 'thinking_delta', thinking: 'List it.' } },
            { type: 'content_block_delta', delta: { type: 'signature_delta', signature: 'c2lnbmVkLWJ5LWNsYXVkZQ==' } },
          ],
          [{ type: 'content_block_start', content_block: { type: 'redacted_thinking', data: 'ENCRYPTED+/=' } }],
          [{ type: 'content_block_start', content_block: { type: 'tool_use', id: 'toolu_a', name: 'list_dir', input: {} } }, { type: 'content_block_delta', delta: { type: 'input_json_delta', partial_json: '{"path":"."}' } }],
        ],
        'tool_use',
        {
        input_tokens: 300,
        output_tokens: 10,
        cache_read_input_tokens: 0,
        cache_creation_input_tokens: 2000,
      }),
      answer([[{ type: 'content_block_start', content_block: { type: 'text', text: '' } }, { type: 'content_block_delta', delta: { type: 'text_delta', text: 'Three entries.' } }]], 'end_turn', {
        input_tokens: 100,
        output_tokens: 3,
        cache_read_input_tokens: 2000,
        cache_creation_input_tokens: 340,
      }),
    ]
    for (const events of replies) {
      server.handle(async (_request, res) => {
        openStream(res)
        for (const event of events) await send(res, event, event.type)
        res.end()
      })
    }
    try {
      const { status, stdout, stderr } = await runDemo(['-p', 'what is here?', '--provider', 'anthropic', '--base-url', server.origin, '--api-key-env', 'DEMO_ANTHROPIC_KEY', '--data-dir', data], {
        cwd,
        env: { DEMO_ANTHROPIC_KEY: secret },
      })
      expect({ status, stdout }).toEqual({ status: 0, stdout: 'Three entries.\n' })
      expect(server.requests.map((r) => [r.url, r.headers['x-api-key'], (r.body as { model: string }).model])).toEqual([
        ['/v1/messages', secret, 'claude-sonnet-5-5'],
        ['/v1/messages', secret, 'claude-sonnet-5-5'],
      ])
      const [first, second] = server.requests.map((r) => r.body as { system: { cache_control?: unknown }[]; tools: { cache_control?: unknown }[]; messages: { role: string; content: Record<string, unknown>[] }[] })
      const marks = (body: typeof first) => body!.messages.map((m) => m.content.map((block) => (block.cache_control ? `${m.role}:${String(block.type)}` : '')).filter(Boolean)).flat()
      expect([first!.system.at(-1)!.cache_control, first!.tools.at(-1)!.cache_control, second!.tools.at(-1)!.cache_control]).toEqual([{ type: 'ephemeral' }, { type: 'ephemeral' }, { type: 'ephemeral' }])
      // The first request marks its end; the second marks the first's end (read) and its own (written).
      expect([marks(first), marks(second)]).toEqual([['user:text'], ['user:text', 'user:tool_result']])
      // The thinking went through the loop's log and back: signed thinking and redacted thinking replayed unchanged.
      expect(second!.messages[1]).toEqual({
        role: 'assistant',
        content: [
          { type: 'thinking', thinking: 'List it.', signature: 'c2lnbmVkLWJ5LWNsYXVkZQ==' },
          { type: 'redacted_thinking', data: 'ENCRYPTED+/=' },
          { type: 'tool_use', id: 'toolu_a', name: 'list_dir', input: { path: '.' } },
        ],
      })
      // 300 + 2000 written, then 100 + 2000 read + 340 written: 2,000 of 4,740 input tokens were cache hits.
      expect(stderr).toMatch(/· 4,740 tokens in \(cache hits 42%\) · 13 out/)
      const saved = readFileSync(join(data, `${onlySession(data).id}.jsonl`), 'utf8')
      expect([stdout, stderr, saved].some((text) => text.includes(secret))).toBe(false)
    } finally {
      await server.stop()
    }
  })
})
