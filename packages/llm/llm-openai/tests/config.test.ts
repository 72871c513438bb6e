import { describe, expect, it } from 'vitest'
import { checkApiKey, OpenAiAdapter, OpenAiConfig, OpenAiConfigError, presets, resolveProvider, type ProviderConfig } from '../src'

describe('provider presets', () => {
  it('a preset name alone resolves to the full DeepSeek configuration', () => {
    expect(resolveProvider('deepseek')).toEqual({
      name: 'deepseek',
      baseUrl: 'https://api.deepseek.com',
      apiKeyEnv: 'DEEPSEEK_API_KEY',
      defaultModel: 'deepseek-chat',
      models: presets.deepseek.models,
      requestTimeoutMs: 30_000,
      idleTimeoutMs: 120_000,
      headers: {},
      images: { mediaTypes: [] },
      maxTokensParam: 'max_tokens',
      streamUsage: true,
      extraBody: {},
    })
  })

  it('the OpenAI preset sends max_completion_tokens and waits longer for silent reasoning', () => {
    expect(resolveProvider({ preset: 'openai' })).toMatchObject({
      name: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      apiKeyEnv: 'OPENAI_API_KEY',
      defaultModel: 'gpt-4.1',
      maxTokensParam: 'max_completion_tokens',
      idleTimeoutMs: 300_000,
    })
  })

  it('fields given next to a preset override it, and models merge per model and per field', () => {
    const resolved = resolveProvider({
      preset: 'deepseek',
      name: 'ds-eu',
      baseUrl: 'https://proxy.example.com/deepseek/',
      apiKeyEnv: 'DS_EU_KEY',
      models: {
        'deepseek-chat': { maxOutputTokens: 4_096 },
        'my-finetune': { contextWindow: 32_768 },
      },
    })
    expect(resolved.name).toBe('ds-eu')
    expect(resolved.baseUrl).toBe('https://proxy.example.com/deepseek')
    expect(resolved.apiKeyEnv).toBe('DS_EU_KEY')
    expect(resolved.models['deepseek-chat']).toEqual({ contextWindow: 131_072, maxOutputTokens: 4_096 })
    expect(resolved.models['my-finetune']).toEqual({ contextWindow: 32_768 })
    expect(resolved.models['deepseek-reasoner']).toEqual(presets.deepseek.models!['deepseek-reasoner'])
  })

  it('resolving leaves the caller config mutable and the presets untouched', () => {
    const config: ProviderConfig = { preset: 'deepseek', models: { x: { extraBody: { a: { b: 1 } } } } }
    resolveProvider(config)
    expect(Object.isFrozen(config.models!.x!.extraBody!.a)).toBe(false)
    expect(presets.deepseek.name).toBe('deepseek')
    expect(Object.isFrozen(presets.deepseek.models)).toBe(true)
  })
})

describe('invalid provider configurations', () => {
  const cases: Array<[string, ProviderConfig | string, string]> = [
    ['no name', { baseUrl: 'http://127.0.0.1:8000/v1' }, 'a provider needs a name (or a preset that gives one)'],
    ['no base URL', { name: 'local' }, 'provider "local": baseUrl must be an http(s) URL such as https://api.deepseek.com, got null'],
    ['a non-http base URL', { name: 'local', baseUrl: 'ftp://host' }, 'provider "local": baseUrl must be an http(s) URL such as https://api.deepseek.com, got "ftp://host"'],
    ['an unknown preset', 'anthropic', 'unknown provider preset "anthropic"; the presets are deepseek, openai'],
    ['an unknown preset field', { preset: 'grok' as 'openai' }, 'unknown provider preset "grok"; the presets are deepseek, openai'],
    [
      'a default effort the model does not accept',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', models: { m: { reasoningEfforts: ['low', 'high'], defaultReasoningEffort: 'max' } } },
      'provider "local": models.m.defaultReasoningEffort "max" is not one of its reasoningEfforts (low, high)',
    ],
    [
      'a zero timeout',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', idleTimeoutMs: 0 },
      'provider "local": idleTimeoutMs must be a positive number of milliseconds, got 0',
    ],
    [
      'a base URL with a user name and password',
      { name: 'local', baseUrl: 'http://alice:s3cret-pw@127.0.0.1:8000/v1' },
      'provider "local": baseUrl http://[redacted]@127.0.0.1:8000/v1 carries a user name or password; give the URL without them and the key with apiKey or apiKeyEnv (other credentials with headers)',
    ],
    [
      'a base URL with a token as user name (and an @ in it)',
      { name: 'local', baseUrl: 'https://tok@en-abcdef@proxy.example.com/openai/v1/' },
      'provider "local": baseUrl https://[redacted]@proxy.example.com/openai/v1/ carries a user name or password; give the URL without them and the key with apiKey or apiKeyEnv (other credentials with headers)',
    ],
    [
      'a non-http base URL with a password',
      { name: 'local', baseUrl: 'ftp://alice:s3cret-pw@host/v1' },
      'provider "local": baseUrl must be an http(s) URL such as https://api.deepseek.com, got "ftp://[redacted]@host/v1"',
    ],
    [
      'an API key with a typographic dash',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-ab\u2014s3cret-0123456789' },
      'provider "local": apiKey contains the non-ASCII character U+2014 at position 6; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break',
    ],
    [
      'an API key with a line break inside',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', apiKey: 'sk-s3cret\n0123456789' },
      'provider "local": apiKey contains a line break at position 10; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break',
    ],
    [
      'a header value an HTTP header cannot carry',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', headers: { 'X-Proxy-Token': 's3cret\u201ctoken' } },
      'provider "local": the value of header X-Proxy-Token contains the character U+201C at position 7, which an HTTP header cannot carry',
    ],
    [
      'a header value with a line break',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', headers: { 'X-Proxy-Token': 's3cret\r\nX-Injected: 1' } },
      'provider "local": the value of header X-Proxy-Token contains a line break or NUL at position 7',
    ],
    [
      'a header name with a space',
      { name: 'local', baseUrl: 'http://127.0.0.1:1/v1', headers: { 'Proxy Token': 'x' } },
      'provider "local": "Proxy Token" is not a valid HTTP header name',
    ],
  ]
  for (const [what, config, message] of cases) {
    it(`rejects ${what} with INVALID_PROVIDER_CONFIG`, () => {
      let error: unknown
      try {
        new OpenAiAdapter(config as ProviderConfig)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(OpenAiConfigError)
      expect({ code: (error as OpenAiConfigError).code, message: (error as Error).message }).toEqual({
        code: 'INVALID_PROVIDER_CONFIG',
        message,
      })
      // No credential of the config is repeated.
      expect((error as Error).message).not.toMatch(/alice|s3cret|tok@en/)
    })
  }

  it('trims whitespace around a configured API key, as fetch would', () => {
    expect(resolveProvider({ name: 'local', baseUrl: 'http://127.0.0.1:1/v1', apiKey: '  sk-local-0123456789\n' }).apiKey).toBe('sk-local-0123456789')
  })
})

describe('checkApiKey', () => {
  it('accepts a printable ASCII key, surrounding whitespace included', () => {
    expect(checkApiKey(' sk-good-0123456789\n', 'the KEY environment variable')).toBeUndefined()
  })

  it('refuses a key an HTTP header cannot carry, naming the source and the character, never the key', () => {
    let error: unknown
    try {
      checkApiKey('sk-s3cret\u00a0tail', 'the KEY environment variable')
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(OpenAiConfigError)
    expect((error as Error).message).toBe(
      'the API key in the KEY environment variable contains the non-ASCII character U+00A0 at position 10; API keys are printable ASCII, so it was probably pasted with a typographic dash or quote, or with a stray space or line break',
    )
  })
})

describe('resolveModel', () => {
  const adapter = new OpenAiAdapter({
    preset: 'deepseek',
    models: { 'deepseek-v4-pro': { defaultReasoningEffort: 'max' } },
  })

  it('returns the configured capabilities', () => {
    expect(adapter.resolveModel('deepseek-v4-pro')).toEqual({
      id: 'deepseek-v4-pro',
      contextWindow: 1_048_576,
      maxOutputTokens: 393_216,
      reasoningEfforts: ['high', 'max'],
      defaultReasoningEffort: 'max',
    })
    expect(adapter.resolveModel('deepseek-chat')).toEqual({ id: 'deepseek-chat', contextWindow: 131_072, maxOutputTokens: 8_192 })
  })

  it('reports only the id of a model that is not configured, and resolves an empty id to the default model', () => {
    expect(adapter.resolveModel('deepseek-next')).toEqual({ id: 'deepseek-next' })
    expect(adapter.resolveModel('')).toEqual({ id: 'deepseek-chat', contextWindow: 131_072, maxOutputTokens: 8_192 })
  })

  it('hands out copies: a caller cannot change the configured efforts', () => {
    const info = adapter.resolveModel('deepseek-v4-pro')
    ;(info.reasoningEfforts as string[]).push('ultra')
    expect(adapter.resolveModel('deepseek-v4-pro').reasoningEfforts).toEqual(['high', 'max'])
  })
})

describe('config schema', () => {
  it('accepts preset names and full provider objects', () => {
    const config = OpenAiConfig({
      providers: ['deepseek', { name: 'vllm', baseUrl: 'http://127.0.0.1:8000/v1', models: { 'qwen3-32b': { contextWindow: 32_768 } } }],
    })
    expect(config.providers.map((p) => resolveProvider(p).name)).toEqual(['deepseek', 'vllm'])
  })

  it('defaults to no providers', () => {
    expect(OpenAiConfig({} as OpenAiConfig)).toEqual({ providers: [] })
  })

  it('rejects a value of the wrong type', () => {
    expect(() => OpenAiConfig({ providers: [{ name: 'x', baseUrl: 'http://h', requestTimeoutMs: 'soon' as unknown as number }] })).toThrow()
  })
})
