{{/* Resource names: the release name, with the chart name unless the release already has it. */}}
{{- define "push-gateway.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "push-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "push-gateway.labels" -}}
{{ include "push-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* The image; its tag defaults to the chart's appVersion (the release the chart was cut with). */}}
{{- define "push-gateway.image" -}}
{{ printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end -}}

{{/* The pod security context of the Deployment and the migration Job alike. Secret volumes are
mode 0440 owned by root: only fsGroup makes them readable to the non-root uid 10001. */}}
{{- define "push-gateway.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
fsGroup: 10001
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "push-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- .Values.serviceAccount.name | default (include "push-gateway.fullname" .) -}}
{{- else -}}
{{- .Values.serviceAccount.name | default "default" -}}
{{- end -}}
{{- end -}}

{{- define "push-gateway.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* docs/protocol.md §12: <P> is the profile id upper-cased with non-alphanumerics as "_". */}}
{{- define "push-gateway.profileVariable" -}}
{{- regexReplaceAll "[^A-Z0-9]" (upper .) "_" -}}
{{- end -}}

{{/* Non-root, read-only root file system, no capabilities, no privilege escalation. */}}
{{- define "push-gateway.containerSecurityContext" -}}
runAsNonRoot: true
runAsUser: 10001
runAsGroup: 10001
readOnlyRootFilesystem: true
allowPrivilegeEscalation: false
capabilities:
  drop: ["ALL"]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The values the Deployment's environment is built from. */}}
{{- define "push-gateway.configChecksum" -}}
{{- $config := dict "origin" .Values.origin "publicOrigins" .Values.publicOrigins "trustedProxies" .Values.trustedProxies "logLevel" .Values.logLevel "limits" .Values.limits "profiles" .Values.profiles "apnsProxy" .Values.apnsProxy "androidAttestationStatus" .Values.androidAttestationStatus "marmot" .Values.marmot "extraEnv" .Values.extraEnv -}}
{{- toJson $config | sha256sum -}}
{{- end -}}

{{/* The runtime Secret's data as the cluster holds it at install/upgrade time (empty when
rendered offline), plus secretRevision for tools that render without cluster access. */}}
{{- define "push-gateway.secretsChecksum" -}}
{{- $secret := lookup "v1" "Secret" .Release.Namespace .Values.runtimeSecret | default dict -}}
{{- printf "%s/%v/%s" .Values.runtimeSecret .Values.secretRevision (toJson (get $secret "data")) | sha256sum -}}
{{- end -}}
