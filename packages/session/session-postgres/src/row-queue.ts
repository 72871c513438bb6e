import type { WriteBehindQueue } from '@deepseek-ai/dsh-session'

/** Queued events as one write: their stored text, from seq `firstSeq` on. */
export interface RowBatch {
  readonly firstSeq: number
  readonly lines: string[]
}

/** The queue of a session writer: each event's text, encoded as it arrives. */
export class RowQueue implements WriteBehindQueue<RowBatch> {
  private lines: string[] = []

  /** `next` is the seq the first line queued from now on carries. */
  constructor(private next: number) {}

  get length(): number {
    return this.lines.length
  }

  push(line: string): void {
    this.lines.push(line)
  }

  take(): RowBatch {
    const batch = { firstSeq: this.next, lines: this.lines }
    this.next += this.lines.length
    this.lines = []
    return batch
  }

  clear(): void {
    this.next += this.lines.length
    this.lines = []
  }
}
