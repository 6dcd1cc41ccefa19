import { Lexer } from 'yaml';
import { exceeded, type YamlLimits } from './limits.ts';

// The lexer's control tokens (yaml's CST.SCALAR / CST.DOCUMENT).
const SCALAR = '\x1f';
const DOCUMENT = '\x02';

interface Counts {
  documents: number;
  anchors: number;
  aliases: number;
  /** A lower bound: scalars and flow collections (block collections have no token of their own). */
  nodes: number;
}

// Tokens that each begin one node: quoted scalars and flow collections (plain and block scalars
// are announced by the SCALAR marker).
const NODE_STARTS = new Set(['"', "'", '{', '[']);

/**
 * Counts documents, anchors, aliases and nodes on the token stream, before anything is composed,
 * and stops at the first limit passed. Lexing is a few times cheaper than composing (and keeps
 * nothing), so a stream of 100,000 tiny documents, of 32,000 anchors or a flat list of a million
 * numbers (a gigabyte once composed) is refused after a fraction of its bytes.
 * The counts follow yaml's own parser: the token after a SCALAR marker is scalar text (never an
 * anchor or alias, whatever its first character), a `---` starts a document, and so does content
 * that begins without one.
 */
export function prescan(content: string, limits: YamlLimits): void {
  const counts: Counts = { documents: 0, anchors: 0, aliases: 0, nodes: 0 };
  let previous = '';
  for (const token of new Lexer().lex(content)) {
    if (previous !== SCALAR) count(counts, token, previous);
    check(counts, limits);
    previous = token;
  }
}

function count(counts: Counts, token: string, previous: string): void {
  if (token === '---' || (previous === DOCUMENT && token !== '---')) counts.documents += 1;
  if (token === SCALAR || NODE_STARTS.has(token[0] ?? '')) counts.nodes += 1;
  else if (token.startsWith('&')) counts.anchors += 1;
  else if (token.startsWith('*')) counts.aliases += 1;
}

function check(counts: Counts, limits: YamlLimits): void {
  if (counts.documents > limits.maxDocuments) throw exceeded(limits, 'maxDocuments');
  if (counts.anchors > limits.maxAnchors) throw exceeded(limits, 'maxAnchors');
  if (counts.aliases > limits.maxAliases) throw exceeded(limits, 'maxAliases');
  if (counts.nodes > limits.maxNodes) throw exceeded(limits, 'maxNodes');
}
