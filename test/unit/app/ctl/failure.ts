/** The error a promise rejects with; fails the test when it resolves. */
export async function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    await p;
  } catch (e) {
    return e as Error & { code?: string };
  }
  throw new Error('expected a failure');
}
