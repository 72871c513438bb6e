import { FakeProvider, openStream, send } from '@deepseek-ai/dsh-testkit'
import { describe, expect, it } from 'vitest'
import { runDemo, startDemo, tempDir, workspace, type Demo } from './helpers'

/** A `/model` line without its price, which the price table owns. */
const unpriced = (line: string) => line.replace(/ \(\$[^)]*\)/, '')

/** The `/model` listing in `stdout`: from its `model …` line to the next prompt. */
function menu(stdout: string, from = 0): string[] {
  const lines = stdout.split('\n')
  const start = lines.findIndex((line, index) => index >= from && line.startsWith('model '))
  const end = lines.findIndex((line, index) => index > start && line.startsWith('> '))
  return lines.slice(start, end).map(unpriced)
}

const OPENAI_COMPATIBLE = [
  'deepseek/deepseek-chat',
  'deepseek/deepseek-reasoner',
  'deepseek/deepseek-v4-flash',
  'deepseek/deepseek-v4-pro',
  'openai/gpt-4.1',
  'openai/gpt-4.1-mini',
  'openai/gpt-4o',
  'openai/gpt-4o-mini',
  'openai/o4-mini',
  'openai/gpt-5',
  'openai/gpt-5-mini',
]
const ANTHROPIC = [
  'anthropic/claude-fable-5-1',
  'anthropic/claude-opus-5-5',
  'anthropic/claude-sonnet-5-5',
  'anthropic/claude-haiku-5-5',
  'anthropic/claude-opus-5',
  'anthropic/claude-sonnet-5',
  'anthropic/claude-haiku-4-5',
]
const DEEPSEEK_ANTHROPIC = ['deepseek-anthropic/deepseek-v4-flash', 'deepseek-anthropic/deepseek-v4-pro']

/** The key variable of each listed provider. */
const KEY_OF: Record<string, string> = { deepseek: 'DEEPSEEK_API_KEY', openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY', 'deepseek-anthropic': 'DEEPSEEK_API_KEY' }

/** The menu rows of `routes`, each noting its key variable unless `set` holds it. */
function rows(routes: readonly string[], set: readonly string[] = [], current?: string): string[] {
  return routes.map((route) => {
    const key = KEY_OF[route.split('/')[0]!]!
    return `${route === current ? '*' : ' '} ${route}${set.includes(key) ? '' : ` · needs ${key}`}`
  })
}

/** One Messages API answer of `text`. */
async function claudeAnswer(res: Parameters<Parameters<FakeProvider['handle']>[0]>[1], text: string): Promise<void> {
  openStream(res)
  const events: ({ type: string } & Record<string, unknown>)[] = [
    { type: 'message_start', message: { id: 'msg', type: 'message', role: 'assistant', content: [], usage: { input_tokens: 10, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } },
    { type: 'content_block_stop', index: 0 },
    { type: 'message_delta', delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { input_tokens: 10, output_tokens: 2 } },
    { type: 'message_stop' },
  ]
  for (const event of events) await send(res, event, event.type)
  res.end()
}

/**
 * Types `lines` one at a time, each once the previous one is done (the next
 * prompt), then ends the input. A command typed while `/model` is still
 * starting an adapter would run first, so the test waits.
 */
async function typeLines(demo: Demo, lines: readonly string[]): Promise<void> {
  await demo.waitFor(/^> /m)
  for (let index = 0; index < lines.length; index++) {
    demo.write(`${lines[index]}\n`)
    await demo.waitFor(/^> /m, index + 2)
  }
  demo.end()
}

describe.concurrent('dsh-demo /model and API keys', { timeout: 240_000 }, () => {
  it('offline with no key: starts with no warning, and /model lists every model of every route (Anthropic too), each noting the key it still needs', async () => {
    const demo = startDemo(['--data-dir', tempDir()], { cwd: workspace() })
    await typeLines(demo, ['/model', '/model claude-opus-5-5', 'hello'])
    expect(await demo.exited).toBe(0)
    const stdout = demo.stdout()
    expect(demo.stderr()).toBe('')
    // The greeting is the offline one, with no word of keys.
    expect(stdout.split('\n').slice(0, 4).join('\n')).not.toMatch(/API_KEY|key/i)
    expect(menu(stdout)).toEqual([
      'model scripted/demo',
      'models (/model <provider>/<model>, or any model id of a provider):',
      '* scripted/demo',
      ...rows(OPENAI_COMPATIBLE),
      ...rows(ANTHROPIC),
      ...rows(DEEPSEEK_ANTHROPIC),
    ])
    // Choosing a route whose key is missing says which variable to set; the offline model goes on answering.
    expect(stdout).toContain(
      '> \n✗ INVALID_MODEL: ANTHROPIC_API_KEY is not set: export the API key of provider "anthropic" in it (or name another variable with --api-key-env)\n> \nI am the offline demo model',
    )
  })

  it('switches from the offline model to an Anthropic model named alone, once its key is set', async () => {
    const secret = 'sk-ant-menu-0123456789abcdef'
    const demo = startDemo(['--data-dir', tempDir()], { cwd: workspace(), env: { ANTHROPIC_API_KEY: secret } })
    await typeLines(demo, ['/model claude-haiku-4-5', '/model'])
    expect(await demo.exited).toBe(0)
    const stdout = demo.stdout()
    expect(demo.stderr()).toBe('')
    expect(stdout).toMatch(/^model scripted\/demo → anthropic\/claude-haiku-4-5 \(\$1 in · \$0\.1 cache read · \$1\.25 cache write · \$5 out per M tokens\): from the next request on/m)
    expect(menu(stdout, stdout.split('\n').findIndex((line) => line.startsWith('model scripted/demo →')) + 1)).toEqual([
      'model anthropic/claude-haiku-4-5',
      'models (/model <provider>/<model>, or any model id of a provider):',
      '  scripted/demo',
      ...rows(OPENAI_COMPATIBLE),
      ...rows(ANTHROPIC, ['ANTHROPIC_API_KEY'], 'anthropic/claude-haiku-4-5'),
      ...rows(DEEPSEEK_ANTHROPIC),
    ])
    expect(stdout).not.toContain(secret)
  })

  it('on an Anthropic route, /model <model> keeps the provider (its gateway and key) and the next request asks for that model', async () => {
    const server = await FakeProvider.start()
    server.handle((_request, res) => claudeAnswer(res, 'Haiku here.'))
    try {
      const demo = startDemo(['--provider', 'anthropic', '--base-url', server.origin, '--api-key-env', 'DEMO_ANTHROPIC_KEY', '--data-dir', tempDir()], {
        cwd: workspace(),
        env: { DEMO_ANTHROPIC_KEY: 'sk-ant-gateway-0123456789' },
      })
      await typeLines(demo, ['/model claude-haiku-5-5', 'hi'])
      expect(await demo.exited).toBe(0)
      expect(demo.stdout()).toMatch(/^model anthropic\/claude-sonnet-5-5 → anthropic\/claude-haiku-5-5: from the next request on/m)
      expect(demo.stdout()).toContain('Haiku here.')
      expect(server.requests.map((request) => [request.url, request.headers['x-api-key'], (request.body as { model: string }).model])).toEqual([
        ['/v1/messages', 'sk-ant-gateway-0123456789', 'claude-haiku-5-5'],
      ])
    } finally {
      await server.stop()
    }
  })

  it('refuses a blank key variable or a key the adapter cannot send at startup, in one line naming the variable, before any request and without the key', async () => {
    const server = await FakeProvider.start()
    const bad = 'sk-demo\u20130123456789'
    try {
      const cases: { args: string[]; env: Record<string, string> }[] = [
        { args: ['--provider', 'deepseek', '--base-url', server.url], env: { DEEPSEEK_API_KEY: bad } },
        { args: ['--provider', 'deepseek', '--base-url', server.url], env: { DEEPSEEK_API_KEY: '  ' } },
        { args: ['--provider', 'anthropic', '--base-url', server.origin], env: { ANTHROPIC_API_KEY: bad } },
        { args: ['--provider', 'anthropic', '--base-url', server.origin, '--api-key-env', 'MY_KEY'], env: { MY_KEY: '\t' } },
      ]
      const results = []
      for (const { args, env } of cases) results.push(await runDemo([...args, '--data-dir', tempDir()], { cwd: workspace(), env, input: 'hello\n' }))
      expect(results).toEqual([
        {
          status: 2,
          stdout: '',
          stderr:
            'dsh-demo: DEEPSEEK_API_KEY cannot be sent as the API key of provider "deepseek": it contains the non-ASCII character U+2013 at position 8; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break. Export the key again in DEEPSEEK_API_KEY, exactly as issued\n',
        },
        {
          status: 2,
          stdout: '',
          stderr: 'dsh-demo: DEEPSEEK_API_KEY is blank: export the API key of provider "deepseek" in it (or name another variable with --api-key-env)\n',
        },
        {
          status: 2,
          stdout: '',
          stderr:
            'dsh-demo: ANTHROPIC_API_KEY cannot be sent as the API key of provider "anthropic": it contains the character U+2013 at position 8; API keys are printable ASCII, so it was probably pasted with a stray character. Export the key again in ANTHROPIC_API_KEY, exactly as issued\n',
        },
        {
          status: 2,
          stdout: '',
          stderr: 'dsh-demo: MY_KEY is blank: export the API key of provider "anthropic" in it (or name another variable with --api-key-env)\n',
        },
      ])
      expect(server.requests).toEqual([])
    } finally {
      await server.stop()
    }
  })
})
