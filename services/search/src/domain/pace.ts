/**
 * Long work in the search process (the expert model's fit) shares the event loop with searches:
 * `await pace()` in its loops gives the loop back once `sliceMs` have passed since it last did,
 * so a search waits at most about one slice for it.
 */
export function pacer(sliceMs = 5): () => Promise<void> | undefined {
  let since = performance.now();
  return () => {
    if (performance.now() - since < sliceMs) return undefined;
    return new Promise<void>((resolve) =>
      setImmediate(() => {
        since = performance.now();
        resolve();
      }),
    );
  };
}
