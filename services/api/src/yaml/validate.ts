import { Composer, Parser } from 'yaml';
import { analyzeDocument, isNullDocument, newTally, YamlContentError } from './analyze.ts';
import { fastPathProvesValid } from './fast-path.ts';
import { DEFAULT_YAML_LIMITS, exceeded, YamlLimitError, type LimitExceeded, type YamlLimits } from './limits.ts';
import { prescan } from './prescan.ts';

/** `limit` is set when the content was refused for its size or shape, not for a mistake in it. */
export type YamlVerdict = { ok: true } | { ok: false; reason: string; limit?: LimitExceeded };

// In a `u` regex a proper surrogate pair is one code point, so only unpaired halves match.
const LONE_SURROGATE = /\p{Cs}/u;

const invalid = (reason: string): YamlVerdict => ({ ok: false, reason });

export interface ValidateOptions {
  /** A deletion marker may be blank; any content it carries must still be valid YAML. */
  isDeletionMarker: boolean;
}

/**
 * Brokkr's rules for a deployment object's content: not blank (unless a marker), parses as a
 * YAML stream, and holds at least one non-null document. Text Postgres cannot store (NUL) and
 * strings that are not well-formed UTF-16 (lone surrogates from a JSON body) are refused too,
 * so the stored bytes are always exactly the submitted ones. Beyond Brokkr, the work is bounded
 * (limits.ts) and linear in the size of the content; a hostile stream is refused with the limit
 * it passed.
 *
 * Plain block-style content (most manifests) is proved valid by the fast path (fast-path.ts) in a
 * few µs; everything else, and every refusal, goes through the `yaml` parser.
 */
export function validateDeploymentYaml(content: string, options: ValidateOptions, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlVerdict {
  return quickVerdict(content, options, limits) ?? parseVerdict(content, limits);
}

/**
 * The verdict when no parser is needed: content refused before parsing, or content the fast path
 * proves valid. Undefined when the parser must decide. Linear with a small constant, so
 * validator-pool.ts runs it on the event loop for content it would otherwise send to a worker.
 */
export function quickVerdict(content: string, options: ValidateOptions, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlVerdict | undefined {
  return refuseBeforeParsing(content, options) ?? (fastPathProvesValid(content, limits) ? { ok: true } : undefined);
}

/** The validation as it is without the fast path: what the differential test compares it with. */
export function validateWithoutFastPath(content: string, options: ValidateOptions, limits: YamlLimits = DEFAULT_YAML_LIMITS): YamlVerdict {
  return refuseBeforeParsing(content, options) ?? parseVerdict(content, limits);
}

/** The rules checked on the raw text (NUL, lone surrogates, blank); a blank marker is valid. */
function refuseBeforeParsing(content: string, options: ValidateOptions): YamlVerdict | undefined {
  if (content.includes('\u0000')) return invalid('content contains a NUL character');
  if (LONE_SURROGATE.test(content)) return invalid('content is not valid Unicode');
  if (content.trim() === '') {
    return options.isDeletionMarker ? { ok: true } : invalid('YAML content must not be blank');
  }
  return undefined;
}

/** The parser's verdict on content that passed refuseBeforeParsing. */
function parseVerdict(content: string, limits: YamlLimits): YamlVerdict {
  try {
    prescan(content, limits);
    return checkStream(content, limits);
  } catch (err) {
    if (err instanceof YamlLimitError) return { ok: false, reason: err.message, limit: err.exceeded };
    if (err instanceof YamlContentError) return invalid(`invalid YAML: ${err.message}`);
    // The composer recurses per nesting level: absurdly deep input ends in a RangeError.
    return invalid(`invalid YAML: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Composes the documents one at a time. `uniqueKeys: false` turns off yaml's quadratic duplicate
 * key check; analyzeDocument does it in linear time along with everything `toJS()` checked.
 */
function checkStream(content: string, limits: YamlLimits): YamlVerdict {
  const tally = newTally();
  let documents = 0;
  let hasContent = false;
  for (const doc of new Composer({ uniqueKeys: false }).compose(new Parser().parse(content))) {
    documents += 1;
    if (documents > limits.maxDocuments) throw exceeded(limits, 'maxDocuments');
    const error = doc.errors[0];
    if (error) return invalid(`invalid YAML: ${error.message}`);
    // Every document is checked (not only until one is non-null) so that an alias bomb in a
    // later document is refused as well.
    analyzeDocument(doc, limits, tally);
    if (!isNullDocument(doc)) hasContent = true;
  }
  return hasContent ? { ok: true } : invalid('YAML contains no non-null document');
}
