import { readFileSync, readdirSync } from 'node:fs'

/**
 * Whether a process with this pid is still running: a signal-0 probe (a
 * process of another user, `EPERM`, exists), except that a zombie (it exited
 * and its parent, or an init that does not reap, has not collected it) has
 * stopped: what a test asking "was it stopped?" means. Zombies are read from
 * Linux's /proc.
 */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    return (error as { code?: unknown }).code === 'EPERM'
  }
  return !zombie(pid)
}

function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The state is the first field after the command's closing parenthesis.
    return stat[stat.lastIndexOf(')') + 2] === 'Z'
  } catch {
    return false
  }
}

/**
 * The pids of live processes (other than this one) whose command line
 * contains `marker`, read from Linux's /proc; with `childrenOf`, only the
 * direct children of that pid. For tests that check what a tool, a server or
 * an agent left running.
 */
export function processesWith(marker: string, options: { childrenOf?: number } = {}): number[] {
  const found: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      if (options.childrenOf !== undefined) {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
        // The fields after the command's closing parenthesis: state, then the parent's pid.
        if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) !== options.childrenOf) continue
      }
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry))
    } catch {
      // Gone while we looked.
    }
  }
  return found
}
