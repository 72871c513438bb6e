import { createUserMessage, type GenerateOptions } from '@deepseek-ai/dsh-llm'
import { afterEach, beforeEach } from 'vitest'
import { OpenAiAdapter } from '../../src'
import { FakeProvider } from '@deepseek-ai/dsh-testkit'

/**
 * A fresh local provider and an adapter pointed at it for every test of the
 * calling file (stopped after each). Read `server` and `adapter` from the
 * returned object inside tests.
 */
export function useFakeProvider(apiKey: string): { server: FakeProvider; adapter: OpenAiAdapter } {
  const fixture = {} as { server: FakeProvider; adapter: OpenAiAdapter }
  beforeEach(async () => {
    fixture.server = await FakeProvider.start()
    fixture.adapter = new OpenAiAdapter({ name: 'fake', baseUrl: fixture.server.url, apiKey })
  })
  afterEach(async () => {
    await fixture.server.stop()
  })
  return fixture
}

/** A one-message call to the fake provider's `test-model`, with `extra` merged in. */
export const call = (extra: Partial<GenerateOptions> = {}): GenerateOptions => ({
  provider: 'fake',
  model: 'test-model',
  messages: [createUserMessage('hello')],
  ...extra,
})
