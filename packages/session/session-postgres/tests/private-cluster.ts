import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir, userInfo } from 'node:os'
import { join } from 'node:path'

/**
 * A PostgreSQL cluster of the test's own (`initdb` in a temporary directory),
 * for a test that stops and restarts the server: never the shared one.
 * `initdb` refuses to run as root, so as root every server command runs as
 * the `postgres` user (`runuser`); otherwise as the current user.
 */
export class PrivateCluster {
  readonly url: string
  private readonly dir: string
  private readonly bin: string
  private readonly port: number

  private constructor(bin: string, dir: string, port: number) {
    this.bin = bin
    this.dir = dir
    this.port = port
    this.url = `postgres://dsh@127.0.0.1:${port}/postgres`
  }

  /** Where the server binaries are, or why there are none. */
  static binaries(): { bin: string } | { reason: string } {
    for (const bin of ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin']) {
      if (existsSync(join(bin, 'initdb'))) return { bin }
    }
    return { reason: 'no PostgreSQL server binaries (initdb, pg_ctl) under /usr/lib/postgresql/<version>/bin' }
  }

  /** Creates and starts a cluster on a free port (trust authentication on 127.0.0.1 only). */
  static async start(bin: string): Promise<PrivateCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'dsh-pg-cluster-'))
    if (process.getuid?.() === 0) chownSync(dir, uid('postgres'), gid('postgres'))
    const cluster = new PrivateCluster(bin, dir, await freePort())
    cluster.run('initdb', ['-D', join(dir, 'data'), '-U', 'dsh', '--auth=trust', '-E', 'UTF8', '--no-sync'])
    cluster.startServer()
    return cluster
  }

  startServer(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-l', join(this.dir, 'log'), '-o', options, '-w', '-t', '180', 'start'])
  }

  stopServer(): void {
    this.run('pg_ctl', ['-D', join(this.dir, 'data'), '-m', 'fast', '-w', '-t', '180', 'stop'])
  }

  /** Stops the server if it runs and removes the cluster. */
  destroy(): void {
    try {
      this.stopServer()
    } catch {}
    rmSync(this.dir, { recursive: true, force: true })
  }

  private run(tool: string, args: string[]): void {
    const command = join(this.bin, tool)
    const [file, argv] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]
    execFileSync(file, argv, { stdio: 'pipe', cwd: this.dir })
  }
}

function uid(user: string): number {
  return Number(execFileSync('id', ['-u', user], { encoding: 'utf8' }).trim())
}

function gid(user: string): number {
  return Number(execFileSync('id', ['-g', user], { encoding: 'utf8' }).trim())
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}

export const currentUser = () => userInfo().username
