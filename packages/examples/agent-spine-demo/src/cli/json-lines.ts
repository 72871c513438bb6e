import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'

/**
 * `--json`: writes the session's events as JSON lines, exactly as they are in
 * the log (`{ type, seq, time, data }`), in seq order with no gap. It starts
 * at the first event this run did not load: `session/meta` (seq 0) for a new
 * session, the first new event of a resumed one.
 */
export class JsonLines {
  private next: number | undefined

  constructor(private readonly stream: { write(text: string): unknown }) {}

  onEvent(session: Session, event: AnySessionEvent): void {
    this.next ??= session.loadedLength
    this.catchUp(session, event.seq)
  }

  /** Writes whatever is left of `session` (the tail after the last event seen). */
  finish(session: Session): void {
    this.next ??= session.loadedLength
    this.catchUp(session, session.events.length - 1)
  }

  private catchUp(session: Session, last: number): void {
    let out = ''
    while (this.next! <= last) out += `${JSON.stringify(session.events[this.next!++])}\n`
    if (out) this.stream.write(out)
  }
}
