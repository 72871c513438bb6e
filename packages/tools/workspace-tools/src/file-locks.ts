/**
 * One change at a time per file: `write_file` and `edit_file` hold a file's
 * lock from the moment they load it (to check what the agent saw) until the
 * new bytes are written. Without it, two agents that both read the file
 * could both pass the check and the second write would silently undo the
 * first; with it, the second sees the first's bytes and is refused as
 * stale. In-process only: another process writing the file is caught by the
 * content check, not prevented.
 */
export class FileLocks {
  private readonly tails = new Map<string, Promise<unknown>>()

  /** Runs `task` once every earlier task for `key` (a real path) has settled. */
  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const before = this.tails.get(key) ?? Promise.resolve()
    const result = before.then(task, task)
    const tail = result.then(
      () => undefined,
      () => undefined,
    )
    this.tails.set(key, tail)
    try {
      return await result
    } finally {
      if (this.tails.get(key) === tail) this.tails.delete(key)
    }
  }
}
