// A module resolution hook: adds the `dsh-source` export condition, under which every
// @deepseek-ai/dsh-* package resolves to its TypeScript sources (see each package's "exports").
export async function resolve(specifier, context, nextResolve) {
  const conditions = context.conditions.includes('dsh-source') ? context.conditions : ['dsh-source', ...context.conditions]
  return nextResolve(specifier, { ...context, conditions })
}
