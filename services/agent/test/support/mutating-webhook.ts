import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createTestCa } from '@brokkr/infra';
import type { Kubectl } from './kubectl.ts';

/** Objects carrying this label are mutated by the webhook. */
export const MUTATE_LABEL = 'drift-test.brokkr.io/mutate';
/** What the webhook writes on every create and update (dry runs included). */
export const MUTATED_ANNOTATION = 'drift-test.brokkr.io/mutated';
export const INJECTED_ANNOTATION = 'drift-test.brokkr.io/injected';

interface Review {
  request: {
    uid: string;
    object: {
      metadata?: { annotations?: Record<string, string> };
      spec?: { template?: { metadata?: { annotations?: Record<string, string> } } };
    };
  };
}

/** A JSON patch that adds the webhook's annotations, as a sidecar injector adds its own. */
function patchFor(review: Review): unknown[] {
  const object = review.request.object;
  const ops: unknown[] = [];
  if (object.metadata?.annotations)
    ops.push({ op: 'add', path: `/metadata/annotations/${MUTATED_ANNOTATION.replace('/', '~1')}`, value: 'yes' });
  else ops.push({ op: 'add', path: '/metadata/annotations', value: { [MUTATED_ANNOTATION]: 'yes' } });
  if (object.spec?.template?.metadata?.annotations)
    ops.push({ op: 'add', path: `/spec/template/metadata/annotations/${INJECTED_ANNOTATION.replace('/', '~1')}`, value: 'sidecar' });
  else if (object.spec?.template?.metadata)
    ops.push({ op: 'add', path: '/spec/template/metadata/annotations', value: { [INJECTED_ANNOTATION]: 'sidecar' } });
  return ops;
}

export interface MutatingWebhook {
  /** Requests the apiserver sent (dry runs included). */
  calls: number;
  stop(): Promise<void>;
}

/**
 * A real mutating admission webhook for Deployments labelled MUTATE_LABEL, served over TLS on the
 * loopback address (the apiserver runs on this machine) and registered with the apiserver: it
 * annotates the Deployment and its pod template on every create and update, dry runs included.
 */
export async function startMutatingWebhook(kubectl: Kubectl): Promise<MutatingWebhook> {
  const dir = await mkdtemp(path.join(tmpdir(), 'brokkr-webhook-'));
  const ca = await createTestCa(dir);
  const state = { calls: 0 };
  const server: Server = createServer({ cert: await readFile(ca.server.certFile), key: await readFile(ca.server.keyFile) }, (req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      state.calls++;
      const review = JSON.parse(body) as Review;
      const patch = Buffer.from(JSON.stringify(patchFor(review))).toString('base64');
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          apiVersion: 'admission.k8s.io/v1',
          kind: 'AdmissionReview',
          response: { uid: review.request.uid, allowed: true, patchType: 'JSONPatch', patch },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await kubectl.create('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'MutatingWebhookConfiguration',
    metadata: { name: 'drift-test-mutator' },
    webhooks: [
      {
        name: 'mutate.drift-test.brokkr.io',
        clientConfig: { url: `https://127.0.0.1:${port}/mutate`, caBundle: (await readFile(ca.caFile)).toString('base64') },
        rules: [{ apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] }],
        objectSelector: { matchLabels: { [MUTATE_LABEL]: 'true' } },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        failurePolicy: 'Fail',
        timeoutSeconds: 10,
      },
    ],
  });
  return {
    get calls() {
      return state.calls;
    },
    async stop() {
      await kubectl.remove('/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/drift-test-mutator');
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
