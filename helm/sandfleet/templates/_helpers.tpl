{{/* Names and labels shared by every object of the release. */}}
{{- define "sandfleet.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "sandfleet.labels" -}}
app.kubernetes.io/name: sandfleet
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* Selector of one component: include with (list $ "gateway") or (list $ "runner"). */}}
{{- define "sandfleet.selector" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: sandfleet
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "sandfleet.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{/* The runners' headless service, which gateways resolve to find every runner. */}}
{{- define "sandfleet.runnersDns" -}}
{{ include "sandfleet.fullname" . }}-runner.{{ .Release.Namespace }}.svc.cluster.local:{{ .Values.runner.port }}
{{- end -}}
