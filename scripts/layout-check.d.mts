export interface PendingEntry { check: string; key: string; why: string }
export interface Finding { check: string; key: string; message: string }
export const PENDING: readonly PendingEntry[]
export function runChecks(root: string): Finding[]
export function layoutReport(root: string, pending?: readonly PendingEntry[]): { problems: Finding[]; tolerated: Finding[]; stale: PendingEntry[] }
