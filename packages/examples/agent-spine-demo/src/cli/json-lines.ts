import type { AnySessionEvent, Session } from '@deepseek-ai/dsh-session'

/**
 * `--json`: writes the session's events as JSON lines, exactly as they are in
 * the log (`{ type, seq, time, data }`), in seq order with no gap. It starts
 * at the first event this run did not load: `session/meta` (seq 0) for a new
 * session, the first new event of a resumed one. Lines of the command line's
 * own (`note`) have no `seq`.
 */
export class JsonLines {
  private next: number | undefined

  constructor(private readonly stream: { write(text: string): unknown }) {}

  onEvent(session: Session, event: AnySessionEvent): void {
    this.next ??= session.loadedLength
    this.catchUp(session, event.seq)
  }

  /**
   * Writes a line of the command line's own, between the log's lines: `{
   * type, time, data }` with no `seq` (it is not in the log). The types:
   * `agent/error` (`{ turn, step?, code, message }`), `agent/load-report`
   * (`{ repairs, warnings }`, before the first new event of a resumed
   * session) and `cli/error` (`{ code, message }`, a failure the command line
   * found itself, e.g. the final flush of the log failing).
   */
  note(type: 'agent/error' | 'agent/load-report' | 'cli/error', data: object): void {
    this.stream.write(`${JSON.stringify({ type, time: Date.now(), data })}\n`)
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
