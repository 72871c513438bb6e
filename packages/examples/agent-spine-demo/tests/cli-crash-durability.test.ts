import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { Context } from 'cordis'
import { describe, expect, it } from 'vitest'
import Sessions, { SessionId } from '@deepseek-ai/dsh-session'
import JsonlSessionPersistence from '@deepseek-ai/dsh-session-jsonl'
import { onlySession, packageRoot, readEvents, runDemo, startDemo, tempDir, trace, workspace } from './helpers'

/**
 * The subprocess crash suite, durability before the request (issue 14.2):
 * the events a request derives from are on disk before the request leaves,
 * so a SIGKILL right after the server received it loses nothing the model
 * saw; and a SIGKILL during the first flush leaves a log that resumes, with
 * no request sent.
 */

const holdFlushes = join(packageRoot, 'tests/fixtures/hold-flushes-plugin.ts')

interface Received {
  messages: Array<{ role: string; content: unknown }>
}

/** A local OpenAI-compatible server that records each request's body, calls `onRequest`, and never answers. */
async function silentServer(onRequest: (body: Received) => void) {
  const received: Received[] = []
  const open: ServerResponse[] = []
  const server = createServer(async (request: IncomingMessage, response) => {
    let body = ''
    for await (const chunk of request) body += chunk
    open.push(response)
    const parsed = JSON.parse(body) as Received
    received.push(parsed)
    onRequest(parsed)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    received,
    args: ['--provider', 'local', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'tiny-model', '--api-key-env', 'LOCAL_KEY'],
    close: () => {
      for (const response of open) response.destroy()
      server.close()
    },
  }
}

/** Loads a session file through the JSONL backend (crash repair included) into a prepared session: every invariant of the log is checked. */
async function loadChecked(dataDir: string, id: string) {
  const root = new Context()
  await root.plugin(Sessions)
  await root.plugin(JsonlSessionPersistence, { directory: dataDir })
  const loaded = await root.sessionPersistence.load(SessionId(id))
  const session = root.sessions.prepare(SessionId(id), { events: loaded.events })
  const messages = session.deriveMessages().map((message) => [message.role, message.content.map((block) => (block.type === 'text' ? block.text : block.type)).join('')])
  await root.fiber.dispose()
  return { events: loaded.events, messages }
}

describe('dsh-demo crash durability (SIGKILL)', { timeout: 240_000 }, () => {
  it('killed right after the server received the request: the prompt and the request header were already on disk, and resume continues', async () => {
    const cwd = workspace()
    const data = tempDir()
    let kill = () => {}
    const server = await silentServer(() => kill())
    try {
      const doomed = startDemo(['-p', 'what is here?', ...server.args, '--data-dir', data], { cwd, env: { LOCAL_KEY: 'sk-test-crash' } })
      kill = () => doomed.child.kill('SIGKILL')
      expect(await doomed.exited).toBe('SIGKILL')
      expect(server.received).toHaveLength(1)

      // What the model received is what the file holds: nothing of it was lost with the process.
      const { id, events } = onlySession(data)
      expect(trace(events)).toEqual(['turn/start 1 prompt', 'step/start 1.1', 'user/message "what is here?"'])
      expect(events.filter((event) => event.type === 'request/header').map((event) => event.type === 'request/header' && [event.data.provider, event.data.model])).toEqual([
        ['local', 'tiny-model'],
      ])
      const sent = server.received[0]!.messages.map((message) => [message.role, message.content])
      expect(sent.slice(1)).toEqual([['user', 'what is here?']])

      const resumed = await runDemo(['--resume', id, '-p', 'hello again', '--data-dir', data], { cwd })
      expect({ status: resumed.status, last: resumed.stderr.split('\n').at(-2) }).toEqual({ status: 0, last: `session ${id} (continue it with --resume ${id})` })
      expect(trace(readEvents(join(data, `${id}.jsonl`))).slice(0, 8)).toEqual([
        'turn/start 1 prompt',
        'step/start 1.1',
        'user/message "what is here?"',
        // Crash repair on load closed the step and the turn.
        'step/end 1.1',
        'turn/end 1 interrupted',
        'turn/start 2 prompt',
        'step/start 2.1',
        'user/message "hello again"',
      ])
      const { messages } = await loadChecked(data, id)
      expect(messages.slice(0, 2)).toEqual([
        ['user', 'what is here?'],
        ['user', 'hello again'],
      ])
    } finally {
      server.close()
    }
  })

  it('killed during the first flush: no request left, the log resumes (valid, the prompt kept), and the next run answers', async () => {
    const cwd = workspace()
    const data = tempDir()
    const server = await silentServer(() => {})
    try {
      const doomed = startDemo(['-p', 'first question', ...server.args, '--data-dir', data], {
        cwd,
        env: { LOCAL_KEY: 'sk-test-crash', DSH_DEMO_PLUGIN: holdFlushes, DSH_TEST_HOLD_FLUSHES: data },
      })
      await doomed.waitFor(/test: first flush held/, 1, 'stderr')
      doomed.child.kill('SIGKILL')
      expect(await doomed.exited).toBe('SIGKILL')
      // Every flush was held: the request, which waits for its step's flush, never left.
      expect(server.received).toEqual([])

      const { id } = onlySession(data)
      const before = await loadChecked(data, id)
      // The admission was on disk when the process died; how much of the turn was written behind varies.
      expect(before.events.some((event) => event.type === 'inbox/enqueue')).toBe(true)
      expect(before.events.some((event) => event.type === 'assistant/message')).toBe(false)

      const resumed = await runDemo(['--resume', id, '-p', 'second question', '--data-dir', data], { cwd })
      expect(resumed.status).toBe(0)
      const after = await loadChecked(data, id)
      // The first question is kept: in the history of an interrupted turn, or still pending and answered now.
      expect(after.messages.filter(([role]) => role === 'user').map(([, text]) => text)).toEqual(['first question', 'second question'])
      expect(after.messages.at(-1)).toEqual(['assistant', expect.stringContaining('second question')])
    } finally {
      server.close()
    }
  })
})
