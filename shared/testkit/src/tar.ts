import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** One archive member: a directory (`body` undefined) or a regular file. */
export interface TarEntry {
  /** `/`-separated, relative; directories without the trailing slash. */
  name: string;
  body?: Buffer;
}

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, '0')}\0`;
}

/** A ustar header. Names up to 100 bytes (the fixtures' are short; longer ones are refused). */
function header(entry: TarEntry): Buffer {
  const isDir = entry.body === undefined;
  const name = isDir ? `${entry.name}/` : entry.name;
  if (Buffer.byteLength(name) > 100) throw new Error(`tar: ${name} is longer than 100 bytes`);
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 'utf8');
  block.write(octal(isDir ? 0o755 : 0o644, 8), 100, 'ascii');
  block.write(octal(0, 8), 108, 'ascii'); // uid
  block.write(octal(0, 8), 116, 'ascii'); // gid
  block.write(octal(entry.body?.length ?? 0, 12), 124, 'ascii');
  block.write(octal(0, 12), 136, 'ascii'); // mtime: fixed, so the same files give the same digest
  block.write(' '.repeat(8), 148, 'ascii'); // the checksum counts its own field as spaces
  block.write(isDir ? '5' : '0', 156, 'ascii');
  block.write('ustar\u000000', 257, 'ascii');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  return block;
}

/**
 * A .tar.gz of the entries, in the order given: deterministic (no timestamps, owners or
 * modes from the disk), so a fixture's digest is the same on every run.
 */
export function tarGz(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    parts.push(header(entry));
    if (entry.body) {
      parts.push(entry.body, Buffer.alloc((BLOCK - (entry.body.length % BLOCK)) % BLOCK));
    }
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return gzipSync(Buffer.concat(parts));
}

async function walk(root: string, relative: string, out: TarEntry[], prefix: string): Promise<void> {
  const dirents = await readdir(path.join(root, relative), { withFileTypes: true });
  for (const dirent of dirents.sort((a, b) => a.name.localeCompare(b.name))) {
    const rel = relative === '' ? dirent.name : `${relative}/${dirent.name}`;
    const name = prefix === '' ? rel : `${prefix}/${rel}`;
    if (dirent.isDirectory()) {
      out.push({ name });
      await walk(root, rel, out, prefix);
    } else if (dirent.isFile()) {
      out.push({ name, body: await readFile(path.join(root, rel)) });
    }
  }
}

/** A directory's members (sorted, directories first in each level's order), under `prefix`. */
export async function directoryEntries(dir: string, prefix = ''): Promise<TarEntry[]> {
  const entries: TarEntry[] = prefix === '' ? [] : [{ name: prefix }];
  await walk(dir, '', entries, prefix);
  return entries;
}

/**
 * A directory as a .tar.gz, its members under `prefix` (a chart's archive holds `<name>/…`, as
 * `helm package` writes it; a kustomize archive its tree at the root, prefix '').
 */
export async function packDirectory(dir: string, prefix = ''): Promise<Buffer> {
  return tarGz(await directoryEntries(dir, prefix));
}
