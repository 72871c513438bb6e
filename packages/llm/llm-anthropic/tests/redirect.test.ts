import { createUserMessage } from '@deepseek-ai/dsh-llm'
import { FakeProvider } from '@deepseek-ai/dsh-testkit'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { AnthropicAdapter } from '../src'
import { collect } from './support/wire'

const apiKey = 'sk-ant-redirect-test-0123456789'
let provider: FakeProvider
let elsewhere: FakeProvider

beforeEach(async () => {
  provider = await FakeProvider.start()
  elsewhere = await FakeProvider.start()
})

afterEach(async () => {
  await Promise.all([provider.stop(), elsewhere.stop()])
})

describe('a base URL that redirects to another origin', () => {
  // dsh-llm's exchange follows no redirect to another origin: `fetch` would strip only `Authorization` there,
  // so `x-api-key` and credential headers would reach whatever origin the base URL redirects to.
  it('sends the key and credential headers nowhere but the configured origin', async () => {
    provider.handle((_request, res) => {
      res.writeHead(307, { location: `${elsewhere.origin}/v1/messages` })
      res.end()
    })
    elsewhere.handle((_request, res) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end('{}')
    })
    const adapter = new AnthropicAdapter({ name: 'claude', baseUrl: provider.origin, apiKey, headers: { 'x-gateway-token': 'gw-redirect-secret-42' } })
    const chunks = await collect(adapter.stream({ provider: 'claude', model: 'claude-test', messages: [createUserMessage('hi')] }))
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', reason: { kind: 'error' } })
    expect(elsewhere.requests.map((r) => [r.headers['x-api-key'], r.headers['x-gateway-token']])).toEqual(
      elsewhere.requests.map(() => [undefined, undefined]),
    )
  })
})
