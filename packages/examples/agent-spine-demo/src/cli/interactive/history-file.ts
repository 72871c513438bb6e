import { appendFile, mkdir, open, readFile, rename, rm } from 'node:fs/promises'
import { join } from 'node:path'

/** The file name of the prompt history inside the data directory (not `.jsonl`: it is not a session). */
export const HISTORY_FILE_NAME = 'prompt-history'

/** How many entries the history keeps (the most recent ones). */
export const HISTORY_KEEP = 500

/**
 * The line editor's history across runs: what a person entered on the
 * terminal (prompts, steering, commands), one JSON string per line in
 * `<data dir>/prompt-history`, oldest first, readable by its owner only
 * (mode 0600, like the session files beside it).
 *
 * The history is a convenience, not saved work: a file that cannot be read
 * or written costs the person their Up-arrow recall, never the run. So a
 * failure is said once (through `warn`, with the file and the reason) and the
 * run goes on without the file; a line that is not a JSON string is skipped
 * and counted in that warning. Entries are written as entered, after the
 * owner's `redact` (the route's API keys, URL userinfo), and an entry equal
 * to the one before it is not written again. The file is cut back to its
 * last `HISTORY_KEEP` entries when it is loaded holding twice that many (a
 * rewrite to a temporary file, fsynced, then renamed over it).
 */
export class PromptHistoryFile {
  readonly path: string
  private readonly dataDir: string
  private last: string | undefined
  private writes: Promise<void> = Promise.resolve()
  private broken = false

  constructor(
    dataDir: string,
    private readonly warn: (line: string) => void,
    private readonly redact: (text: string) => string = (text) => text,
  ) {
    this.dataDir = dataDir
    this.path = join(dataDir, HISTORY_FILE_NAME)
  }

  /** The last `HISTORY_KEEP` entries, oldest first; `[]` when there is no file yet. */
  async load(): Promise<string[]> {
    let text: string
    try {
      text = await readFile(this.path, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.fail('cannot be read', error)
      return []
    }
    const lines = text.split('\n')
    if (lines.at(-1) === '') lines.pop()
    const entries: string[] = []
    let skipped = 0
    let firstSkipped = 0
    for (let i = 0; i < lines.length; i++) {
      let entry: unknown
      try {
        entry = JSON.parse(lines[i]!)
      } catch {
        entry = undefined
      }
      if (typeof entry === 'string' && entry.trim() !== '') entries.push(entry)
      else if (skipped++ === 0) firstSkipped = i + 1
    }
    if (skipped > 0) {
      this.warn(`! ${this.path}: ${skipped} line${skipped === 1 ? ' is' : 's are'} not a history entry (the first: line ${firstSkipped}); ${skipped === 1 ? 'it was' : 'they were'} skipped`)
    }
    const kept = entries.slice(-HISTORY_KEEP)
    this.last = kept.at(-1)
    if (lines.length >= 2 * HISTORY_KEEP) this.queue(() => this.rewrite(kept))
    return kept
  }

  /** Appends one entry (in the background, in order); see the class for what is and is not written. */
  add(entry: string): void {
    if (this.broken || entry.trim() === '') return
    const text = this.redact(entry)
    if (text === this.last) return
    this.last = text
    this.queue(async () => {
      // The first entry of a first run can come before the session's first write creates the directory.
      await mkdir(this.dataDir, { recursive: true, mode: 0o700 })
      await appendFile(this.path, `${JSON.stringify(text)}\n`, { mode: 0o600 })
    })
  }

  /** Resolves once every entry added so far is written (or the file was given up). */
  flush(): Promise<void> {
    return this.writes
  }

  private queue(write: () => Promise<void>): void {
    this.writes = this.writes.then(async () => {
      if (this.broken) return
      try {
        await write()
      } catch (error) {
        this.fail('cannot be written', error)
      }
    })
  }

  private async rewrite(entries: readonly string[]): Promise<void> {
    const temporary = `${this.path}.${process.pid}.tmp`
    try {
      const file = await open(temporary, 'w', 0o600)
      try {
        await file.writeFile(entries.map((entry) => `${JSON.stringify(entry)}\n`).join(''))
        await file.sync()
      } finally {
        await file.close()
      }
      await rename(temporary, this.path)
    } catch (error) {
      await rm(temporary, { force: true })
      throw error
    }
  }

  private fail(what: string, error: unknown): void {
    this.broken = true
    const reason = (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error))
    this.warn(`! the prompt history ${this.path} ${what} (${reason}): Up recalls only this run's messages`)
  }
}
