import type { StreamChunk } from './stream'

/**
 * Receives the chunks of `pump`, synchronously and in order; returns `false`
 * to stop reading (the source is then stopped with `return()`). A throw stops
 * reading too, and is rethrown once the source is stopped.
 */
export type ChunkSink = (chunk: StreamChunk) => boolean

/**
 * A `ChunkSink` as an object: `pump` calls `take` as its method, with the
 * same contract. Why it exists: a consumer that makes a sink function per
 * stream (a closure over the stream's state) hands the pump a new function
 * each time, and V8 optimizes the pump's call of the sink as a call of the
 * first one it met, inlined; the next stream's function then deoptimizes the
 * pump and all it inlined ("wrong call target", at the start of a process's
 * second stream). A class's `take` is one function for every stream: the
 * pump's optimized code keeps it inlined from one stream to the next.
 */
export interface ChunkTaker {
  take(chunk: StreamChunk): boolean
}

/** A `ChunkSink` function given to `pump`, as a `ChunkTaker`. */
class FunctionTaker implements ChunkTaker {
  declare private readonly sink: ChunkSink

  constructor(sink: ChunkSink) {
    this.sink = sink
  }

  take(chunk: StreamChunk): boolean {
    return this.sink(chunk)
  }
}

/** `sink` as the pump calls it: a `ChunkTaker` as it is, a function wrapped. */
export function takerOf(sink: ChunkSink | ChunkTaker): ChunkTaker {
  return typeof sink === 'function' ? new FunctionTaker(sink) : sink
}
