// A module resolution hook: adds the `source` export condition, under which every
// @deepseek-ai/dsh-* package resolves to its TypeScript sources (see each package's "exports").
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes('source') ? context.conditions : ['source', ...context.conditions]
  return nextResolve(specifier, { ...context, conditions })
}
