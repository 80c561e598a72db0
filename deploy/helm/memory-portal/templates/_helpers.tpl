{{- define "memory-portal.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* The release's name alone when it already says what it is (memory-portal, not
memory-portal-memory-portal). */}}
{{- define "memory-portal.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := include "memory-portal.name" . }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
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

{{/* Labels every pod that runs the portal's code needs besides its own: workload
identity's, which gets the pod its federated token (settings refuse to load without a
credential), and the operator's. */}}
{{- define "memory-portal.podLabels" -}}
{{- if .Values.workloadIdentity.enabled }}
azure.workload.identity/use: "true"
{{- end }}
{{- with .Values.podLabels }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{/* Pod annotations: a new checksum when the configuration or the chart's Secret changes,
so the pods restart with it (environment variables are read at start). */}}
{{- define "memory-portal.podAnnotations" -}}
checksum/config: {{ include (print $.Template.BasePath "/configmap.yaml") . | sha256sum }}
checksum/secret: {{ include (print $.Template.BasePath "/secret.yaml") . | sha256sum }}
{{- with .Values.podAnnotations }}
{{ toYaml . }}
{{- end }}
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
{{- $repository := required "image.repository is required: the registry path of the image built from deploy/Dockerfile" .Values.image.repository }}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Everything that cannot run fails the render here, each with what to set. */}}
{{- define "memory-portal.validate" -}}
{{- range $name := list "DJANGO_ALLOWED_HOSTS" "ENTRA_AUTHORITY" "ENTRA_CLIENT_ID" "COREAPI_BASE_URL" "COREAPI_INSTANCE_ID" }}
{{- if not (index $.Values.config $name) }}
{{- fail (printf "config.%s is required (README.md, Configuration)" $name) }}
{{- end }}
{{- end }}
{{- $sources := 0 }}
{{- if .Values.secrets.csi.enabled }}{{ $sources = add1 $sources }}{{ end }}
{{- if .Values.secrets.existingSecret }}{{ $sources = add1 $sources }}{{ end }}
{{- if .Values.secrets.values }}{{ $sources = add1 $sources }}{{ end }}
{{- if ne $sources 1 }}
{{- fail "secrets: set exactly one of secrets.csi.enabled (Key Vault), secrets.existingSecret or secrets.values" }}
{{- end }}
{{- if .Values.secrets.values }}
{{- range $name, $file := .Values.secrets.files }}
{{- if not (index $.Values.secrets.values $file) }}
{{- fail (printf "secrets.values.%s is required (the file %s reads)" $file $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- if and .Values.secrets.csi.enabled (not .Values.secrets.csi.keyVaultName) }}
{{- fail "secrets.csi.keyVaultName is required with secrets.csi.enabled" }}
{{- end }}
{{- if .Values.workloadIdentity.enabled }}
{{- if not .Values.workloadIdentity.clientId }}
{{- fail "workloadIdentity.clientId is required when workloadIdentity.enabled (the app registration's client id)" }}
{{- end }}
{{- range $name := list "ENTRA_MANAGED_IDENTITY_CLIENT_ID" "ENTRA_CLIENT_SECRET" "ENTRA_CLIENT_CERTIFICATE_PATH" }}
{{- if or (hasKey $.Values.config $name) (hasKey $.Values.secrets.files $name) }}
{{- fail (printf "%s contradicts workloadIdentity.enabled: give the portal one credential" $name) }}
{{- end }}
{{- end }}
{{- end }}
{{- with .Values.memoryApi }}{{ if .enabled }}
{{- if not .baseUrl }}
{{- fail "memoryApi.baseUrl is required when memoryApi.enabled" }}
{{- end }}
{{- if not (regexMatch "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$" (toString .workspaceUid)) }}
{{- fail "memoryApi.workspaceUid must be the Workspace's UID (a UUID): the memory-api answers 500 to a workspace name" }}
{{- end }}
{{- if lt (int .token.expirationSeconds) 600 }}
{{- fail "memoryApi.token.expirationSeconds must be at least 600 (Kubernetes' minimum)" }}
{{- end }}
{{- if and (eq .subjectRule "hmac-sha256") (not (hasKey $.Values.secrets.files "MEMORY_API_PSEUDONYM_KEY")) }}
{{- fail "memoryApi.subjectRule hmac-sha256 needs secrets.files.MEMORY_API_PSEUDONYM_KEY (the pseudonym key)" }}
{{- end }}
{{- end }}{{ end }}
{{- with .Values.legacyMove }}
{{- if and .enabled (not .store) }}
{{- fail "legacyMove.store is required when legacyMove.enabled: the store's full name or its agent" }}
{{- end }}
{{- if and .enabled (not .usersVolume) }}
{{- fail "legacyMove.usersVolume is required when legacyMove.enabled: where the list of people is (docs/operations.md, Moving a whole tenant)" }}
{{- end }}
{{- if and .enabled (lt (int .completions) 1) }}
{{- fail "legacyMove.completions (the number of shards) must be at least 1" }}
{{- end }}
{{- end }}
{{- with .Values.autoscaling }}
{{- if and .enabled (or (lt (int .minReplicas) 1) (gt (int .minReplicas) (int .maxReplicas))) }}
{{- fail "autoscaling: minReplicas must be at least 1 and at most maxReplicas" }}
{{- end }}
{{- if and .enabled (ge (int $.Values.podDisruptionBudget.minAvailable) (int .minReplicas)) (gt (int .minReplicas) 1) $.Values.podDisruptionBudget.enabled }}
{{- fail "podDisruptionBudget.minAvailable must be below autoscaling.minReplicas, or no node could ever be drained" }}
{{- end }}
{{- if and (not .enabled) (ge (int $.Values.podDisruptionBudget.minAvailable) (int $.Values.replicaCount)) (gt (int $.Values.replicaCount) 1) $.Values.podDisruptionBudget.enabled }}
{{- fail "podDisruptionBudget.minAvailable must be below replicaCount, or no node could ever be drained" }}
{{- end }}
{{- end }}
{{- end }}

{{/* The largest request the portal takes, in MiB, with room for multipart framing: a zip
restore of 10 x PORTAL_UPLOAD_MAX_BYTES, or a form of 6 x the larger of it and
COREAPI_MAX_BODY_BYTES (portal/settings.py, DATA_UPLOAD_MAX_MEMORY_SIZE). */}}
{{- define "memory-portal.maxBodySize" -}}
{{- if .Values.ingress.maxBodySize }}
{{- .Values.ingress.maxBodySize }}
{{- else }}
{{- $upload := int64 (default "1048576" (toString (index .Values.config "PORTAL_UPLOAD_MAX_BYTES" | default ""))) }}
{{- $coreapi := int64 (default "2097152" (toString (index .Values.config "COREAPI_MAX_BODY_BYTES" | default ""))) }}
{{- $form := add (mul 6 (max $upload $coreapi)) 65536 }}
{{- $bytes := add (max (mul 10 $upload) $form) 1048576 }}
{{- printf "%dm" (div (add $bytes 1048575) 1048576) }}
{{- end }}
{{- end }}

{{/* The pod spec shared by the Deployment, the migration Job, the clearsessions CronJob and
the legacy move Job. A pod that needs more (the move's list of people) passes a dict with
the root's Values, Release and Chart and its own extraVolumes. */}}
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
      {{- with .Values.tmp.medium }}
      medium: {{ . }}
      {{- end }}
      sizeLimit: {{ .Values.tmp.sizeLimit }}
  - name: secrets
    {{- if .Values.secrets.csi.enabled }}
    csi:
      driver: secrets-store.csi.k8s.io
      readOnly: true
      volumeAttributes:
        secretProviderClass: {{ include "memory-portal.fullname" . }}
    {{- else }}
    secret:
      secretName: {{ include "memory-portal.secretName" . }}
    {{- end }}
  {{- if .Values.memoryApi.enabled }}
  # The memory-api's credential: a ServiceAccount token for its audience, renewed by the
  # kubelet (at 80% of its life) and re-read by the portal when the file changes.
  - name: memory-api-token
    projected:
      sources:
        - serviceAccountToken:
            path: memory-api
            audience: {{ .Values.memoryApi.token.audience }}
            expirationSeconds: {{ .Values.memoryApi.token.expirationSeconds }}
  {{- end }}
  {{- with .extraVolumes }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The container settings shared by every pod: image, environment, read-only root (with
extraEnv and extraVolumeMounts when given a dict, as podSpec). */}}
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
  {{- with .extraEnv }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
securityContext:
  readOnlyRootFilesystem: true
  allowPrivilegeEscalation: false
  capabilities:
    drop: ["ALL"]
resources:
  {{- toYaml .Values.resources | nindent 2 }}
volumeMounts:
  - name: tmp
    mountPath: /tmp
  - name: secrets
    mountPath: /mnt/secrets
    readOnly: true
  {{- if .Values.memoryApi.enabled }}
  - name: memory-api-token
    mountPath: /var/run/secrets/tokens
    readOnly: true
  {{- end }}
  {{- with .extraVolumeMounts }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end }}
