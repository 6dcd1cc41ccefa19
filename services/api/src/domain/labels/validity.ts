import { errorKind, raising } from '../../errors/api-error.ts';

/** Every label, annotation key and annotation value is a varchar(64) column. */
export const MAX_TAG_LENGTH = 64;

export const invalidLabel = errorKind(400, 'invalid_label', 'Invalid label');
export const invalidAnnotation = errorKind(400, 'invalid_annotation', 'Invalid annotation');

/**
 * The one rule for a label, an annotation key and an annotation value, whoever carries it: not
 * blank, at most 64 characters (counted as PostgreSQL counts them, not in UTF-8 bytes), no
 * whitespace anywhere. Brokkr applies it to stack labels and template labels and annotations
 * only (docs/compatibility.md). `what` names the text in the message.
 */
export function tagProblem(what: string, text: string): string | undefined {
  if (text.trim() === '') return `${what} cannot be empty`;
  if ([...text].length > MAX_TAG_LENGTH) return `${what} cannot exceed ${MAX_TAG_LENGTH} characters`;
  if (/\s/u.test(text)) return `${what} cannot contain whitespace`;
  return undefined;
}

export const isValidTag = (text: string): boolean => tagProblem('', text) === undefined;

export const requireValidLabel = raising((label: string): void => {
  const problem = tagProblem('Label', label);
  if (problem) throw invalidLabel.with(problem);
}, invalidLabel);

export const requireValidAnnotation = raising((key: string, value: string): void => {
  const problem = tagProblem('Annotation key', key) ?? tagProblem('Annotation value', value);
  if (problem) throw invalidAnnotation.with(problem);
}, invalidAnnotation);
