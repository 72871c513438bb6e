import { Context } from './cordis'

/**
 * The property that marks a scoped context. It is a registered symbol so that
 * two copies of this package (a bundled one and a linked one) still agree.
 */
export const kScope: unique symbol = Symbol.for('dsh.scope') as never

/** What a scoped context is scoped to: one subject, such as an agent's id. */
export interface Scope {
  /** The subject's identity; events "about" this subject carry the same string. */
  readonly subject: string
}

declare module 'cordis' {
  interface Context {
    [kScope]?: Scope
  }
}

/**
 * Derives a context scoped to `subject`. Everything registered through it (or
 * through a plugin loaded under it) is agent-local: scoped registries resolve
 * it only for that subject, and scope-filtered events reach its listeners only
 * when they are about that subject.
 *
 * The scoped context shares the fiber of `ctx`: registrations still revert with
 * that fiber. Callers that need a separate lifetime load a child plugin first
 * and scope its context.
 */
export function scoped<C extends Context>(ctx: C, subject: string): C {
  if (typeof subject !== 'string' || subject.length === 0) {
    throw new TypeError('a scope subject must be a non-empty string')
  }
  return ctx.extend({ [kScope]: Object.freeze({ subject }) }) as C
}

/** The subject a context is scoped to, or `undefined` for a global context. */
export function scopeOf(ctx: Context): string | undefined {
  return ctx[kScope]?.subject
}
