import { fork, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs'
import { hostname } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { JsonlPersistenceError } from '@deepseek-ai/dsh-session-jsonl'
import { addTextTurn, logBuilder, mount, sid, tempDir } from './helpers'

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url))
const children: ChildProcess[] = []

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

/** Starts a second process that takes session `id` and holds it; resolves once it holds the lock. */
async function holdInChild(directory: string, id: string): Promise<ChildProcess> {
  const child = fork(join(repoRoot, 'packages/session/session-jsonl/tests/children/hold-lock.ts'), [directory, id], {
    cwd: repoRoot,
    execArgv: ['--conditions=dsh-source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.push(child)
  await new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve())
    child.once('exit', (code, signal) => reject(new Error(`lock holder exited early (${code ?? signal})`)))
  })
  return child
}

function killAndWait(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.once('exit', () => resolve())
    child.kill('SIGKILL')
  })
}

/** The pid of a process that has exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid!
}

async function code(promise: Promise<unknown>): Promise<string> {
  try {
    await promise
  } catch (error) {
    expect(error).toBeInstanceOf(JsonlPersistenceError)
    return (error as JsonlPersistenceError).code
  }
  return 'resolved'
}

function closedLog() {
  const log = logBuilder()
  addTextTurn(log, 1)
  return log.events
}

describe('one writer per session file', () => {
  it('a second writer in the same process (another backend on the same directory) is refused with SESSION_LOCKED', async () => {
    const dir = tempDir()
    const first = await mount(dir)
    const second = await mount(dir)
    await first.backend.append(sid('s'), closedLog())
    expect(await code(second.backend.append(sid('s'), closedLog()))).toBe('SESSION_LOCKED')
    expect(await code(second.backend.load(sid('s')))).toBe('SESSION_LOCKED')
    expect(await code(second.backend.delete(sid('s')))).toBe('SESSION_LOCKED')

    // Once the first releases it, the second may take over.
    await first.backend.release(sid('s'))
    expect((await second.backend.load(sid('s'))).events).toEqual(closedLog())
  })

  it('a second backend reaching the same directory by another path (a symlink) is refused too; the live lock is not broken', async () => {
    const dir = tempDir()
    mkdirSync(dir, { recursive: true })
    const link = join(tempDir(), 'link')
    symlinkSync(dir, link)
    const first = await mount(dir)
    const second = await mount(link)
    await first.backend.append(sid('s'), closedLog())
    const lock = readFileSync(join(dir, 's.jsonl.lock'), 'utf8')
    // The lock names this process with a token it holds: live, whatever path it is read through.
    expect(await code(second.backend.append(sid('s'), closedLog()))).toBe('SESSION_LOCKED')
    expect(await code(second.backend.load(sid('s')))).toBe('SESSION_LOCKED')
    expect(readFileSync(join(dir, 's.jsonl.lock'), 'utf8')).toBe(lock)
    await first.backend.release(sid('s'))
    expect((await second.backend.load(sid('s'))).events).toEqual(closedLog())
  })

  it('a writer in another live process is refused with SESSION_LOCKED naming its pid', async () => {
    const dir = tempDir()
    const child = await holdInChild(dir, 's')
    const { backend } = await mount(dir)
    let error: JsonlPersistenceError | undefined
    await backend.load(sid('s')).catch((e) => (error = e))
    expect(error?.code).toBe('SESSION_LOCKED')
    expect(error?.message).toContain(`process ${child.pid}`)
    expect(await code(backend.append(sid('s'), closedLog()))).toBe('SESSION_LOCKED')
  })

  it('the lock of a process killed with SIGKILL is stale and is recovered', async () => {
    const dir = tempDir()
    const child = await holdInChild(dir, 's')
    await killAndWait(child)
    const lock = join(dir, 's.jsonl.lock')
    expect(JSON.parse(readFileSync(lock, 'utf8')).pid).toBe(child.pid)

    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.events.map((event) => event.type)).toEqual(['session/meta'])
    // load() holds the lock only while it reads and repairs.
    expect(existsSync(lock)).toBe(false)
  })

  it('recovers a lock naming a dead pid, and an unreadable lock file', async () => {
    const dir = tempDir()
    mkdirSync(dir, { recursive: true })
    const { backend } = await mount(dir)
    writeFileSync(join(dir, 'a.jsonl.lock'), JSON.stringify({ pid: await deadPid(), hostname: hostname(), token: 't', acquiredAt: 0 }))
    writeFileSync(join(dir, 'b.jsonl.lock'), '\0\0\0')
    await backend.append(sid('a'), closedLog())
    await backend.append(sid('b'), closedLog())
    expect(JSON.parse(readFileSync(join(dir, 'a.jsonl.lock'), 'utf8')).pid).toBe(process.pid)
    expect(JSON.parse(readFileSync(join(dir, 'b.jsonl.lock'), 'utf8')).pid).toBe(process.pid)
  })

  it('treats a lock from another host as held (its pid cannot be checked here)', async () => {
    const dir = tempDir()
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, 's.jsonl.lock'), JSON.stringify({ pid: 1, hostname: `not-${hostname()}`, token: 't', acquiredAt: 0 }))
    const { backend } = await mount(dir)
    let error: JsonlPersistenceError | undefined
    await backend.append(sid('s'), closedLog()).catch((e) => (error = e))
    expect(error?.code).toBe('SESSION_LOCKED')
    expect(error?.message).toContain(`on host "not-${hostname()}"`)
  })

  it('release() and disposal remove the lock file', async () => {
    const dir = tempDir()
    const { backend, dispose } = await mount(dir)
    await backend.append(sid('a'), closedLog())
    await backend.append(sid('b'), closedLog())
    expect([existsSync(join(dir, 'a.jsonl.lock')), existsSync(join(dir, 'b.jsonl.lock'))]).toEqual([true, true])
    await backend.release(sid('a'))
    expect(existsSync(join(dir, 'a.jsonl.lock'))).toBe(false)
    await dispose()
    expect(existsSync(join(dir, 'b.jsonl.lock'))).toBe(false)
    // Disposal drained and fsynced what was queued.
    const { backend: again } = await mount(dir)
    expect((await again.load(sid('b'))).events).toEqual(closedLog())
  })
})
