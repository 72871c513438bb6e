import { spawn } from 'node:child_process'
import { join } from 'node:path'
import { afterEach, expect, it } from 'vitest'
import { SessionId } from '@deepseek-ai/dsh-session'
import { dropSchema, freshSchema, mount, pgUrl, repoRoot, withSql } from './helpers'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** Runs the worker example to completion; resolves with its stdout. */
function runExample(url: string, args: string[]): Promise<string> {
  const main = join(repoRoot, 'packages/session/session-postgres/examples/workers/main.ts')
  const child = spawn(process.execPath, ['--conditions=dsh-source', '--import', 'tsx', main, ...args], {
    cwd: repoRoot,
    env: { ...process.env, DSH_PG_URL: url },
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  })
  let out = ''
  child.stdout.setEncoding('utf8').on('data', (text: string) => (out += text))
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`the example exited with ${code}:\n${out}`))))
  })
}

it('the worker example (R-PG-4): workers serve every prompt from the queue; a worker killed mid-turn loses nothing flushed, and another settles its prompt as interrupted by repair, not re-run', { timeout: 180_000 }, async ({ skip }) => {
  const url = pgUrl(skip)
  const schema = freshSchema()
  cleanups.push(() => dropSchema(url, schema))
  const out = await runExample(url, ['--workers', '2', '--sessions', '2', '--prompts', '4', '--schema', schema, '--kill-one'])
  const killed = /killed (worker-\d) mid-turn/.exec(out)?.[1]
  expect(killed).toBeDefined()
  const rows = await withSql(url, (sql) => sql.unsafe(`SELECT session_id, prompt, state, worker, outcome FROM "${schema}".prompts ORDER BY id`))
  expect(rows.map(({ session_id, prompt, state }) => ({ session_id, prompt, state }))).toEqual([
    { session_id: 'session-0', prompt: 'prompt 0', state: 'done' },
    { session_id: 'session-1', prompt: 'prompt 1', state: 'done' },
    { session_id: 'session-0', prompt: 'prompt 2', state: 'done' },
    { session_id: 'session-1', prompt: 'prompt 3', state: 'done' },
    { session_id: 'session-hang', prompt: 'please hang', state: 'interrupted' },
  ])
  // Settled by the surviving worker, with the repairs named.
  expect(rows[4]!.worker).not.toBe(killed)
  expect(rows[4]!.outcome).toMatch(/^interrupted: its worker died mid-turn; repair appended .*turn\/end$/)
  // Every session's log is whole: two completed turns each, and the killed one's turn closed as interrupted.
  const reader = await mount(url, schema)
  cleanups.push(() => reader.fiber.dispose())
  for (const id of ['session-0', 'session-1']) {
    const { events, repairs } = await reader.backend.load(SessionId(id))
    expect(repairs).toEqual([])
    expect(events.filter((event) => event.type === 'turn/end').map((event) => (event.data as { reason: { kind: string } }).reason.kind)).toEqual(['completed', 'completed'])
    await reader.backend.release(SessionId(id))
  }
  const hung = await reader.backend.load(SessionId('session-hang'))
  expect(hung.repairs).toEqual([])
  expect(hung.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: 1, reason: { kind: 'interrupted' } } })
  expect(hung.events.filter((event) => event.type === 'user/message')).toHaveLength(1)
})
