/**
 * Values the command line accepts, kept apart from the modules that use them so the
 * program can be built without loading any command (each command is loaded when run).
 */

/** Output formats of the table commands. */
export type OutputFormat = 'pretty' | 'json' | 'yaml' | 'tsv';

/** Valid `-f` values. */
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['pretty', 'json', 'yaml', 'tsv'];

/** Role filter accepted by `--role`. */
export type RoleFilter = 'leader' | 'primary' | 'standby-leader' | 'replica' | 'any';

/** Valid `--role` values (`master` is read as `primary`, `standby_leader` as `standby-leader`). */
export const ROLE_FILTERS: readonly RoleFilter[] = ['leader', 'primary', 'standby-leader', 'replica', 'any'];
