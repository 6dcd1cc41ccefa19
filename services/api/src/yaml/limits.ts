/**
 * Bounds on the work one deployment object's YAML may cause. Real manifests (a Helm chart's
 * rendering, a kustomize build) stay far below every one of them; hostile uploads hit one early.
 * With these in place every step of the validation is linear in the size of the content.
 */
export interface YamlLimits {
  /** Documents in the stream (`---` separated). */
  maxDocuments: number;
  /** Anchors (`&name`) in the whole stream. */
  maxAnchors: number;
  /** Aliases (`*name`) in the whole stream. */
  maxAliases: number;
  /**
   * Parsed nodes (scalars and collections) in the whole stream. Dense manifests take about 7
   * bytes per node, so the default body limit (2 MiB) stays well below it; composing one costs
   * up to 1 KB of memory, which is what this bounds.
   */
  maxNodes: number;
  /** Nodes once every alias is replaced by what it names: the "billion laughs" bound. */
  maxExpandedNodes: number;
}

export const DEFAULT_YAML_LIMITS: Readonly<YamlLimits> = Object.freeze({
  maxDocuments: 10_000,
  maxAnchors: 1_000,
  maxAliases: 1_000,
  maxNodes: 500_000,
  maxExpandedNodes: 1_000_000,
});

/** The limit names clients see in `details.limit` (snake_case like every API field). */
export const LIMIT_NAMES = {
  maxDocuments: 'max_documents',
  maxAnchors: 'max_anchors',
  maxAliases: 'max_aliases',
  maxNodes: 'max_nodes',
  maxExpandedNodes: 'max_expanded_nodes',
} as const satisfies Record<keyof YamlLimits, string>;

/** Limits enforced around the parser rather than by it (worker.ts). */
export type RuntimeLimitName = 'parse_time_ms' | 'parser_memory_mb';

export type LimitName = (typeof LIMIT_NAMES)[keyof YamlLimits] | RuntimeLimitName;

export interface LimitExceeded {
  limit: LimitName;
  value: number;
}

const DESCRIPTIONS: Record<LimitName, string> = {
  max_documents: 'documents',
  max_anchors: 'anchors',
  max_aliases: 'aliases',
  max_nodes: 'YAML nodes',
  max_expanded_nodes: 'YAML nodes once aliases are expanded',
  parse_time_ms: 'milliseconds of parsing',
  parser_memory_mb: 'MB of parser memory',
};

export function describeLimit({ limit, value }: LimitExceeded): string {
  return `YAML content exceeds the limit of ${value} ${DESCRIPTIONS[limit]} (${limit})`;
}

/** Thrown inside the validation when a limit is passed; turned into a verdict by validate.ts. */
export class YamlLimitError extends Error {
  constructor(readonly exceeded: LimitExceeded) {
    super(describeLimit(exceeded));
    this.name = 'YamlLimitError';
  }
}

export function exceeded(limits: YamlLimits, key: keyof YamlLimits): YamlLimitError {
  return new YamlLimitError({ limit: LIMIT_NAMES[key], value: limits[key] });
}
