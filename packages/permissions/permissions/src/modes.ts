/**
 * A permission mode: how much an agent may do without asking.
 *
 * - `plan`: read-only. Every call that is not a `read` is refused with a
 *   result telling the model it is planning (a `shell` command runs only
 *   when every part of it is on the read-only list); `exit_plan_mode`
 *   shows the plan to the person and leaves plan mode on approval.
 * - `default`: reads run; writes, commands and network calls ask.
 * - `accept-edits`: writes inside the workspace run too, except into a
 *   `.git` directory or the workspace's `.dsh` (a hook or git config runs
 *   code later, `.dsh/settings.json` holds permission rules); commands and
 *   network calls still ask.
 * - `bypass`: everything runs without asking (deny rules still refuse).
 *   Only by an explicit choice (`allowBypass`).
 */
export type PermissionMode = 'plan' | 'default' | 'accept-edits' | 'bypass'

/** Every mode, from the least to the most permissive. */
export const PERMISSION_MODES: readonly PermissionMode[] = Object.freeze(['plan', 'default', 'accept-edits', 'bypass'])

/** Whether `mode` is a permission mode. */
export function isPermissionMode(mode: unknown): mode is PermissionMode {
  return typeof mode === 'string' && (PERMISSION_MODES as readonly string[]).includes(mode)
}

/** The less permissive of two modes (a child's mode under its parent's). */
export function stricterMode(a: PermissionMode, b: PermissionMode): PermissionMode {
  return PERMISSION_MODES.indexOf(a) <= PERMISSION_MODES.indexOf(b) ? a : b
}

/** Whether `a` allows more than `b`. */
export function morePermissive(a: PermissionMode, b: PermissionMode): boolean {
  return PERMISSION_MODES.indexOf(a) > PERMISSION_MODES.indexOf(b)
}
