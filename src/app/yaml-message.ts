/**
 * The first line of a YAML parser error without the position the parser appends to it, for
 * problems whose path names the line and column already.
 */
export function yamlMessage(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '');
}
