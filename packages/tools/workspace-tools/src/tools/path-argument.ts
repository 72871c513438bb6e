import { z } from 'zod'

/** A path argument: relative to the workspace root (an absolute path inside the workspace is accepted too). */
export function pathArgument(description = 'Path relative to the workspace root') {
  return z.string().describe(description)
}
