/**
 * What a server logs for the clients it turns away while it starts or stops. A busy
 * application retries many times a second, so these lines can fill the tail of the log and
 * push out the few lines that say why the server stopped (a full disk, a bad setting).
 */
const TURNED_AWAY =
  /\b(FATAL|DETAIL):\s+(the database system is (starting up|not yet accepting connections|shutting down|in recovery mode|not accepting connections)|Consistent recovery state has not been yet reached|Hot standby mode is disabled)/;

/** The last `maxLines` lines of a server log excerpt, without the lines of clients turned away. */
export function serverLogExcerpt(log: string, maxLines: number): string[] {
  return log
    .trim()
    .split('\n')
    .filter((line) => line !== '' && !TURNED_AWAY.test(line))
    .slice(-maxLines);
}
