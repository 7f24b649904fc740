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

{{/*
The runners' headless service, which gateways resolve to find every runner: the short name
<service>.<namespace>.svc (the pod's resolver completes it), or the full name under clusterDomain.
*/}}
{{- define "sandfleet.runnersDns" -}}
{{ include "sandfleet.fullname" . }}-runner.{{ .Release.Namespace }}.svc{{ with .Values.clusterDomain }}.{{ . }}{{ end }}:{{ .Values.runner.port }}
{{- end -}}

{{- define "sandfleet.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{ .Values.serviceAccount.name | default (include "sandfleet.fullname" .) }}
{{- else -}}
{{ .Values.serviceAccount.name | default "default" }}
{{- end -}}
{{- end -}}

{{/* The Pod Security level the runner pods need with this backend (NOTES.txt, the README). */}}
{{- define "sandfleet.runnerPodSecurity" -}}
{{- if eq .Values.runner.backend "pyodide" -}}restricted
{{- else -}}privileged
{{- end -}}
{{- end -}}

{{/*
The runner pod's own security fields, by backend:
- process/auto: bubblewrap makes user, pid, network and mount namespaces and mounts a fresh
  /proc for every sandbox. The runtime's default seccomp and AppArmor profiles refuse those, and a
  fresh /proc needs an unmasked one: in a user namespace of the pod's own (hostUsers: false), or
  a privileged container.
- docker: the node's engine socket from a hostPath.
- pyodide: nothing; the restricted level's settings.
*/}}
{{- define "sandfleet.runnerPodSecurityContext" -}}
{{- if eq .Values.runner.backend "pyodide" -}}
securityContext:
  runAsNonRoot: true
  runAsUser: 65534
  runAsGroup: 65534
  seccompProfile:
    type: RuntimeDefault
{{- else if eq .Values.runner.backend "docker" -}}
securityContext:
  runAsUser: 0
  seccompProfile:
    type: RuntimeDefault
{{- else if not .Values.runner.privileged -}}
hostUsers: false
{{- end -}}
{{- end -}}

{{- define "sandfleet.runnerSecurityContext" -}}
{{- if eq .Values.runner.backend "pyodide" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- else if eq .Values.runner.backend "docker" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
{{- else if .Values.runner.privileged -}}
# The runner runs as root only to drop each sandbox to uid 65534 (setpriv) and to make its cgroups.
privileged: true
runAsUser: 0
readOnlyRootFilesystem: true
{{- else -}}
runAsUser: 0
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
procMount: Unmasked
capabilities:
  drop: [NET_RAW]
seccompProfile:
  type: Unconfined
appArmorProfile:
  type: Unconfined
{{- end -}}
{{- end -}}

{{/* Label matchers of this release's targets in PromQL (the Prometheus Operator's namespace and service labels). */}}
{{- define "sandfleet.promSelector" -}}
namespace="{{ .Release.Namespace }}",service=~"{{ include "sandfleet.fullname" . }}(-runner)?"
{{- end -}}

{{/* The shared secret's env entry (gateway and runner), when runnerSecret.existingSecret is set. */}}
{{- define "sandfleet.runnerSecretEnv" -}}
{{- with .Values.runnerSecret.existingSecret }}
- name: SANDFLEET_RUNNER_SECRET
  valueFrom:
    secretKeyRef: { name: {{ . | quote }}, key: {{ $.Values.runnerSecret.key | quote }} }
{{- end }}
{{- end -}}

{{/*
The Secret holding the gateways' keys file: gateway.apiKeysSecret when given; else, unless
gateway.allowUnauthenticated, the one the chart generates (gateway-api-keys-secret.yaml); else
none (an open gateway).
*/}}
{{- define "sandfleet.apiKeysSecret" -}}
{{- if .Values.gateway.apiKeysSecret -}}
{{- .Values.gateway.apiKeysSecret -}}
{{- else if not .Values.gateway.allowUnauthenticated -}}
{{- include "sandfleet.fullname" . }}-api-keys
{{- end -}}
{{- end }}
