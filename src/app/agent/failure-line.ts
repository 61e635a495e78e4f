/**
 * A failure in one line for `waiting_for` and the back-off message. Errors that quote the
 * server log put it after their first line ("... exited during start-up; server log:"), and
 * the reason is the FATAL or PANIC line there: it is kept, without its timestamp and PID.
 */
export function failureLine(error: string, max = 500): string {
  const [first = '', ...rest] = error.split('\n');
  const fatal = rest.filter((l) => /\b(FATAL|PANIC):/.test(l)).pop();
  if (fatal === undefined) return first.slice(0, max);
  const reason = fatal.replace(/^.*?\b(FATAL|PANIC):\s*/, '$1: ').trim();
  return `${first.replace(/[;:]?\s*server log:\s*$/, '')}: ${reason}`.slice(0, max);
}
