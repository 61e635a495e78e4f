import { open } from 'node:fs/promises';

/**
 * The end of a file as UTF-8: what follows byte `from`, at most its last `limit` bytes; '' when
 * the file cannot be read. For logs a command or a server writes while they are read.
 */
export async function readFileTail(path: string, limit: number, from = 0): Promise<string> {
  let fh;
  try {
    fh = await open(path, 'r');
    const { size } = await fh.stat();
    const start = Math.max(from, size - limit, 0);
    const buf = Buffer.alloc(Math.max(0, size - start));
    const { bytesRead } = await fh.read(buf, 0, buf.length, start);
    return buf.toString('utf8', 0, bytesRead);
  } catch {
    return '';
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
