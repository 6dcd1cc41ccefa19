/**
 * The three-step first deployment `npm start` prints once its local cluster runs: copy-paste
 * shell (bash or zsh, with curl; node is there since npm is). The README shows the same steps and
 * test/first-deployment.test.ts runs exactly this text.
 */
export interface FirstDeploymentInput {
  apiUrl: string;
  adminPak: string;
  generator: { id: string; pak: string };
  agent: { id: string };
  kube: { server: string; token: string; caFile: string; kubeconfigPath: string };
}

export const BEGIN_MARKER = '----- first deployment: paste into another terminal -----';
export const END_MARKER = '----- end of first deployment -----';

export function firstDeploymentScript(i: FirstDeploymentInput): string {
  const auth = (v: string) => `-H "Authorization: Bearer $${v}"`;
  return [
    `export BROKKR_URL=${i.apiUrl}`,
    `export GENERATOR_PAK=${i.generator.pak}   # generator "local-dev", owns the stacks`,
    `export ADMIN_PAK=${i.adminPak}`,
    '',
    '# 1. Create a stack (as the generator) and target it at the local agent',
    `STACK=$(curl -sf -X POST "$BROKKR_URL/stacks" ${auth('GENERATOR_PAK')} -H 'Content-Type: application/json' \\`,
    `  -d '{"name":"hello","generator_id":"${i.generator.id}"}' | node -pe 'JSON.parse(fs.readFileSync(0, "utf8")).id')`,
    `curl -sf -X POST "$BROKKR_URL/agents/${i.agent.id}/targets" ${auth('GENERATOR_PAK')} -H 'Content-Type: application/json' \\`,
    `  -d "{\\"agent_id\\":\\"${i.agent.id}\\",\\"stack_id\\":\\"$STACK\\"}"; echo`,
    '',
    '# 2. Post a deployment object: any multi-document Kubernetes YAML',
    `curl -sf -X POST "$BROKKR_URL/stacks/$STACK/deployment-objects" ${auth('GENERATOR_PAK')} -H 'Content-Type: application/yaml' --data-binary @- <<'YAML'; echo`,
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    '  name: hello-brokkr',
    '  namespace: default',
    'data:',
    '  greeting: hello from brokkr',
    'YAML',
    '',
    '# 3. Seconds later: an APPLIED/SUCCESS event, a health report ("unknown": no pods in a ConfigMap), the object in the cluster',
    `curl -s "$BROKKR_URL/agents/${i.agent.id}/events" ${auth('ADMIN_PAK')}; echo`,
    `curl -s "$BROKKR_URL/stacks/$STACK/health" ${auth('ADMIN_PAK')}; echo`,
    `curl -s --cacert ${i.kube.caFile} -H "Authorization: Bearer ${i.kube.token}" \\`,
    `  ${i.kube.server}/api/v1/namespaces/default/configmaps/hello-brokkr; echo`,
    `# or, with kubectl: kubectl --kubeconfig ${i.kube.kubeconfigPath} get configmap hello-brokkr -o yaml`,
  ].join('\n');
}
