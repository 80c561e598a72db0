{{- define "memory-portal.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "memory-portal.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "memory-portal.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "memory-portal.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "memory-portal.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "memory-portal.selectorLabels" -}}
app.kubernetes.io/name: {{ include "memory-portal.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "memory-portal.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "memory-portal.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "memory-portal.secretName" -}}
{{- default (printf "%s-secrets" (include "memory-portal.fullname" .)) .Values.secrets.existingSecret }}
{{- end }}

{{- define "memory-portal.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The pod spec shared by the Deployment, the migration Job and the clearsessions CronJob. */}}
{{- define "memory-portal.podSpec" -}}
serviceAccountName: {{ include "memory-portal.serviceAccountName" . }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  runAsNonRoot: true
  runAsUser: 10001
  runAsGroup: 10001
  fsGroup: 10001
  seccompProfile:
    type: RuntimeDefault
volumes:
  - name: tmp
    emptyDir:
      medium: Memory
      sizeLimit: 64Mi
  - name: secrets
    secret:
      secretName: {{ include "memory-portal.secretName" . }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The container settings shared by every pod: image, environment, read-only root. */}}
{{- define "memory-portal.container" -}}
image: {{ include "memory-portal.image" . }}
imagePullPolicy: {{ .Values.image.pullPolicy }}
envFrom:
  - configMapRef:
      name: {{ include "memory-portal.fullname" . }}
env:
  {{- range $name, $key := .Values.secrets.files }}
  - name: {{ $name }}_FILE
    value: /mnt/secrets/{{ $key }}
  {{- end }}
securityContext:
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities:
    drop: ["ALL"]
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: secrets
    mountPath: /mnt/secrets
    readOnly: true
{{- end }}
