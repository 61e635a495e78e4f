/** The PostgreSQL major version of a server_version_num (150004 -> 15); null when unknown or older than 10. */
export function majorVersion(versionNum: number | null | undefined): number | null {
  return typeof versionNum === 'number' && versionNum >= 100000 ? Math.floor(versionNum / 10000) : null;
}
