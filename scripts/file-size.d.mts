export const MAX_SOURCE_LINES: number
export function lineCount(text: string): number
export function oversizedSources(root: string, limit?: number): { file: string; lines: number }[]
