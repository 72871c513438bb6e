import { styleText } from 'node:util'

type Format = Parameters<typeof styleText>[0]

/** Applies a terminal style, or nothing when colors are off. */
export type Style = (format: Format, text: string) => string

/**
 * Colors are on for a terminal unless `NO_COLOR` is set (https://no-color.org),
 * and off for pipes and files unless `FORCE_COLOR` is set to something other
 * than `0`. Node 20's `styleText` always emits escape codes, hence the gate.
 */
export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  const forced = env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== '0'
  const on = forced || (stream.isTTY === true && env.NO_COLOR === undefined)
  return on ? (format, text) => styleText(format, text) : (_format, text) => text
}
