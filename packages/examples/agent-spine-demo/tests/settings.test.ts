import { join } from 'node:path'
import { homedir } from 'node:os'
import { mkdirSync, writeFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { DEFAULT_IDENTITY } from '@deepseek-ai/dsh-system-prompt'
import { CliError } from '../src/cli/errors'
import { resolveSettings, type DemoSettings } from '../src/cli/settings'
import { tempDir } from './helpers'

/** Resolves settings in `dir` with `files` written there first; no API keys in the environment. */
async function settings(args: string[], files: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}, dir = tempDir()): Promise<DemoSettings> {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  const resolved = await resolveSettings(args, env, dir)
  if (resolved === 'help') throw new Error('unexpected help')
  return resolved
}

/** The error `resolveSettings` rejects with, as `{ code, message }`. */
async function failure(args: string[], files: Record<string, string> = {}, env: NodeJS.ProcessEnv = {}, dir = tempDir()) {
  try {
    await settings(args, files, env, dir)
  } catch (error) {
    if (!(error instanceof CliError)) throw error
    return { code: error.code, message: error.message.replaceAll(dir, '<dir>') }
  }
  throw new Error('expected a CliError')
}

describe('the data directory', () => {
  it('refuses an empty one, from the flag or the config file (the sessions went into the workspace)', async () => {
    expect(await failure(['--data-dir', ''])).toEqual({ code: 'INVALID_ARGS', message: '--data-dir is empty: name the directory of the saved sessions (default ~/.dsh/sessions)' })
    expect(await failure([], { 'dsh.config.json': '{ "dataDir": " " }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: field "dataDir" is empty: name the directory of the saved sessions (default ~/.dsh/sessions)',
    })
  })
})

describe('defaults', () => {
  it('runs the offline scripted demo model in the current directory, saving to ~/.dsh/sessions', async () => {
    const dir = tempDir()
    const resolved = await settings([], {}, {}, dir)
    expect({ ...resolved, route: { ...resolved.route, scripted: undefined } }).toEqual({
      prompt: undefined,
      json: false,
      resume: undefined,
      yes: false,
      mode: 'default',
      dataDir: join(homedir(), '.dsh', 'sessions'),
      cwd: dir,
      configFile: undefined,
      route: { kind: 'scripted', provider: 'scripted', model: 'demo', scripted: undefined },
      reasoningEffort: undefined,
      spine: {
        maxParallelToolCalls: 10,
        durability: 'step',
        agents: [],
        systemPrompt: expect.objectContaining({ identity: DEFAULT_IDENTITY }),
        defaultModel: { provider: 'scripted', model: 'demo' },
        retry: { baseDelayMs: 500, maxDelayMs: 30_000, budgets: {} },
        invariants: { policy: 'log' },
      },
    })
    expect(resolved.route.kind === 'scripted' && resolved.route.scripted).toMatchObject({ demo: true, chunkDelayMs: 0, models: [{ id: 'demo' }] })
  })
})

describe('the config file', () => {
  it('is read from dsh.config.json / .yaml / .yml; paths in it are relative to the file; flags win', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'work'))
    mkdirSync(join(dir, 'other'))
    const yaml = ['cwd: work', 'dataDir: data', 'maxParallelToolCalls: 3', 'systemPrompt:', '  persona: Terse.', 'scripted:', '  chunkDelayMs: 5', ''].join('\n')
    const fromFile = await settings([], { 'dsh.config.yaml': yaml }, {}, dir)
    expect(fromFile.configFile).toBe(join(dir, 'dsh.config.yaml'))
    expect([fromFile.cwd, fromFile.dataDir, fromFile.spine.maxParallelToolCalls, fromFile.spine.systemPrompt.persona]).toEqual([join(dir, 'work'), join(dir, 'data'), 3, 'Terse.'])
    expect(fromFile.route.kind === 'scripted' && fromFile.route.scripted.chunkDelayMs).toBe(5)

    const flagged = await settings(['--cwd', 'other', '--data-dir', 'elsewhere', '--chunk-delay-ms', '40'], {}, {}, dir)
    expect([flagged.cwd, flagged.dataDir]).toEqual([join(dir, 'other'), join(dir, 'elsewhere')])
    expect(flagged.route.kind === 'scripted' && flagged.route.scripted.chunkDelayMs).toBe(40)
  })

  it('names the file and the field of a bad value', async () => {
    expect(await failure([], { 'dsh.config.json': '{ "maxParallelToolCalls": 0 }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: field "maxParallelToolCalls": expected number >= 1 but got 0',
    })
    expect(await failure([], { 'dsh.config.yml': 'retry:\n  maxDelayMs: soon\n' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.yml: field "retry.maxDelayMs": expected number but got soon',
    })
    expect(await failure([], { 'dsh.config.json': '{ "scripted": { "chunkDelayMs": "slow" } }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: field "scripted.chunkDelayMs": expected number but got slow',
    })
  })

  it('refuses a field no one knows, at any depth, instead of ignoring it', async () => {
    expect(await failure([], { 'dsh.config.json': '{ "maxParalelToolCalls": 2 }' })).toEqual({
      code: 'INVALID_CONFIG',
      message:
        '<dir>/dsh.config.json: unknown field "maxParalelToolCalls" (known here: maxParallelToolCalls, durability, agents, systemPrompt, defaultModel, retry, invariants, provider, baseUrl, model, apiKeyEnv, reasoningEffort, dataDir, cwd, scripted, openai, mcpConfig, prices)',
    })
    expect(await failure([], { 'dsh.config.json': '{ "retry": { "maxDelay": 10 } }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: unknown field "retry.maxDelay" (known here: baseDelayMs, maxDelayMs, budgets)',
    })
    expect((await failure([], { 'dsh.config.json': '{ "scripted": { "chunkDelay": 10 } }' })).message).toMatch(/^<dir>\/dsh.config.json: unknown field "scripted.chunkDelay" \(known here: provider, script, demo, chunkDelayMs/)
  })

  it('names the file and the position of a syntax error', async () => {
    expect(await failure([], { 'dsh.config.json': '{ "retry": ' })).toEqual({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/^<dir>\/dsh.config.json: not valid JSON: /),
    })
    expect(await failure([], { 'dsh.config.yaml': 'retry:\n  - a\n  b: c\n' })).toEqual({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/^<dir>\/dsh.config.yaml: not valid YAML: .*line 3/),
    })
    expect(await failure([], { 'dsh.config.yaml': '- just\n- a list\n' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.yaml: the config must be an object of fields (dsh.config.yaml holds a list)',
    })
  })

  it('refuses config agents: the command line drives its own', async () => {
    expect(await failure([], { 'dsh.config.json': '{ "agents": [{ "id": "x" }] }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: field "agents": dsh-demo drives one agent of its own; config agents are for apps that embed the spine',
    })
  })

  it('reads --config <file> wherever it is', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'custom.json'), '{ "invariants": { "policy": "collect" } }')
    expect((await settings(['--config', join(dir, 'custom.json')])).spine.invariants).toEqual({ policy: 'collect' })
    expect((await failure(['--config', join(dir, 'missing.json')], {}, {}, dir)).message).toMatch(/^cannot read the config file <dir>\/missing.json: /)
  })
})

describe('flags', () => {
  it('refuses unknown flags, missing values and contradictions, naming the flag', async () => {
    expect(await failure(['--bogus'])).toEqual({ code: 'INVALID_ARGS', message: 'unknown option --bogus (dsh-demo --help lists the options)' })
    expect(await failure(['-p'])).toEqual({ code: 'INVALID_ARGS', message: '--prompt needs a value (dsh-demo --help lists the options)' })
    expect(await failure(['--json'])).toEqual({ code: 'INVALID_ARGS', message: '--json needs -p: it writes the events of one prompt' })
    expect(await failure(['--chunk-delay-ms', 'fast'])).toEqual({ code: 'INVALID_ARGS', message: '--chunk-delay-ms: expected a whole number of milliseconds, got "fast"' })
    expect(await failure(['--resume', '../etc'])).toEqual({
      code: 'INVALID_ARGS',
      message: '--resume: "../etc" is not a session id (ids are 1-200 characters of A-Z a-z 0-9 . _ -)',
    })
    expect(await failure(['--cwd', 'nowhere'])).toEqual({ code: 'INVALID_ARGS', message: '--cwd: <dir>/nowhere is not a directory' })
    expect(await failure(['hello'])).toEqual({ code: 'INVALID_ARGS', message: 'unexpected argument "hello": pass a prompt with -p "<text>" (dsh-demo --help lists the options)' })
    expect(await failure(['--', '--', '-p', 'x'])).toMatchObject({ code: 'INVALID_ARGS' })
  })

  it('accepts the leading -- that pnpm passes through', async () => {
    const resolved = await settings(['--', '-p', 'hello', '--yes'])
    expect(resolved).toMatchObject({ prompt: 'hello', yes: true })
    expect(await settings(['--mode', 'plan'])).toMatchObject({ mode: 'plan' })
    await expect(settings(['--mode', 'yolo'])).rejects.toThrow('--mode: "yolo" is not a mode (default, accept-edits, plan, bypass)')
  })
})

describe('the model route', () => {
  it('selects a preset by name, with its key from the environment', async () => {
    const resolved = await settings(['--provider', 'deepseek'], {}, { DEEPSEEK_API_KEY: 'sk-test' })
    expect(resolved.route).toEqual({
      kind: 'openai',
      provider: 'deepseek',
      model: 'deepseek-chat',
      // The file's (absent) `openai` section contributes only empty defaults.
      config: { name: 'deepseek', preset: 'deepseek', extraBody: {}, headers: {}, images: {}, models: {} },
      baseUrl: 'https://api.deepseek.com',
      apiKeyEnv: 'DEEPSEEK_API_KEY',
    })
    expect(resolved.spine.defaultModel).toEqual({ provider: 'deepseek', model: 'deepseek-chat' })
  })

  it('selects the preset that knows a model given alone, and a custom server by base URL', async () => {
    expect((await settings(['--model', 'gpt-4.1-mini'], {}, { OPENAI_API_KEY: 'k' })).route).toMatchObject({ kind: 'openai', provider: 'openai', model: 'gpt-4.1-mini' })
    expect((await settings(['--base-url', 'http://127.0.0.1:11434/v1', '--model', 'qwen3:8b'])).route).toEqual({
      kind: 'openai',
      provider: 'custom',
      model: 'qwen3:8b',
      // No image limits of its own: a custom server's images are sent (an absent mediaTypes stays absent; [] would mean "takes no images").
      config: { name: 'custom', baseUrl: 'http://127.0.0.1:11434/v1', extraBody: {}, headers: {}, images: {}, models: {} },
      baseUrl: 'http://127.0.0.1:11434/v1',
    })
    const fromFile = await settings([], { 'dsh.config.json': '{ "provider": "ollama", "baseUrl": "http://127.0.0.1:11434/v1", "model": "qwen3:8b", "openai": { "streamUsage": false } }' })
    expect(fromFile.route).toMatchObject({ kind: 'openai', provider: 'ollama', config: { name: 'ollama', baseUrl: 'http://127.0.0.1:11434/v1', streamUsage: false } })
    expect((await settings([], { 'dsh.config.json': '{ "defaultModel": { "provider": "openai", "model": "gpt-4o" } }' }, { OPENAI_API_KEY: 'k' })).route).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o',
    })
  })

  it('says what is missing: the key variable, a base URL, a provider for an unknown model', async () => {
    expect(await failure(['--provider', 'deepseek'])).toEqual({
      code: 'INVALID_MODEL',
      message: 'DEEPSEEK_API_KEY is not set: export the API key of provider "deepseek" in it (or name another variable with --api-key-env)',
    })
    expect(await failure(['--provider', 'deepseek', '--api-key-env', 'MY_KEY'])).toMatchObject({ message: expect.stringMatching(/^MY_KEY is not set/) })
    expect(await failure(['--provider', 'vllm'])).toEqual({
      code: 'INVALID_MODEL',
      message:
        'provider "vllm" is neither scripted nor a preset (deepseek, openai): give the base URL of its OpenAI-compatible API (--base-url or baseUrl in the config file)',
    })
    expect(await failure(['--model', 'mystery-1'])).toEqual({
      code: 'INVALID_MODEL',
      message: 'no preset knows the model "mystery-1": name its provider (--provider deepseek|openai, or --provider <name> --base-url <url>)',
    })
    expect(await failure(['--base-url', 'ftp://x'])).toMatchObject({ code: 'INVALID_MODEL', message: expect.stringContaining('baseUrl must be an http(s) URL') })
    expect(await failure(['--base-url', 'http://127.0.0.1:1/v1'])).toEqual({ code: 'INVALID_MODEL', message: 'provider "custom" has no default model: pass --model <id>' })
  })
})

describe('out-of-range and empty inputs (issue 15.7)', () => {
  it('refuses a chunk delay longer than a timer can wait, from the flag and from the file', async () => {
    expect(await failure(['--chunk-delay-ms', '99999999999'])).toEqual({
      code: 'INVALID_ARGS',
      message: '--chunk-delay-ms: 99999999999 is out of range (0 to 2147483647 ms, the longest delay a timer can wait)',
    })
    expect(await failure([], { 'dsh.config.json': '{ "scripted": { "chunkDelayMs": 99999999999 } }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: field "scripted.chunkDelayMs": 99999999999 is out of range (0 to 2147483647 ms, the longest delay a timer can wait)',
    })
    const longest = await settings(['--chunk-delay-ms', '2147483647'])
    expect(longest.route.kind === 'scripted' && longest.route.scripted.chunkDelayMs).toBe(2147483647)
  })

  it('refuses a config file that holds null, naming the file; an empty YAML file is an empty config', async () => {
    expect(await failure([], { 'dsh.config.json': 'null' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.json: the config must be an object of fields (dsh.config.json holds null)',
    })
    expect(await failure([], { 'dsh.config.yaml': '~\n' })).toEqual({
      code: 'INVALID_CONFIG',
      message: '<dir>/dsh.config.yaml: the config must be an object of fields (dsh.config.yaml holds null)',
    })
    const empty = await settings([], { 'dsh.config.yaml': '# nothing set yet\n' })
    expect([empty.configFile?.endsWith('dsh.config.yaml'), empty.route.kind]).toEqual([true, 'scripted'])
  })
})

describe('secrets in the base URL (issue 15.3)', () => {
  it('refuses a base URL with a user name or password and never quotes them', async () => {
    const password = 'hunter2-very-secret'
    const refused = await failure(['--provider', 'local', '--base-url', `http://alice:${password}@127.0.0.1:8000/v1`, '--model', 'm'])
    expect(refused.code).toBe('INVALID_MODEL')
    expect(refused.message).not.toContain(password)
    expect(refused.message).not.toContain('alice')
    // The adapter refuses it when the config is loaded (the command line refuses it too, should an adapter not).
    expect(refused.message).toContain('http://[redacted]@127.0.0.1:8000/v1')
    expect(refused.message).toMatch(/carries a user name or password/)
    const fromFile = await failure([], { 'dsh.config.json': JSON.stringify({ provider: 'local', baseUrl: `https://${password}@example.com/v1`, model: 'm' }) })
    expect([fromFile.code, fromFile.message.includes(password)]).toEqual(['INVALID_MODEL', false])
  })
})

describe('prices', () => {
  it('reads prices by provider/model from the config file and refuses a price that is not a number', async () => {
    const resolved = await settings([], { 'dsh.config.json': '{ "prices": { "scripted/demo": { "input": 1, "output": 2, "cacheRead": 0.1 } } }' })
    expect(resolved.prices).toEqual({ 'scripted/demo': { input: 1, output: 2, cacheRead: 0.1 } })
    expect(resolved.spine).not.toHaveProperty('prices')
    expect(await failure([], { 'dsh.config.json': '{ "prices": { "x/y": { "input": "cheap", "output": 1 } } }' })).toEqual({
      code: 'INVALID_CONFIG',
      message: expect.stringMatching(/^<dir>\/dsh\.config\.json: field "prices\.x\/y\.input": /),
    })
  })
})
