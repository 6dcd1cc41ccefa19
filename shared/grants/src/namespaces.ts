import type { Grant } from '@brokkr/contracts';

/** `*` stands for any run of the characters a namespace name may hold; everything else is literal. */
export function namespaceMatches(pattern: string, namespace: string): boolean {
  if (!pattern.includes('*')) return pattern === namespace;
  const parts = pattern.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('[-a-z0-9]*')}$`).test(namespace);
}

/** Whether the grant lets its stacks place namespaced objects in the namespace. */
export function grantCovers(grant: Grant, namespace: string): boolean {
  return namespace === grant.default_namespace || grant.namespaces.some((pattern) => namespaceMatches(pattern, namespace));
}
