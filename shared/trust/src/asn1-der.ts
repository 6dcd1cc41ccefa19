import { ASN1Obj } from '@sigstore/core';

/**
 * DER of a parsed ASN.1 tree of @sigstore/core, byte for byte what its `ASN1Obj.toDER` writes
 * (the tag's byte, the minimal length, then the children's encodings or the value), into one
 * buffer of the exact size. The library's own writer makes two growing streams per node, each
 * starting with a zero-filled 1 KiB block, so one certificate of about a hundred nodes cost
 * hundreds of KiB of short-lived buffers per encoding: most of what the collector had to free
 * during keyless checks (ADR 0054). Sizes first, then the bytes written from the end backwards,
 * each node's content before its header, so no length is computed twice.
 */
export function encodeDer(node: ASN1Obj): Buffer {
  const size = encodedSize(node);
  const out = Buffer.allocUnsafe(size);
  const start = writeBackwards(node, out, size);
  // Every byte of `out` is written exactly once; anything else would be a bug in the sizes.
  if (start !== 0) throw new Error(`DER writer: ${start} bytes left unwritten`);
  return out;
}

/** How many bytes a length takes: one below 128, else one plus its big-endian bytes (DER's definite form). */
function lengthSize(length: number): number {
  if (length < 128) return 1;
  let bytes = 0;
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes++;
  return 1 + bytes;
}

function contentSize(node: ASN1Obj): number {
  if (node.subs.length === 0) return node.value.length;
  let size = 0;
  for (const sub of node.subs) size += encodedSize(sub);
  return size;
}

function encodedSize(node: ASN1Obj): number {
  const content = contentSize(node);
  return 1 + lengthSize(content) + content;
}

/** Writes `node` so that it ends just before `end`; returns where it starts. */
function writeBackwards(node: ASN1Obj, out: Buffer, end: number): number {
  let at = end;
  if (node.subs.length === 0) {
    at -= node.value.length;
    out.set(node.value, at);
  } else {
    for (let i = node.subs.length - 1; i >= 0; i--) at = writeBackwards(node.subs[i]!, out, at);
  }
  at = writeLength(end - at, out, at);
  out[--at] = node.tag.toDER();
  return at;
}

function writeLength(length: number, out: Buffer, end: number): number {
  let at = end;
  if (length < 128) {
    out[--at] = length;
    return at;
  }
  let bytes = 0;
  for (let n = length; n > 0; n = Math.floor(n / 256), bytes++) out[--at] = n % 256;
  out[--at] = 0x80 | bytes;
  return at;
}

/**
 * A copy of a parsed tree: new nodes and child lists (what a caller may change: the SCT check
 * removes an extension from its copy), the same tags and value bytes, which nothing changes. The
 * library copies by writing the DER and parsing it again; parsing the same strict DER gives this
 * same tree.
 */
export function copyTree(node: ASN1Obj): ASN1Obj {
  return new ASN1Obj(node.tag, node.value, node.subs.map(copyTree));
}
