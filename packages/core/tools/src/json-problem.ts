/** Deeper nesting is refused, as the session log refuses it (and the walk is recursive). */
const MAX_DEPTH = 256

const identifier = /^[A-Za-z_$][\w$]*$/

/**
 * What in `value` JSON would not carry back unchanged, as the rest of a
 * sentence after the value's name (`[0].size is a bigint, which JSON cannot
 * represent (use a number or a string)`), or `undefined` when it would.
 *
 * Why here: a result and its contexts go into the session log, which refuses
 * such a value (undefined, a function, a symbol, a bigint, NaN or an
 * infinity, a cycle, an object that is not plain), and a refused append
 * stops the agent for good. Checked when the tool hands its output over, the
 * same mistake fails only that call, as a result the model reads. The reasons
 * are the log's own words. Only content blocks are walked: a string output
 * (the usual one) costs nothing.
 */
export function jsonProblem(value: unknown): string | undefined {
  const problem = walk(value, [])
  if (problem === undefined) return undefined
  let path = ''
  for (let i = problem.path.length - 1; i >= 0; i--) {
    const part = problem.path[i]!
    path += typeof part === 'number' ? `[${part}]` : identifier.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`
  }
  return `${path} ${problem.reason}`
}

interface Problem {
  /** Innermost first: pushed on the way out of the walk. */
  path: (string | number)[]
  reason: string
}

function walk(value: unknown, ancestors: object[]): Problem | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value) ? undefined : fail(`is ${value}, which JSON cannot represent (use a finite number or null)`)
    case 'undefined':
      return fail('is undefined, which JSON drops (omit the key, or use null)')
    case 'bigint':
      return fail('is a bigint, which JSON cannot represent (use a number or a string)')
    case 'function':
      return fail('is a function, which JSON drops')
    case 'object':
      break
    default:
      return fail(`is a ${typeof value}, which JSON drops`)
  }
  if (value === null) return undefined
  if (ancestors.includes(value)) return fail('refers back to an object that contains it (a cycle)')
  if (ancestors.length >= MAX_DEPTH) return fail(`nests deeper than ${MAX_DEPTH} levels`)
  let problem: Problem | undefined
  ancestors.push(value)
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length && problem === undefined; i++) {
      problem = walk(value[i], ancestors)
      problem?.path.push(i)
    }
  } else {
    const proto: unknown = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) {
      const name = (value as { constructor?: { name?: unknown } }).constructor?.name
      problem = fail(`is ${typeof name === 'string' && name ? `a ${name} instance` : 'an object with a custom prototype'}, not a plain object (convert it to plain JSON first)`)
    } else {
      for (const key in value) {
        problem = walk((value as Record<string, unknown>)[key], ancestors)
        if (problem) {
          problem.path.push(key)
          break
        }
      }
    }
  }
  ancestors.pop()
  return problem
}

function fail(reason: string): Problem {
  return { path: [], reason }
}
