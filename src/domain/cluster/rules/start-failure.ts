/**
 * What a failed start of PostgreSQL says about its data. A server that does not start for a
 * reason outside its data directory (its configuration, a taken port, a full disk, memory, a
 * missing library) is not repaired: a rewind cannot cure it, and a rebuild would throw good
 * data away (a former primary's may hold the only copy of commits). The patterns are
 * PostgreSQL's own messages (LC_MESSAGES C), as the start's error quotes its log.
 */
const OUTSIDE_DATA: readonly (readonly [RegExp, string])[] = [
  [/configuration file .* contains errors|invalid value for parameter|unrecognized configuration parameter|parameter ".*" requires a .* value|syntax error in file/i, 'its configuration'],
  [/could not bind|could not create any TCP\/IP sockets|Address already in use|could not create listen socket|could not create Unix-domain socket/i, 'its listen address or port'],
  // A short write is how PostgreSQL reports a full disk while extending or writing a relation ("HINT: Check free disk space.").
  [/No space left on device|Disk quota exceeded|wrote only \d+ of \d+ bytes|Check free disk space/i, 'a full disk'],
  [/Read-only file system|EROFS/, 'a read-only file system'],
  [/database files are incompatible with server/i, 'PostgreSQL binaries of another major version than its PG_VERSION (db.bin_dir, or a damaged PG_VERSION)'],
  [/could not (map|create) .*shared memory|Cannot allocate memory|out of memory|could not create semaphores/i, 'memory or shared memory'],
  [/could not (load|access) (library|file) ".*\$libdir|could not load library/i, 'a library it is configured to load'],
  [/Permission denied/i, 'file permissions'],
];

/** The cause outside the data directory that a start's error names, or null when it names none (or the data may be at fault). */
export function startFailureOutsideData(error: string): string | null {
  for (const [pattern, cause] of OUTSIDE_DATA) if (pattern.test(error)) return cause;
  return null;
}
