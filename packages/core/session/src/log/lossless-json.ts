/**
 * Lossless-JSON validation and deep freezing for event data.
 *
 * Every `append` runs both, and `assistant/chunk` appends run about 500,000
 * times a second, so the walk is hand-written for small flat objects: no
 * `Object.keys` arrays, no JSON round trip, leaves checked inline, no
 * allocation unless something is wrong (the path of a problem is only built
 * on the way out of a failure). The objects a successful check visited are
 * remembered, so freezing them afterwards needs no second walk.
 */

/** What is wrong with a value, and where (`path` from the root, outermost first). */
export interface JsonProblem {
  readonly path: readonly (string | number)[]
  readonly reason: string
}

/** Deeper nesting is refused: it is almost always a bug, and the walk is recursive. */
export const MAX_JSON_DEPTH = 256

interface MutableProblem {
  path: (string | number)[]
  reason: string
}

/**
 * Checks values and then freezes exactly what it checked. Not reentrant: the
 * caller runs `problem(value)`, its own pure checks, then `freezeChecked()`.
 */
export class JsonGuard {
  // `ancestors[d]` is the object at depth `d` of the current walk: a value
  // equal to one of its ancestors is a cycle (a shared sub-object is not).
  private readonly ancestors: object[] = []
  private readonly visited: object[] = []
  private count = 0

  /**
   * The first reason `value` would not survive `JSON.stringify` →
   * `JSON.parse` unchanged, or `undefined` when it would. Refused: `undefined`
   * (in objects or arrays, including array holes), functions, symbols,
   * bigints, `NaN` and infinities, cycles, and objects that are not plain
   * (class instances, `Date`, `Map`, …). Shared sub-objects are fine. `-0` is
   * accepted (it reads back as `0`, which `===` it). Symbol-keyed and
   * non-enumerable properties are not looked at.
   */
  problem(value: unknown): JsonProblem | undefined {
    this.release()
    const problem = this.walk(value, 0)
    if (problem === undefined) return undefined
    this.ancestors.length = 0
    this.release()
    problem.path.reverse()
    return problem
  }

  /** Deep-freezes the value the last `problem()` call accepted. */
  freezeChecked(): void {
    const visited = this.visited
    for (let i = 0; i < this.count; i++) {
      Object.freeze(visited[i])
      visited[i] = undefined as never
    }
    this.count = 0
  }

  private release(): void {
    for (let i = 0; i < this.count; i++) this.visited[i] = undefined as never
    this.count = 0
  }

  private walk(value: unknown, depth: number): MutableProblem | undefined {
    if (typeof value !== 'object') return leafProblem(value)
    if (value === null) return undefined
    const ancestors = this.ancestors
    for (let i = 0; i < depth; i++) {
      if (ancestors[i] === value) return fail('refers back to an object that contains it (a cycle)')
    }
    if (depth >= MAX_JSON_DEPTH) return fail(`nests deeper than ${MAX_JSON_DEPTH} levels`)
    ancestors[depth] = value
    if (Array.isArray(value)) {
      this.visited[this.count++] = value
      for (let i = 0; i < value.length; i++) {
        const item: unknown = value[i]
        // Leaves are checked inline: most values are strings and numbers.
        if (typeof item === 'string' || typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item))) continue
        const problem = this.walk(item, depth + 1)
        if (problem !== undefined) {
          problem.path.push(i)
          return problem
        }
      }
      return undefined
    }
    const proto = Object.getPrototypeOf(value)
    if (proto !== Object.prototype && proto !== null) {
      return fail(`is ${describeInstance(value)}, not a plain object (convert it to plain JSON first)`)
    }
    this.visited[this.count++] = value
    // `for…in` walks own enumerable string keys here: the prototype is
    // `Object.prototype` or null, neither of which has enumerable keys.
    for (const key in value) {
      const item: unknown = (value as Record<string, unknown>)[key]
      if (typeof item === 'string' || typeof item === 'boolean' || (typeof item === 'number' && Number.isFinite(item))) continue
      const problem = this.walk(item, depth + 1)
      if (problem !== undefined) {
        problem.path.push(key)
        return problem
      }
    }
    return undefined
  }
}

function fail(reason: string): MutableProblem {
  return { path: [], reason }
}

function leafProblem(value: unknown): MutableProblem | undefined {
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
    default:
      return fail(`is a ${typeof value}, which JSON drops`)
  }
}

function describeInstance(value: object): string {
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name
  return typeof name === 'string' && name ? `a ${name} instance` : 'an object with a custom prototype'
}

const identifier = /^[A-Za-z_$][\w$]*$/

/** Renders a path the way a person writes it in code: `data.message.content[0].text`. */
export function formatPath(root: string, path: readonly (string | number)[]): string {
  let out = root
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else if (identifier.test(part)) out += `.${part}`
    else out += `[${JSON.stringify(part)}]`
  }
  return out
}

/**
 * What in `value` the session log would refuse as event data, as a sentence
 * starting with `root` and the path (`output[0].size is a bigint, which JSON
 * cannot represent (use a number or a string)`), or `undefined` when the log
 * would take it. The same rules and words as `append`'s own check: a plugin
 * that hands the loop a value to log can refuse it first, as its own error,
 * instead of having the write refused (which stops the agent). A walk per call
 * with a guard of its own: not for a per-chunk path.
 */
export function jsonDataProblem(value: unknown, root = ''): string | undefined {
  const problem = new JsonGuard().problem(value)
  return problem === undefined ? undefined : `${formatPath(root, problem.path)} ${problem.reason}`
}
