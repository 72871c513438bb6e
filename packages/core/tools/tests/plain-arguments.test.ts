import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, ToolError } from '@deepseek-ai/dsh-tools'

// defineTool checks plain parameters (strings, numbers, booleans, optional or not) in one loop of its own and
// leaves everything else to zod: whatever the input, `validate` must answer exactly as zod's safeParse does.

type Kind = 'string' | 'number' | 'boolean'

const field = (kind: Kind, optional: boolean) => {
  const base = kind === 'string' ? z.string() : kind === 'number' ? z.number() : z.boolean()
  return optional ? base.optional() : base
}

/** What zod says: the output, or the refusal's text as defineTool words it. */
function zodAnswer(schema: z.ZodObject, input: unknown): { ok: unknown } | { refused: true } {
  const parsed = schema.safeParse(input)
  return parsed.success ? { ok: parsed.data } : { refused: true }
}

function toolAnswer(validate: (args: unknown) => unknown, input: unknown): { ok: unknown } | { refused: true } {
  try {
    return { ok: validate(input) }
  } catch (error) {
    expect(error).toBeInstanceOf(ToolError)
    expect((error as ToolError).code).toBe('INVALID_ARGUMENTS')
    return { refused: true }
  }
}

const keyNames = ['a', 'b', 'path', 'n', 'constructor', 'toString', '__proto__', 'x y']

const shapes = fc.uniqueArray(
  fc.record({ key: fc.constantFrom(...keyNames.filter((k) => k !== '__proto__')), kind: fc.constantFrom<Kind>('string', 'number', 'boolean'), optional: fc.boolean() }),
  { selector: (f) => f.key, minLength: 0, maxLength: 4 },
)

const values = fc.oneof(
  fc.string(),
  fc.double(),
  fc.constantFrom(Number.NaN, Infinity, -Infinity, -0, 0),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string(), fc.integer(), { maxKeys: 2 }),
)

const valid: Record<Kind, fc.Arbitrary<unknown>> = { string: fc.string(), number: fc.double({ noNaN: true, noDefaultInfinity: true }), boolean: fc.boolean() }

/** A shape, and an input built for it: mostly well-typed fields, sometimes one missing, wrong or extra. */
const cases = shapes.chain((fields) =>
  fc.record({
    fields: fc.constant(fields),
    input: fc.tuple(
      fc.tuple(...fields.map((f) => fc.oneof({ weight: 8, arbitrary: valid[f.kind] }, { weight: 1, arbitrary: values }, { weight: 1, arbitrary: fc.constant(ABSENT) }))),
      fc.option(fc.tuple(fc.constantFrom(...keyNames), values), { freq: 4 }),
    ),
    form: fc.constantFrom('object', 'object', 'object', 'json', 'array', 'null'),
  }),
)

const ABSENT = Symbol('absent')

describe('defineTool: plain parameters', () => {
  // 1,500 generated cases, each validated by zod and by the plain check: all CPU, 10-12 s at load 9-12
  // (a third of the suite's 30 s). The ceiling is for a more loaded machine, as the other property tests'.
  it('validates exactly as zod does, same output (fields in the shape order) and same refusals', { timeout: 120_000 }, () => {
    let accepted = 0
    fc.assert(
      fc.property(cases, ({ fields, input: [fieldValues, extra], form }) => {
        const schema = z.object(Object.fromEntries(fields.map((f) => [f.key, field(f.kind, f.optional)])))
        const tool = defineTool({ name: 't', description: 't', parameters: schema, execute: () => 'ok' })
        const entries: Record<string, unknown> = {}
        fields.forEach((f, i) => {
          if (fieldValues[i] !== ABSENT) entries[f.key] = fieldValues[i]
        })
        if (extra) Object.defineProperty(entries, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true })
        const input: unknown = form === 'object' ? entries : form === 'json' ? JSON.parse(JSON.stringify(entries)) : form === 'array' ? [entries] : null
        const expected = zodAnswer(schema.strict(), input)
        const actual = toolAnswer(tool.validate!, input)
        expect(actual).toEqual(expected)
        if ('ok' in actual && 'ok' in expected) {
          accepted++
          expect(Object.keys(actual.ok as object)).toEqual(Object.keys(expected.ok as object))
        }
      }),
      { numRuns: 1500 },
    )
    // The cases reach both answers (a generator that only made refusals would prove nothing).
    expect(accepted).toBeGreaterThan(150)
  })

  it('returns a new object, never the input, and keeps the refusal texts zod writes', () => {
    const tool = defineTool({ name: 't', description: 't', parameters: z.object({ n: z.number(), s: z.string().optional() }), execute: () => 'ok' })
    const input = { n: 1 }
    const output = tool.validate!(input)
    expect(output).toEqual({ n: 1 })
    expect(output).not.toBe(input)
    expect(() => tool.validate!({ n: 1, extra: true })).toThrow('Unrecognized key: "extra"')
    expect(() => tool.validate!({ n: '1' })).toThrow('n: Invalid input: expected number, received string')
    expect(() => tool.validate!({ s: 'x' })).toThrow('n: Invalid input: expected number, received undefined')
  })

  it('refuses an inherited enumerable key as zod does, and reads a field the input inherits as zod does', () => {
    const tool = defineTool({ name: 't', description: 't', parameters: z.object({ n: z.number() }), execute: () => 'ok' })
    const inheritsExtra = Object.create({ extra: 1 }) as Record<string, unknown>
    inheritsExtra.n = 1
    expect(() => tool.validate!(inheritsExtra)).toThrow('Unrecognized key: "extra"')
    const inheritsField = Object.create(Object.defineProperty({}, 'n', { value: 2, enumerable: false })) as object
    expect(tool.validate!(inheritsField)).toEqual(z.object({ n: z.number() }).strict().parse(inheritsField))
  })
})
