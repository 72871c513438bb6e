import { afterEach, describe, expect, it } from 'vitest'
import { FakeProvider, reply } from '../src'

const servers: FakeProvider[] = []
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.stop()))
})
async function start(options?: Parameters<typeof FakeProvider.start>[0]): Promise<FakeProvider> {
  const server = await FakeProvider.start(options)
  servers.push(server)
  return server
}

describe('FakeProvider', () => {
  it('answers a request with no handler queued with a 500 that says so, by default', async () => {
    const server = await start()
    server.handle(reply(200, { ok: true }))
    const first = await fetch(server.url, { method: 'POST', body: '{"n":1}' })
    expect([first.status, await first.json()]).toEqual([200, { ok: true }])
    const second = await fetch(server.url, { method: 'POST', body: '{"n":2}' })
    expect([second.status, await second.json()]).toEqual([500, { error: { message: 'the test queued no handler for this request' } }])
    expect(server.requests.map((request) => request.body)).toEqual([{ n: 1 }, { n: 2 }])
  })

  it('holds unhandled requests when asked, until the client goes away; whenIdle() waits for the client to close its connections', async () => {
    const server = await start({ unhandled: 'hold' })
    // Asked before any connection exists, it still waits for the ones the call opens.
    const released = server.whenIdle()
    const controller = new AbortController()
    const call = fetch(server.url, { method: 'POST', body: '{}', signal: controller.signal })
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve))
    let idle = false
    void Promise.resolve(released).then(() => (idle = true))
    await new Promise((resolve) => setImmediate(resolve))
    expect(idle).toBe(false)
    controller.abort()
    await expect(call).rejects.toThrow()
    await released
    await server.closes[0]
    expect(idle).toBe(true)
  })
})
