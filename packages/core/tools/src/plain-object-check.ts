/** The primitive field types the check decides itself. */
const STRING = 0
const NUMBER = 1
const BOOLEAN = 2

/**
 * What `plainObjectCheck` returns: the arguments exactly as the zod schema's
 * `safeParse` would output them, or `undefined` when the check cannot vouch
 * for them (zod then decides, and writes the issues).
 */
export type PlainObjectCheck = (input: unknown) => Record<string, unknown> | undefined

/**
 * A direct check for the commonest kind of tool parameters: a strict zod
 * object (`z.object`, made strict by `defineTool`, or `z.strictObject`)
 * whose fields are plain `z.string()`, `z.number()` or `z.boolean()`, each
 * possibly `.optional()`, with no checks, refinements, coercion, formats,
 * defaults or transforms anywhere. For such a schema it returns a function
 * that accepts only what zod accepts and returns what zod returns (a new
 * object with the present fields in the shape's order); for any other schema
 * it returns `undefined` and zod does all the work.
 *
 * Why: zod's `safeParse` goes through a dozen calls per object (the parse
 * context, the payload, the generated fast path, each field's `run`, the
 * unknown-key pass with its `Set`), about 1.5 µs of a call's 5 µs while the
 * code is still interpreted, which is most of a session's first thousand
 * tool calls (issue 18, the cold round); this is one loop. It never decides a
 * refusal: any input it does not accept goes to `safeParse`, so every
 * `INVALID_ARGUMENTS` text stays zod's own.
 *
 * The parity holds for data, which is what the model's arguments are (the
 * pipeline hands `validate` the output of `JSON.parse`). An input with an
 * accessor (a getter, a `Proxy`) is read by this check and, when it declines,
 * read again by zod: a getter with side effects, or one that answers
 * differently on each read, can then get an answer zod alone would not give.
 */
export function plainObjectCheck(schema: { readonly _zod: object }): PlainObjectCheck | undefined {
  const zod = schema as unknown as Schema
  const def = zod._zod.def
  if (def.type !== 'object' || hasChecks(zod) || !isNever(def.catchall)) return undefined
  const shape = def.shape
  if (shape === null || typeof shape !== 'object' || Object.getOwnPropertySymbols(shape).length > 0) return undefined
  const keys = Object.keys(shape)
  const kinds: number[] = []
  const optional: boolean[] = []
  // A null-prototype table: `known[key]` is never an inherited property, whatever the key.
  const known: Record<string, true> = Object.create(null) as Record<string, true>
  for (const key of keys) {
    // zod leaves `__proto__` out of its output; not worth mirroring.
    if (key === '__proto__') return undefined
    let field = shape[key] as Schema | undefined
    let isOptional = false
    if (field?._zod?.def?.type === 'optional') {
      if (hasChecks(field)) return undefined
      isOptional = true
      field = field._zod.def.innerType
    }
    const kind = primitiveKind(field)
    if (kind === undefined) return undefined
    kinds.push(kind)
    optional.push(isOptional)
    known[key] = true
  }
  const count = keys.length
  return (input) => {
    if (input === null || typeof input !== 'object' || Array.isArray(input)) return undefined
    // zod's strict object refuses any key `for…in` yields that the shape lacks.
    for (const key in input) if (known[key] !== true) return undefined
    const source = input as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (let i = 0; i < count; i++) {
      const key = keys[i]!
      if (!(key in source)) {
        if (optional[i]) continue
        return undefined
      }
      const value = source[key]
      const kind = kinds[i]
      if (kind === STRING ? typeof value !== 'string' : kind === NUMBER ? typeof value !== 'number' || !Number.isFinite(value) : typeof value !== 'boolean') {
        return undefined
      }
      out[key] = value
    }
    return out
  }
}

/** The parts of zod 4's core schema object (`_zod`) the check reads. */
interface Schema {
  _zod: { def: Def; traits?: { has(trait: string): boolean } }
}

interface Def {
  type: string
  checks?: readonly unknown[]
  coerce?: boolean
  catchall?: Schema
  shape?: Record<string, unknown>
  innerType?: Schema
}

function hasChecks(schema: Schema): boolean {
  const { def, traits } = schema._zod
  // A format (`z.email()`, `z.int()`) is itself a check.
  return (def.checks !== undefined && def.checks.length > 0) || traits === undefined || traits.has('$ZodCheck')
}

function isNever(schema: Schema | undefined): boolean {
  return schema?._zod?.def?.type === 'never' && !hasChecks(schema)
}

/** The kind of a plain string, number or boolean schema; `undefined` for anything else. */
function primitiveKind(schema: Schema | undefined): number | undefined {
  const def = schema?._zod?.def
  if (!def || hasChecks(schema!) || def.coerce) return undefined
  // A string format (`z.email()`) carries its format in the def even where it is not a check.
  if ('format' in def) return undefined
  switch (def.type) {
    case 'string':
      return STRING
    case 'number':
      return NUMBER
    case 'boolean':
      return BOOLEAN
    default:
      return undefined
  }
}
