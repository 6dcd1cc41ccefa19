import {
  agentSignaturesSchema,
  newSignatureSchema,
  publishedTrustMetadataSchema,
  storedSignatureSchema,
  trustMetadataSchema,
} from '@brokkr/contracts';
import { z } from 'zod';
import type { ApiContext } from '../../context.ts';
import { requireAdminOrSelf } from '../../domain/agent-access.ts';
import { agentsForStack } from '../../domain/agents-for-stacks.ts';
import { fetchOwnedStack } from '../../domain/stack-access.ts';
import { errorKind } from '../../errors/api-error.ts';
import { defineRoute, json, type AnyRoute } from '../../http/route.ts';
import { publishTrustMetadataChanged } from '../../events/trust-metadata-changes.ts';
import { idParams, uuid } from '../../http/schemas.ts';
import { readSignature, readTrustDocument } from './read-signed.ts';
import { forgetRelayedSignatures, forgetRelayedTrustMetadata, relayedSignatures, relayedTrustMetadata } from './relay-cache.ts';
import { publishTrustMetadata, stackHoldsContent } from './sql/queries.ts';
import { servedIds } from './sql/served-ids.ts';
import { storeSignature } from './sql/store-signature.ts';

/**
 * Signed intent (docs/signatures.md): the hub stores what generators sign and what the trust
 * root's key holders publish, and relays both to the agents, which check them in their clusters.
 * The hub checks no signature (it holds no key and is not trusted to), so nothing here can make a
 * cluster take anything: it can only withhold, which an agent with a fresh-metadata policy notices.
 */

const tags = ['signatures'];
const invalidSignature = errorKind(400, 'invalid_signature', 'Not a signature of a Brokkr statement');
const signatureStackMismatch = errorKind(400, 'signature_stack_mismatch', 'The signature is for another stack');
const invalidTrustMetadata = errorKind(400, 'invalid_trust_metadata', 'Not a signed Brokkr trust document');

/**
 * A signature for content the stack already holds (re-signed, e.g. after a revocation) reaches the
 * agents that carry signatures with their objects (GET target-state?signatures=true, patch frames):
 * a `signature` notice makes every replica read the stack's signatures again and wakes the agents
 * that check them. The usual order, the signature before its content, needs none: the content's
 * own notice brings both.
 */
async function wakeIfServed(ctx: ApiContext, stackId: string, contentDigest: string): Promise<void> {
  if (!(await stackHoldsContent(ctx.db.pool, stackId, contentDigest))) return;
  await ctx.notifyAgents(await agentsForStack(ctx.db.pool, stackId), { stack_id: stackId, signature: true });
}

const MAX_IDS = 100;
const idList = z
  .string()
  .optional()
  .transform((v, ctx) => {
    const ids = v ? v.split(',').filter(Boolean) : [];
    if (ids.length > MAX_IDS) ctx.addIssue({ code: 'custom', message: `at most ${MAX_IDS} ids` });
    if (!ids.every((id) => uuid().safeParse(id).success)) ctx.addIssue({ code: 'custom', message: 'comma-separated UUIDs' });
    return ids;
  });
const signaturesQuery = z.object({ deployment_object_ids: idList, work_order_ids: idList });

export const signatureRoutes: AnyRoute[] = [
  defineRoute({
    method: 'post',
    path: '/stacks/:id/signatures',
    summary: "Store a generator's signature of content it is about to post to the stack",
    description:
      'The body holds a Sigstore bundle (or a DSSE envelope) of an in-toto statement with predicate type ' +
      '`https://brokkr.dev/intent/v1` for this stack. A deployment object of the stack whose `yaml_checksum` equals the ' +
      "statement's subject digest is relayed with it to agents (with the object in GET /agents/{id}/target-state?signatures=true " +
      'and the agent channel’s patch frames, and by GET /agents/{id}/signatures); store it before posting the content ' +
      '(stored after, for content the stack already holds, it wakes the stack’s agents). ' +
      'The hub does not verify it: agents with a trust policy do.',
    tags,
    access: 'any',
    params: idParams,
    body: newSignatureSchema,
    responses: { 201: { description: 'What the hub read from the statement (unverified)', schema: storedSignatureSchema } },
    errors: [fetchOwnedStack, invalidSignature, signatureStackMismatch],
    async handler({ params, body, identity, ctx, clientIp, userAgent }) {
      await fetchOwnedStack(ctx.db.pool, identity, params.id);
      const read = readSignature(body.signature);
      if (!read.ok) throw invalidSignature.with(`Invalid signature: ${read.reason}`);
      if (!('stackId' in read.subject))
        throw invalidSignature.with('Invalid signature: a work order’s statement; store it with POST /work-orders/signatures');
      if (read.subject.stackId !== params.id) throw signatureStackMismatch({ signed_for: read.subject.stackId });
      const stored = await storeSignature(ctx.db.pool, {
        stackId: params.id,
        workType: null,
        contentDigest: read.contentDigest,
        version: read.subject.version,
        bundle: body.signature,
        bundleSha256: read.bundleSha256,
      });
      forgetRelayedSignatures(ctx.db.pool);
      await wakeIfServed(ctx, params.id, read.contentDigest);
      const details = { content_digest: read.contentDigest, version: read.subject.version };
      await ctx.audit({
        actor: identity,
        action: 'stack.signature_stored',
        resourceType: 'stack',
        resourceId: params.id,
        details,
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, stored);
    },
  }),

  defineRoute({
    method: 'post',
    path: '/work-orders/signatures',
    summary: 'Store the signature of a work order about to be created (admin)',
    description:
      'A Sigstore bundle (or DSSE envelope) of an in-toto statement with predicate type `https://brokkr.dev/work-order/v1`. ' +
      'Agents requiring signatures run a work order only with a valid one (matched by work type and the SHA-256 of its YAML).',
    tags,
    access: 'admin',
    body: newSignatureSchema,
    responses: { 201: { description: 'What the hub read from the statement (unverified)', schema: storedSignatureSchema } },
    errors: [invalidSignature],
    async handler({ body, identity, ctx, clientIp, userAgent }) {
      const read = readSignature(body.signature);
      if (!read.ok) throw invalidSignature.with(`Invalid signature: ${read.reason}`);
      if (!('workType' in read.subject))
        throw invalidSignature.with('Invalid signature: a stack’s statement; store it with POST /stacks/{id}/signatures');
      const stored = await storeSignature(ctx.db.pool, {
        stackId: null,
        workType: read.subject.workType,
        contentDigest: read.contentDigest,
        version: null,
        bundle: body.signature,
        bundleSha256: read.bundleSha256,
      });
      forgetRelayedSignatures(ctx.db.pool);
      const details = { work_type: read.subject.workType, content_digest: read.contentDigest };
      await ctx.audit({
        actor: identity,
        action: 'workorder.signature_stored',
        resourceType: 'work_order',
        resourceId: null,
        details,
        ipAddress: clientIp,
        userAgent,
      });
      return json(201, stored);
    },
  }),

  defineRoute({
    method: 'get',
    path: '/agents/:id/signatures',
    summary: 'The signatures of deployment objects and work orders, for an agent that checks them',
    description:
      'For each id given (comma-separated, at most 100 of each), the newest signature stored for its content; an object ' +
      'without one, or one the agent is not served (not targeted, for a work order), is left out. Brokkr agents and agents ' +
      'without a trust policy never ask.',
    tags: ['agents', ...tags],
    access: 'any',
    params: idParams,
    query: signaturesQuery,
    responses: { 200: { description: 'The signatures found', schema: agentSignaturesSchema } },
    errors: [requireAdminOrSelf],
    async handler({ params, query, identity, ctx }) {
      requireAdminOrSelf(identity, params.id);
      const asked = { objects: query.deployment_object_ids, work_orders: query.work_order_ids };
      const ids = identity.admin ? asked : await servedIds(ctx.db.pool, params.id.toLowerCase(), asked.objects, asked.work_orders);
      return json(200, await relayedSignatures(ctx.db.pool, ids.objects, ids.work_orders));
    },
  }),

  defineRoute({
    method: 'get',
    path: '/trust-metadata',
    summary: 'The trust metadata the hub relays: every root version, the newest revocation list and timestamp',
    tags,
    access: 'any',
    responses: { 200: { description: 'The trust metadata', schema: trustMetadataSchema } },
    async handler({ ctx }) {
      return json(200, await relayedTrustMetadata(ctx.db.pool));
    },
  }),

  defineRoute({
    method: 'put',
    path: '/trust-metadata',
    summary: 'Publish a signed trust document: a root version, a revocation list or a timestamp (admin)',
    description:
      'A DSSE envelope of payload type `application/vnd.brokkr.trust+json`. The hub files it by the kind and version it ' +
      'claims (publishing a version again replaces it, e.g. with more signatures); agents take it only if it verifies against their trust root.',
    tags,
    access: 'admin',
    body: z.object({ envelope: z.record(z.string(), z.unknown()) }).meta({ id: 'TrustMetadataDocument' }),
    responses: { 200: { description: 'The kind and version filed', schema: publishedTrustMetadataSchema } },
    errors: [invalidTrustMetadata],
    async handler({ body, identity, ctx, clientIp, userAgent }) {
      const read = readTrustDocument(body.envelope);
      if (!read.ok) throw invalidTrustMetadata.with(`Invalid trust metadata: ${read.reason}`);
      const filed = await publishTrustMetadata(ctx.db.pool, read.kind, read.version, body.envelope);
      forgetRelayedTrustMetadata(ctx.db.pool);
      publishTrustMetadataChanged(ctx.bus.nc, ctx.logger);
      await ctx.audit({
        actor: identity,
        action: 'trust.metadata_published',
        resourceType: 'system',
        resourceId: null,
        details: filed,
        ipAddress: clientIp,
        userAgent,
      });
      return json(200, filed);
    },
  }),
];
