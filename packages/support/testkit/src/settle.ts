/**
 * Lets every pending microtask and I/O callback run (one turn of the event
 * loop, no timer): what a test awaits before it checks that something has NOT
 * happened yet. It orders nothing by speed; call it twice where a step takes two
 * turns.
 */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}
