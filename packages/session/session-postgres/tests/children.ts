import { fork, type ChildProcess } from 'node:child_process'
import { join } from 'node:path'
import { repoRoot } from './helpers'

export interface Reply {
  ready?: string
  ok?: true
  length?: number
  repairs?: number
  error?: string
  message?: string
  flushed?: number
}

/** A `session-holder` child process and its replies, in order. */
export class Holder {
  readonly child: ChildProcess
  private readonly replies: Reply[] = []
  private waiters: Array<() => void> = []
  /** The largest length a completed flush reported. */
  flushed = 0

  constructor(url: string, schema: string, leaseTtlMs?: number) {
    // The connection string goes through the environment, never the command line (it may hold a password).
    this.child = fork(join(repoRoot, 'packages/session/session-postgres/tests/children/session-holder.ts'), [schema, ...(leaseTtlMs ? [String(leaseTtlMs)] : [])], {
      cwd: repoRoot,
      env: { ...process.env, DSH_PG_URL: url },
      execArgv: ['--conditions=dsh-source', '--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    this.child.on('message', (reply: Reply) => {
      if (reply.flushed !== undefined) {
        this.flushed = Math.max(this.flushed, reply.flushed)
        return this.wake()
      }
      this.replies.push(reply)
      this.wake()
    })
    this.child.once('exit', () => this.wake())
  }

  /** The next reply (the first is `{ ready }`). */
  async next(): Promise<Reply> {
    while (this.replies.length === 0) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error(`the holder exited (${this.child.exitCode ?? this.child.signalCode})`)
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
    return this.replies.shift()!
  }

  /** Resolves once a streamed flush reported at least `length` events. */
  async flushedAtLeast(length: number): Promise<void> {
    while (this.flushed < length) {
      if (this.child.exitCode !== null || this.child.signalCode !== null) throw new Error('the holder exited')
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
  }

  async send(command: { cmd: string; id?: string; count?: number }): Promise<Reply> {
    this.child.send(command)
    return this.next()
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal)
  }

  /** Resolves once the process has exited. */
  exited(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return Promise.resolve()
    return new Promise((resolve) => this.child.once('exit', () => resolve()))
  }

  private wake(): void {
    for (const resolve of this.waiters.splice(0)) resolve()
  }
}
