import { SessionLog } from './session-log'
import type { Session } from './session'
import type { SessionEvent, SessionEventMap, SessionEventType } from './types'

/**
 * Appends a built-in event whose data the caller (a driver such as the agent
 * loop) built itself from values that are already lossless JSON of the
 * event's shape: numbers and strings it made, and parts that were admitted
 * and deep-frozen before (an admitted input's message, a message built by
 * `createUserMessage` or `createAssistantMessage` from admitted chunks). The
 * log then skips the lossless-JSON walk and the shape check and freezes only
 * what is not frozen yet; the structure check (R-SES-4), the projection,
 * the commit and `session/event` are unchanged, and a refusal throws the
 * same `SessionError` as `session.append`.
 *
 * Contract: every object or array in `data` is either frozen together with
 * its whole subtree, or a plain object or array built for this event. Data
 * that came from a plugin or a user unchecked must go through
 * `session.append`, which validates it. A session of another implementation
 * or whose `append` was replaced (wrapped), a chunk and a registered type are
 * appended with `session.append`.
 */
export function appendBuilt<K extends SessionEventType>(session: Session, type: K, data: SessionEventMap[K]): SessionEvent<K> {
  // A session whose `append` was wrapped (a test's refusing log, an instrumentation) sees this append too.
  return isOwn(session) ? session.appendBuilt(type, data) : session.append(type, data)
}

const ownAppend = SessionLog.prototype.append
const ownAppendBuilt = SessionLog.prototype.appendBuilt

/**
 * Whether `session` is a `SessionLog` whose `append` is its own: it has the
 * class's own `appendBuilt` and `append` (two property reads, which cost less
 * than `instanceof` in the cold round's unoptimized code; only a `SessionLog`
 * or a subclass holds these methods).
 */
function isOwn(session: Session): session is SessionLog {
  return (session as Partial<SessionLog>).appendBuilt === ownAppendBuilt && session.append === ownAppend
}

/**
 * `session.append(type, data)`, with every check: the data is validated as
 * `append` validates it. For a driver's occasional events (the agent loop's
 * `request/header`): a session of this store enters them apart from the path
 * its chunks take, which keeps that path's optimized code as it is when a new
 * session writes its first such event. A session of another implementation,
 * or whose `append` was replaced (wrapped), gets `session.append`.
 */
export function appendChecked<K extends SessionEventType>(session: Session, type: K, data: SessionEventMap[K]): SessionEvent<K> {
  return isOwn(session) ? session.appendEvent(type, data) : session.append(type, data)
}
