/**
 * Realistic deployment-object content, as `kubectl`, Helm and kustomize write it: the corpus of
 * the fast path's differential test (yaml-fast-path.unit.test.ts) and of the validation benchmark
 * (yaml-validate.bench.ts). `plainBlock` manifests are inside the fast path's subset; `declined`
 * ones are realistic too but use what it leaves to the parser (block scalars, flow collections,
 * anchors), so they show the fallback.
 */

/** The body load-tests/api.ts posts for every deployment object. */
export const BENCH_CONFIGMAP = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bench-post\n  namespace: bench\ndata:\n  n: "123"\n';

/** A Deployment of about 1 KiB, as `kubectl get -o yaml` trims it (sequences at their key's indent). */
export const DEPLOYMENT = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: checkout
  namespace: shop
  labels:
    app.kubernetes.io/name: checkout
    app.kubernetes.io/part-of: shop
    app.kubernetes.io/version: "2.14.1"
  annotations:
    deployment.kubernetes.io/revision: "7"
spec:
  replicas: 3
  revisionHistoryLimit: 5
  selector:
    matchLabels:
      app.kubernetes.io/name: checkout
  strategy:
    type: RollingUpdate
    rollingUpdate:
      maxSurge: 25%
      maxUnavailable: 0
  template:
    metadata:
      labels:
        app.kubernetes.io/name: checkout
    spec:
      serviceAccountName: checkout
      containers:
      - name: checkout
        image: registry.example.com/shop/checkout:2.14.1
        imagePullPolicy: IfNotPresent
        args:
        - --port=8080
        - --log-level=info
        ports:
        - name: http
          containerPort: 8080
          protocol: TCP
        env:
        - name: DATABASE_URL
          valueFrom:
            secretKeyRef:
              name: checkout-db
              key: url
        - name: FEATURE_FLAGS
          value: 'fast-checkout,new-cart'
        readinessProbe:
          httpGet:
            path: /healthz
            port: http
          periodSeconds: 10
        resources:
          requests:
            cpu: 100m
            memory: 128Mi
          limits:
            memory: 256Mi
`;

const SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: checkout
  namespace: shop
  labels:
    app.kubernetes.io/name: checkout
spec:
  type: ClusterIP
  selector:
    app.kubernetes.io/name: checkout
  ports:
    - name: http
      port: 80
      targetPort: http
      protocol: TCP
`;

/** What `helm template` prints: a `# Source:` comment per document, indented sequences, `{}`. */
const HELM_OUTPUT = `---
# Source: shop/templates/serviceaccount.yaml
apiVersion: v1
kind: ServiceAccount
metadata:
  name: release-shop
  labels:
    helm.sh/chart: shop-0.3.1
    app.kubernetes.io/managed-by: Helm
---
# Source: shop/templates/configmap.yaml
apiVersion: v1
kind: ConfigMap
metadata:
  name: release-shop-config
data:
  LOG_LEVEL: "info"
  CACHE_TTL: "300"
  GREETING: "hello, world"
---
# Source: shop/templates/deployment.yaml
apiVersion: apps/v1
kind: Deployment
metadata:
  name: release-shop
spec:
  replicas: 1
  selector:
    matchLabels:
      app.kubernetes.io/instance: release
  template:
    metadata:
      annotations:
        checksum/config: 5f1c0e9a0c1b7d5e3c1f6e2a9b8d7c6e5f4a3b2c1d0e9f8a7b6c5d4e3f2a1b0c
      labels:
        app.kubernetes.io/instance: release
    spec:
      securityContext: {}
      containers:
        - name: shop
          securityContext: {}
          image: "ghcr.io/example/shop:1.0.0"
          ports:
            - name: http
              containerPort: 80
          resources: {}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
      volumes:
        - name: tmp
          emptyDir: {}
`;

const RBAC = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: pod-reader
  namespace: shop
rules:
- apiGroups:
  - ""
  resources:
  - pods
  - pods/log
  verbs:
  - get
  - list
  - watch
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: read-pods
  namespace: shop
subjects:
- kind: ServiceAccount
  name: checkout
  namespace: shop
roleRef:
  kind: Role
  name: pod-reader
  apiGroup: rbac.authorization.k8s.io
`;

const CRONJOB = `apiVersion: batch/v1
kind: CronJob
metadata:
  name: nightly-report # owned by the data team
spec:
  schedule: "0 3 * * *"
  concurrencyPolicy: Forbid
  jobTemplate:
    spec:
      backoffLimit: 2
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - name: report
            image: registry.example.com/data/report:latest
            command:
            - /bin/report
            - --since=24h
            - --out=s3://reports/nightly/
            env:
            - name: TZ
              value: Europe/Oslo
            - name: EMPTY
              value: ""
`;

const NETWORK_POLICY = `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
  namespace: shop
spec:
  podSelector: {}
  policyTypes:
  - Ingress
  - Egress
`;

const SECRET_AND_NAMESPACE = `apiVersion: v1
kind: Namespace
metadata:
  name: shop
  labels:
    pod-security.kubernetes.io/enforce: restricted
...
---
apiVersion: v1
kind: Secret
metadata:
  name: checkout-db
  namespace: shop
type: Opaque
stringData:
  url: 'postgres://checkout:s3cr3t@db.shop.svc:5432/checkout?sslmode=require'
  "quoted key": "tab\\tand \\"quotes\\" and \\u00e9"
`;

const INGRESS = `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  annotations:
    nginx.ingress.kubernetes.io/rewrite-target: /
    cert-manager.io/cluster-issuer: letsencrypt
spec:
  ingressClassName: nginx
  tls:
  - hosts:
    - shop.example.com
    secretName: shop-tls
  rules:
  - host: shop.example.com
    http:
      paths:
      - path: /
        pathType: Prefix
        backend:
          service:
            name: checkout
            port:
              number: 80
`;

const HPA = `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: checkout
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: checkout
  minReplicas: 2
  maxReplicas: 10
  metrics:
  - type: Resource
    resource:
      name: cpu
      target:
        type: Utilization
        averageUtilization: 70
`;

/** Manifests inside the fast path's subset. */
export const PLAIN_BLOCK_MANIFESTS: Record<string, string> = {
  'bench ConfigMap': BENCH_CONFIGMAP,
  Deployment: DEPLOYMENT,
  Service: SERVICE,
  'helm template output': HELM_OUTPUT,
  'Role + RoleBinding': RBAC,
  CronJob: CRONJOB,
  NetworkPolicy: NETWORK_POLICY,
  'Namespace + Secret (with ...)': SECRET_AND_NAMESPACE,
  Ingress: INGRESS,
  HorizontalPodAutoscaler: HPA,
};

/** Realistic manifests the fast path leaves to the parser. */
export const DECLINED_MANIFESTS: Record<string, string> = {
  'ConfigMap with a block scalar': `apiVersion: v1
kind: ConfigMap
metadata:
  name: nginx-conf
data:
  nginx.conf: |
    server {
      listen 80;
    }
`,
  'Pod with flow sequences': `apiVersion: v1
kind: Pod
metadata: {name: busybox, labels: {app: busybox}}
spec:
  containers:
  - name: busybox
    image: busybox:1.36
    command: ["sh", "-c", "sleep 3600"]
`,
  'kustomize output with anchors': `apiVersion: v1
kind: Deployment
metadata:
  name: base
  labels: &labels
    app: demo
spec:
  template:
    metadata:
      labels: *labels
`,
};

/** A multi-document stream of about `bytes` characters: the realistic manifests, renamed per copy. */
export function manifestStream(bytes: number): string {
  const docs: string[] = [];
  let size = 0;
  for (let copy = 0; size < bytes; copy++) {
    for (const manifest of Object.values(PLAIN_BLOCK_MANIFESTS)) {
      const doc = manifest.replace(/^---\n/, '').replaceAll('name: ', `name: c${copy}-`);
      docs.push(doc);
      size += doc.length + 4;
      if (size >= bytes) break;
    }
  }
  return docs.join('---\n');
}
