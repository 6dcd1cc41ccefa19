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
    '---',
    'apiVersion: apps/v1',
    'kind: Deployment',
    'metadata:',
    '  name: hello-brokkr',
    '  namespace: default',
    'spec:',
    '  replicas: 2',
    '  selector: {matchLabels: {app: hello-brokkr}}',
    '  template:',
    '    metadata: {labels: {app: hello-brokkr}}',
    '    spec: {containers: [{name: web, image: "nginx:1.27"}]}',
    'YAML',
    '',
    '# 3. Seconds later: an APPLIED/SUCCESS event, a health report ("healthy": both pods Ready), the Deployment Available in the cluster',
    `curl -s "$BROKKR_URL/agents/${i.agent.id}/events" ${auth('ADMIN_PAK')}; echo`,
    `curl -s "$BROKKR_URL/stacks/$STACK/health" ${auth('ADMIN_PAK')}; echo`,
    `curl -s --cacert ${i.kube.caFile} -H "Authorization: Bearer ${i.kube.token}" \\`,
    `  ${i.kube.server}/apis/apps/v1/namespaces/default/deployments/hello-brokkr/status \\`,
    `  | node -pe 'const s = JSON.parse(fs.readFileSync(0, "utf8")).status ?? {}; const a = (s.conditions ?? []).find((c) => c.type === "Available"); \`Available=\${a?.status ?? "not yet"}, \${s.readyReplicas ?? 0}/2 pods ready\`'`,
    `# or, with kubectl: kubectl --kubeconfig ${i.kube.kubeconfigPath} get deployment,pods -l app=hello-brokkr`,
  ].join('\n');
}
