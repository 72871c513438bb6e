export function indexCode(file: string, text?: string): { line: number; text: string }[]
export function skeletonProblems(root: string): string[]
