/** Manifests the end-to-end tests deploy. Documents are deliberately out of order: the agent sorts them. */

export const crd = (group = 'demo.brokkr.io') => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.${group}
spec:
  group: ${group}
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                size: {type: integer}
`;

export const namespace = (name: string) => `apiVersion: v1
kind: Namespace
metadata:
  name: ${name}
`;

export const configMap = (ns: string, name: string, data: Record<string, string>) => `apiVersion: v1
kind: ConfigMap
metadata:
  name: ${name}
  namespace: ${ns}
  labels: {app: demo}
data:
${Object.entries(data)
  .map(([k, v]) => `  ${k}: "${v}"`)
  .join('\n')}
`;

export const widget = (ns: string, name: string, size: number, group = 'demo.brokkr.io') => `apiVersion: ${group}/v1
kind: Widget
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  size: ${size}
`;

export const deployment = (ns: string, name: string, image = 'nginx:1.27') => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  namespace: ${ns}
spec:
  replicas: 1
  selector:
    matchLabels: {app: ${name}}
  template:
    metadata:
      labels: {app: ${name}}
    spec:
      containers:
        - name: main
          image: ${image}
`;

export const stream = (...docs: string[]) => docs.map((d) => d.trimEnd()).join('\n---\n') + '\n';
