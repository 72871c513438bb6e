/** The ids the API takes for `tool_use.id` and `tool_result.tool_use_id`. */
const API_ID = /^[a-zA-Z0-9_-]+$/

/**
 * An id the API would refuse, made one it takes. Other providers' ids may hold
 * characters the API refuses (Kimi's `functions.read_file:0`, Codex's
 * `call_…|fc_…`): such an id becomes its allowed characters, `_` for each
 * other one, and a base-36 FNV-1a hash of the whole id (so `a.b` and `a:b`
 * stay apart).
 */
function allowed(id: string): string {
  if (API_ID.test(id)) return id
  let hash = 0x811c9dc5
  for (let i = 0; i < id.length; i++) hash = Math.imul(hash ^ id.charCodeAt(i), 0x01000193)
  return `${id.replace(/[^a-zA-Z0-9_-]/g, '_')}_${(hash >>> 0).toString(36)}`
}

/**
 * The tool call ids of one request, as sent. The API refuses ids outside
 * `^[a-zA-Z0-9_-]+$` and a `tool_use` id used twice in a request, and a
 * session switched from another provider may hold both: Kimi numbers its
 * calls per answer, so `functions.read_file:0` comes back every turn.
 *
 * Walked in history order: a call whose id (made allowed) was already sent
 * gets `_2`, `_3`, … (the first free one), and a result answers the latest
 * call of its id, as the history pairs them. An earlier call's id never
 * depends on later messages, so the request's prefix stays byte-stable as
 * the session grows; the same history always gives the same ids. A valid,
 * unique id goes unchanged. Cost: one map lookup per call and result.
 */
export class ToolIds {
  private readonly sent = new Set<string>()
  /** Each history id to the wire id of its latest call. */
  private readonly latest = new Map<string, string>()

  /** The wire id of a `tool_use` with history id `id`. */
  call(id: string): string {
    const base = allowed(id)
    let wire = base
    for (let n = 2; this.sent.has(wire); n++) wire = `${base}_${n}`
    this.sent.add(wire)
    this.latest.set(id, wire)
    return wire
  }

  /** The wire id a `tool_result` answering history id `id` names. */
  result(id: string): string {
    return this.latest.get(id) ?? allowed(id)
  }
}
