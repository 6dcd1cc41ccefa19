{{/* Name of every object: fullnameOverride or the release name. */}}
{{- define "brokkr-agent.name" -}}
{{- default .Release.Name .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- end }}

{{- define "brokkr-agent.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: brokkr
{{ include "brokkr-agent.selectorLabels" . }}
{{- end }}

{{- define "brokkr-agent.selectorLabels" -}}
app.kubernetes.io/name: brokkr-agent
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "brokkr-agent.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "brokkr-agent.name" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end }}

{{- define "brokkr-agent.secretName" -}}
{{- default (printf "%s-pak" (include "brokkr-agent.name" .)) .Values.pak.existingSecret -}}
{{- end }}

{{/* The (Cluster)Role's rules: rbac.rules, after `*` on `*` when rbac.allResources opts in to an admin's reach. */}}
{{- define "brokkr-agent.rbacRules" -}}
{{- $rules := .Values.rbac.rules | default list -}}
{{- if .Values.rbac.allResources -}}
{{- $rules = prepend $rules (dict "apiGroups" (list "*") "resources" (list "*") "verbs" (list "*")) -}}
{{- end -}}
{{- toYaml $rules -}}
{{- end }}

{{/* The Secret holding the trust policy (signed intent), or nothing when the agent has none. */}}
{{- define "brokkr-agent.trustPolicySecret" -}}
{{- if .Values.trustPolicy.existingSecret -}}
{{ .Values.trustPolicy.existingSecret }}
{{- else if .Values.trustPolicy.policy -}}
{{ include "brokkr-agent.name" . }}-trust-policy
{{- end -}}
{{- end }}
