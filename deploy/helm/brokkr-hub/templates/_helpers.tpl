{{/* Prefix of every object name: fullnameOverride or the release name. */}}
{{- define "brokkr-hub.prefix" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- end }}

{{/* Labels of every object; pass (dict "root" $ "component" "api") for a component's objects. */}}
{{- define "brokkr-hub.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .root.Chart.Name .root.Chart.Version }}
app.kubernetes.io/managed-by: {{ .root.Release.Service }}
app.kubernetes.io/part-of: brokkr
{{ include "brokkr-hub.selectorLabels" . }}
{{- end }}

{{- define "brokkr-hub.selectorLabels" -}}
app.kubernetes.io/name: brokkr-hub
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- with .component }}
app.kubernetes.io/component: {{ . }}
{{- end }}
{{- end }}

{{- define "brokkr-hub.secretName" -}}
{{- default (include "brokkr-hub.prefix" .) .Values.secrets.existingSecret -}}
{{- end }}

{{- define "brokkr-hub.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "brokkr-hub.prefix" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end }}

{{/* An env entry read from the hub Secret: (dict "root" $ "name" "BROKKR__X" "key" "<key in the Secret>"). */}}
{{- define "brokkr-hub.secretEnv" -}}
- name: {{ .name }}
  valueFrom:
    secretKeyRef: { name: {{ include "brokkr-hub.secretName" .root }}, key: {{ .key }} }
{{- end }}

{{/*
The Deployment of one hub service. Arguments (a dict):
  root       the chart's root context ($)
  component  the service's name (api, webhook-dispatcher, audit-writer, maintenance, renderer)
  values     that service's values (.Values.api, ...)
  port       its HTTP port (health, readiness and /metrics are served there)
  portVar    the variable that sets the port (BROKKR__BROKER__PORT or BROKKR__HEALTH__PORT)
  metricsPort  optional: a separate port Prometheus scrapes instead (the api's agent-labelled series)
  env        more env entries (YAML list text), e.g. settings only this service reads
  withoutNats  optional: the service talks to PostgreSQL only (the renderer): the shared settings but
             NATS's as env entries instead of the ConfigMap, and no NATS credentials or files
*/}}
{{- define "brokkr-hub.deployment" -}}
{{- $root := .root -}}
{{- $v := $root.Values -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "brokkr-hub.prefix" $root }}-{{ .component }}
  namespace: {{ $root.Release.Namespace }}
  labels:
    {{- include "brokkr-hub.labels" (dict "root" $root "component" .component) | nindent 4 }}
spec:
  replicas: {{ .values.replicas }}
  selector:
    matchLabels:
      {{- include "brokkr-hub.selectorLabels" (dict "root" $root "component" .component) | nindent 6 }}
  template:
    metadata:
      labels:
        {{- include "brokkr-hub.labels" (dict "root" $root "component" .component) | nindent 8 }}
        {{- with $v.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # A changed ConfigMap or chart-made Secret rolls the pods (environment is read once at start).
        checksum/config: {{ include (print $root.Template.BasePath "/01-config.yaml") $root | sha256sum }}
        {{- if $v.metrics.scrapeAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ .metricsPort | default .port | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $v.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "brokkr-hub.serviceAccountName" $root }}
      # The hub never calls the Kubernetes API.
      automountServiceAccountToken: false
      {{- with $v.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $v.podSecurityContext | nindent 8 }}
      containers:
        - name: {{ .component }}
          image: {{ printf "%s:%s" $v.image.repository (default $root.Chart.AppVersion $v.image.tag) | quote }}
          imagePullPolicy: {{ $v.image.pullPolicy }}
          command: ["node",{{ range .values.nodeArgs }} {{ . | quote }},{{ end }} "services/{{ .component }}/dist/main.js"]
          {{- if not .withoutNats }}
          envFrom:
            - configMapRef:
                name: {{ include "brokkr-hub.prefix" $root }}
          {{- end }}
          env:
            {{- if .withoutNats }}
            {{- range $name, $value := include "brokkr-hub.sharedSettings" $root | fromYaml }}
            - name: {{ $name }}
              value: {{ $value | toString | quote }}
            {{- end }}
            {{- end }}
            {{- include "brokkr-hub.secretEnv" (dict "root" $root "name" "BROKKR__DATABASE__URL" "key" $v.secrets.databaseUrlKey) | nindent 12 }}
            {{- if not .withoutNats }}
            {{- with include "brokkr-hub.natsEnv" (dict "root" $root "component" .component) | trim }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- end }}
            - name: {{ .portVar }}
              value: {{ .port | quote }}
            {{- with .env }}
            {{- . | nindent 12 }}
            {{- end }}
            {{- range $name, $value := .values.env }}
            - name: {{ $name }}
              value: {{ $value | toString | quote }}
            {{- end }}
          ports:
            - name: http
              containerPort: {{ .port }}
            {{- with .metricsPort }}
            - name: metrics
              containerPort: {{ . }}
            {{- end }}
          # Startup (the api applies migrations first) gets up to 2 minutes before liveness applies.
          startupProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 2
            failureThreshold: 60
          livenessProbe:
            httpGet: { path: /healthz, port: http }
            periodSeconds: 10
            failureThreshold: 3
          readinessProbe:
            httpGet: { path: /readyz, port: http }
            periodSeconds: 5
            failureThreshold: 2
          resources:
            {{- toYaml .values.resources | nindent 12 }}
          securityContext:
            {{- toYaml $v.containerSecurityContext | nindent 12 }}
          volumeMounts:
            - { name: tmp, mountPath: /tmp }
            {{- if and (not .withoutNats) (has $v.nats.auth.method (list "nkey" "creds")) }}
            - { name: nats-auth, mountPath: /etc/brokkr/nats-auth, readOnly: true }
            {{- end }}
            {{- if and (not .withoutNats) $v.nats.tls.enabled }}
            - { name: nats-tls, mountPath: /etc/brokkr/nats-tls, readOnly: true }
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: {}
        {{- if and (not .withoutNats) (has $v.nats.auth.method (list "nkey" "creds")) }}
        - name: nats-auth
          secret: { secretName: {{ required "nats.auth.existingSecret is required for nats.auth.method nkey or creds" $v.nats.auth.existingSecret }} }
        {{- end }}
        {{- if and (not .withoutNats) $v.nats.tls.enabled }}
        - name: nats-tls
          secret: { secretName: {{ required "nats.tls.existingSecret is required when nats.tls.enabled" $v.nats.tls.existingSecret }} }
        {{- end }}
      {{- with $v.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $v.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
{{- end }}

{{/* The settings every hub service reads but NATS's: the ConfigMap's data (01-config.yaml), the renderer's env. */}}
{{- define "brokkr-hub.sharedSettings" -}}
BROKKR__LOG__LEVEL: {{ .Values.log.level | quote }}
BROKKR__LOG__FORMAT: {{ .Values.log.format | quote }}
BROKKR__DATABASE__POOL_SIZE: {{ .Values.database.poolSize | toString | quote }}
{{- with .Values.database.schema }}
BROKKR__DATABASE__SCHEMA: {{ . | quote }}
{{- end }}
BROKKR__TELEMETRY__ENABLED: {{ .Values.telemetry.enabled | toString | quote }}
BROKKR__TELEMETRY__OTLP_ENDPOINT: {{ .Values.telemetry.otlpEndpoint | quote }}
BROKKR__TELEMETRY__SAMPLING_RATE: {{ .Values.telemetry.samplingRate | toString | quote }}
{{- end }}

{{/* Settings the api and the dispatcher share: the webhook key and webhook policy. */}}
{{- define "brokkr-hub.webhookEnv" -}}
{{ include "brokkr-hub.secretEnv" (dict "root" . "name" "BROKKR__BROKER__WEBHOOK_ENCRYPTION_KEY" "key" .Values.secrets.webhookEncryptionKeyKey) }}
- name: BROKKR__BROKER__WEBHOOK_ALLOW_PRIVATE_NETWORKS
  value: {{ .Values.webhooks.allowPrivateNetworks | toString | quote }}
- name: BROKKR__BROKER__WEBHOOK_MAX_BACKOFF_SECONDS
  value: {{ .Values.webhooks.maxBackoffSeconds | toString | quote }}
{{- end }}

{{/* The monitoring namespace as a NetworkPolicy peer (networkPolicy.monitoringNamespaceSelector). */}}
{{- define "brokkr-hub.monitoringPeer" -}}
- namespaceSelector:
    matchLabels:
      {{- toYaml .Values.networkPolicy.monitoringNamespaceSelector | nindent 6 }}
{{- end }}

{{/*
How a hub service reaches NATS (shared/config/src/nats.ts). auth.method users (the default, and the
only one with nats.deploy): as its own user, named after the service, with its password from the
users Secret. The other methods: the credentials of nats.auth.existingSecret (as variables, or
mounted files for an NKey seed or a .creds file). TLS files from nats.tls.existingSecret.
Arguments: (dict "root" $ "component" "api").
*/}}
{{- define "brokkr-hub.natsEnv" -}}
{{- $v := .root.Values -}}
{{- $auth := $v.nats.auth -}}
{{- include "brokkr-hub.natsChecks" .root -}}
{{- if eq $auth.method "users" }}
- name: BROKKR__NATS__USER
  value: {{ .component | quote }}
- name: BROKKR__NATS__PASSWORD
  valueFrom: { secretKeyRef: { name: {{ include "brokkr-hub.natsUsersSecret" .root }}, key: {{ .component }} } }
{{- else if eq $auth.method "userPassword" }}
- name: BROKKR__NATS__USER
  valueFrom: { secretKeyRef: { name: {{ $auth.existingSecret }}, key: {{ $auth.userKey }} } }
- name: BROKKR__NATS__PASSWORD
  valueFrom: { secretKeyRef: { name: {{ $auth.existingSecret }}, key: {{ $auth.passwordKey }} } }
{{- else if eq $auth.method "token" }}
- name: BROKKR__NATS__TOKEN
  valueFrom: { secretKeyRef: { name: {{ $auth.existingSecret }}, key: {{ $auth.tokenKey }} } }
{{- else if eq $auth.method "nkey" }}
- name: BROKKR__NATS__NKEY_SEED_FILE
  value: /etc/brokkr/nats-auth/{{ $auth.nkeySeedKey }}
{{- else if eq $auth.method "creds" }}
- name: BROKKR__NATS__CREDS_FILE
  value: /etc/brokkr/nats-auth/{{ $auth.credsKey }}
{{- end }}
{{- if $v.nats.tls.enabled }}
- name: BROKKR__NATS__TLS_CA_FILE
  value: /etc/brokkr/nats-tls/ca.crt
{{- if $v.nats.tls.clientCertificate }}
- name: BROKKR__NATS__TLS_CERT_FILE
  value: /etc/brokkr/nats-tls/tls.crt
- name: BROKKR__NATS__TLS_KEY_FILE
  value: /etc/brokkr/nats-tls/tls.key
{{- end }}
{{- end }}
{{- end }}

{{/* Refuses a NATS setup that cannot work or would run without authentication by accident. */}}
{{- define "brokkr-hub.natsChecks" -}}
{{- $n := .Values.nats -}}
{{- if $n.deploy }}
{{- if ne $n.auth.method "users" }}{{ fail (printf "nats.deploy runs the chart's own NATS with a user per hub service: nats.auth.method must be users (it is %s); set nats.deploy=false to use your NATS" $n.auth.method) }}{{ end }}
{{- if $n.tls.enabled }}{{ fail "nats.tls is for your own NATS: the chart's NATS (nats.deploy) serves plain NATS inside the namespace, behind its NetworkPolicy" }}{{ end }}
{{- else }}
{{- if not $n.url }}{{ fail "nats.url is required with nats.deploy=false: your NATS server (JetStream enabled)" }}{{ end }}
{{- if and (eq $n.auth.method "users") (not $n.users.existingSecret) }}{{ fail "nats.users.existingSecret is required with your own NATS (nats.deploy=false) and nats.auth.method users: a Secret with each hub service's password under its name (api, webhook-dispatcher, audit-writer, maintenance), as your NATS has them (its authorization: files/nats-authorization.conf). Or choose another nats.auth.method" }}{{ end }}
{{- if has $n.auth.method (list "userPassword" "token" "nkey" "creds") }}{{ $_ := required (printf "nats.auth.existingSecret is required for nats.auth.method %s" $n.auth.method) $n.auth.existingSecret }}{{ end }}
{{- end }}
{{- end }}

{{/* BROKKR__NATS__URL: nats.url, else the chart's own NATS. */}}
{{- define "brokkr-hub.natsUrl" -}}
{{- .Values.nats.url | default (printf "nats://%s-nats:4222" (include "brokkr-hub.prefix" .)) -}}
{{- end }}

{{/* The Secret with the NATS users' passwords: nats.users.existingSecret, else the chart's. */}}
{{- define "brokkr-hub.natsUsersSecret" -}}
{{- .Values.nats.users.existingSecret | default (printf "%s-nats-users" (include "brokkr-hub.prefix" .)) -}}
{{- end }}

{{/* The users of the chart's NATS, as files/nats-authorization.conf names them. */}}
{{- define "brokkr-hub.natsUsers" -}}
api webhook-dispatcher audit-writer maintenance integration
{{- end }}

{{/* Labels of the chart's NATS: app.kubernetes.io/name nats, so networkPolicy.dependencies.nats's default selects it. */}}
{{- define "brokkr-hub.natsSelectorLabels" -}}
app.kubernetes.io/name: nats
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "brokkr-hub.natsLabels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: brokkr
app.kubernetes.io/component: nats
app.kubernetes.io/version: {{ .Values.nats.server.image.tag | quote }}
{{ include "brokkr-hub.natsSelectorLabels" . }}
{{- end }}

{{/* nats.conf of the chart's NATS: JetStream on the volume, then files/nats-authorization.conf. */}}
{{- define "brokkr-hub.natsConfig" -}}
server_name: {{ include "brokkr-hub.prefix" . }}-nats
port: 4222
# Monitoring (the probes' /healthz): reachable only from the monitoring namespace.
http_port: 8222
jetstream {
  store_dir: /data
  max_memory_store: 64MB
}
{{ .Files.Get "files/nats-authorization.conf" }}
{{- end }}

{{/* The renderer's own settings (rendererConfigSchema in shared/config/src/services/renderer.ts). */}}
{{- define "brokkr-hub.rendererEnv" -}}
- name: BROKKR__RENDERER__CONCURRENCY
  value: {{ .Values.renderer.concurrency | toString | quote }}
- name: BROKKR__RENDERER__TIMEOUT_SECONDS
  value: {{ .Values.renderer.timeoutSeconds | toString | quote }}
- name: BROKKR__RENDERER__OUTPUT_MAX_MIB
  value: {{ .Values.renderer.outputMaxMiB | toString | quote }}
- name: BROKKR__RENDERER__MEMORY_MIB
  value: {{ .Values.renderer.memoryMiB | toString | quote }}
{{- end }}
