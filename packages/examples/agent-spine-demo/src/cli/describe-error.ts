/** An error for the person at the terminal: `CODE: message` when it has a code. */
export function describeError(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && code ? `${code}: ${message}` : message
}
