import { errorKind, type ErrorKind } from '../../errors/api-error.ts';

/** What carries labels and annotations: agents, stacks and template versions. */
export type LabelOwnerKind = 'agent' | 'stack' | 'template';

/**
 * Where one kind of owner keeps its labels and annotations, and the 404s of a missing one. The
 * statements in ./sql/ take their table and column names from here only: every name is built
 * from one of the three kinds above, never from a request.
 */
export interface LabelOwner {
  readonly kind: LabelOwnerKind;
  readonly labelTable: `${LabelOwnerKind}_labels`;
  readonly annotationTable: `${LabelOwnerKind}_annotations`;
  readonly ownerColumn: `${LabelOwnerKind}_id`;
  /** The columns of a label row as the API serves it. */
  readonly labelColumns: string;
  readonly annotationColumns: string;
  readonly labelNotFound: ErrorKind;
  readonly annotationNotFound: ErrorKind;
}

/** `stamped`: the rows carry `created_at` on the wire (template versions', as in Brokkr). */
function labelOwner(kind: LabelOwnerKind, stamped: boolean): LabelOwner {
  const ownerColumn = `${kind}_id` as const;
  const stamp = stamped ? ', created_at' : '';
  return {
    kind,
    labelTable: `${kind}_labels`,
    annotationTable: `${kind}_annotations`,
    ownerColumn,
    labelColumns: `id, ${ownerColumn}, label${stamp}`,
    annotationColumns: `id, ${ownerColumn}, key, value${stamp}`,
    labelNotFound: errorKind(404, `${kind}_label_not_found`, `Label not found on this ${kind}`),
    annotationNotFound: errorKind(404, `${kind}_annotation_not_found`, `Annotation not found on this ${kind}`),
  };
}

/** The allow-list: the only owners label and annotation statements run for. */
export const labelOwners = {
  agent: labelOwner('agent', false),
  stack: labelOwner('stack', false),
  template: labelOwner('template', true),
} as const satisfies Record<LabelOwnerKind, LabelOwner>;
