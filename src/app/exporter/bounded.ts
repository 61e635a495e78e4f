/** Runs async tasks with at most `limit` at once; resolves when all have settled (tasks handle their own errors). */
export async function runBounded(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < tasks.length) {
      const task = tasks[next++]!;
      try {
        await task();
      } catch {
        // Each task records its own failure; one failing task must not stop the others.
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}
