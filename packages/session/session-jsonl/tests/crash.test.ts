import { fork, type ChildProcess } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import type { AnySessionEvent, LoadedSession } from '@deepseek-ai/dsh-session'
import { crashLogPrefix } from './children/crash-log'
import { mount, sid, tempDir } from './helpers'

const repoRoot = fileURLToPath(new URL('../../../..', import.meta.url))
const children: ChildProcess[] = []

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
})

interface Report {
  flushed?: number
  torn?: true
}

/**
 * Runs the crash writer in a child process and kills it with SIGKILL once
 * `stop(report)` says so. Resolves with the largest count of events a
 * completed flush reported, after the child is gone.
 */
function runAndKill(directory: string, id: string, mode: string | undefined, stop: (report: Report) => boolean): Promise<number> {
  const child = fork(join(repoRoot, 'packages/session/session-jsonl/tests/children/crash-writer.ts'), [directory, id, ...(mode ? [mode] : [])], {
    cwd: repoRoot,
    execArgv: ['--conditions=dsh-source', '--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  children.push(child)
  let flushed = 0
  return new Promise((resolve, reject) => {
    child.on('message', (report: Report) => {
      if (report.flushed !== undefined) flushed = Math.max(flushed, report.flushed)
      if (stop(report) && child.signalCode === null) child.kill('SIGKILL')
    })
    child.once('exit', (code, signal) => {
      if (signal === 'SIGKILL') resolve(flushed)
      else reject(new Error(`the crash writer exited on its own (${code ?? signal})`))
    })
  })
}

/** Where the log stands after `events`: the open turn and step, if any. */
function openState(events: readonly AnySessionEvent[]) {
  let turn: number | undefined
  let step: number | undefined
  for (const event of events) {
    if (event.type === 'turn/start') turn = event.data.turn
    else if (event.type === 'turn/end') turn = undefined
    else if (event.type === 'step/start') step = event.data.step
    else if (event.type === 'step/end') step = undefined
  }
  return { turn, step }
}

/** Checks a load after a crash: the surviving prefix is exact, and the repairs close what it left open. */
function expectConsistentTail(loaded: LoadedSession, flushed: number) {
  const repaired = loaded.repairs.length
  const survived = loaded.events.length - repaired
  // Everything a completed flush reported is there (R-PER-1) ...
  expect(survived).toBeGreaterThanOrEqual(flushed)
  // ... and everything that survived is exactly what was appended, in order.
  expect(loaded.events.slice(0, survived)).toEqual(crashLogPrefix(survived))
  // The repairs are the tail, numbered on, and leave no open turn (R-PER-3).
  expect(loaded.repairs.map((repair) => repair.seq)).toEqual(loaded.events.slice(survived).map((event) => event.seq))
  expect(loaded.events.map((event) => event.seq)).toEqual(loaded.events.map((_, index) => index))
  const before = openState(loaded.events.slice(0, survived))
  expect(repaired > 0).toBe(before.turn !== undefined)
  expect(openState(loaded.events)).toEqual({ turn: undefined, step: undefined })
  if (before.turn !== undefined) expect(loaded.events.at(-1)).toMatchObject({ type: 'turn/end', data: { turn: before.turn, reason: { kind: 'interrupted' } } })
}

describe('crash: a writer killed with SIGKILL', () => {
  it('loses nothing it flushed; the tail loads consistent and repaired', async () => {
    const dir = tempDir()
    // Kill it after a number of flushes that varies from run to run, mid-stream.
    const target = 40 + Math.floor(Math.random() * 40)
    let reports = 0
    const flushed = await runAndKill(dir, 's', undefined, () => ++reports >= target)
    expect(flushed).toBeGreaterThan(0)

    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expectConsistentTail(loaded, flushed)

    // The repairs are durable: loading again changes nothing.
    expect(await backend.load(sid('s'))).toEqual({ id: 's', events: loaded.events, repairs: [], warnings: [] })
  })

  it('drops the torn line the kill left, then repairs the open step in model order', async () => {
    const dir = tempDir()
    const flushed = await runAndKill(dir, 's', 'torn', (report) => report.torn === true)
    const file = join(dir, 's.jsonl')
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(false)

    const { backend } = await mount(dir)
    const loaded = await backend.load(sid('s'))
    expect(loaded.warnings).toEqual([
      { code: 'TORN_TAIL', message: expect.stringMatching(/^Dropped a torn last line \(line \d+, \d+ bytes without a final newline\)/), file, line: expect.any(Number), sidecar: expect.stringMatching(/s\.jsonl\.torn-\d+$/) },
    ])
    expectConsistentTail(loaded, flushed)
    expect(loaded.events.length - loaded.repairs.length).toBe(flushed)
    // The batch ended on the first call's tool/call: its result, the second call's tool/call
    // and result, then step/end and turn/end{interrupted}.
    expect(loaded.repairs.map((repair) => repair.type)).toEqual(['tool/result', 'tool/call', 'tool/result', 'step/end', 'turn/end'])
    expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(true)
  })
})
