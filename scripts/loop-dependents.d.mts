export const LOOP: string
export const LOOP_DEPENDENTS: Readonly<Record<string, string>>
export function loopDependencyProblems(root: string): string[]
