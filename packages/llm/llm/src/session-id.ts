import type { Branded } from '@deepseek-ai/dsh-brand'

/**
 * The session id brand, owned by dsh-session (which depends on this package).
 * `Branded<'SessionId'>` is structural, so this is the very same type as
 * dsh-session's `SessionId`; the cast-only factory lives there.
 */
export type SessionId = Branded<'SessionId'>
