{{/* Names and labels shared by every template. */}}

{{- define "phalanx.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Prefix of every resource name; component suffixes ("-operator", "-kube-scheduler") must
still fit in 63 characters, so the prefix is cut at 40. */}}
{{- define "phalanx.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 40 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 40 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "phalanx.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "phalanx.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component: (list $ "operator") */}}
{{- define "phalanx.selectorLabels" -}}
{{- $ := index . 0 -}}
app.kubernetes.io/name: {{ include "phalanx.name" $ }}
app.kubernetes.io/instance: {{ $.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "phalanx.componentLabels" -}}
{{ include "phalanx.labels" (index . 0) }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end }}

{{- define "phalanx.operatorServiceAccount" -}}
{{- default (printf "%s-operator" (include "phalanx.fullname" .)) .Values.operator.serviceAccount.name }}
{{- end }}

{{- define "phalanx.schedulerServiceAccount" -}}
{{- default (printf "%s-scheduler" (include "phalanx.fullname" .)) .Values.scheduler.serviceAccount.name }}
{{- end }}

{{- define "phalanx.operatorLease" -}}
{{- default (printf "%s-operator" (include "phalanx.fullname" .)) .Values.operator.leaderElection.leaseName }}
{{- end }}

{{- define "phalanx.kubeSchedulerLease" -}}
{{- default (printf "%s-kube-scheduler" (include "phalanx.fullname" .)) .Values.kubeScheduler.leaderElection.leaseName }}
{{- end }}

{{- define "phalanx.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* host:port, with brackets around an IPv6 host. */}}
{{- define "phalanx.hostPort" -}}
{{- $host := index . 0 -}}
{{- if contains ":" $host }}{{ printf "[%s]:%v" $host (index . 1) }}{{ else }}{{ printf "%s:%v" $host (index . 1) }}{{ end }}
{{- end }}

{{/* A pod's affinity: (list $ userAffinity antiAffinity["soft"|"hard"|"none"]). The user's
affinity wins whole; otherwise avoidInstanceTypes as a required node affinity, and for the
operator an anti-affinity spreading its replicas over nodes. */}}
{{- define "phalanx.affinity" -}}
{{- $ := index . 0 }}{{ $user := index . 1 }}{{ $anti := index . 2 -}}
{{- if $user }}
{{- toYaml $user }}
{{- else }}
{{- with $.Values.avoidInstanceTypes }}
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
    - matchExpressions:
      - key: node.kubernetes.io/instance-type
        operator: NotIn
        values:
        {{- toYaml . | nindent 8 }}
{{- end }}
{{- if eq $anti "soft" }}
podAntiAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
  - weight: 100
    podAffinityTerm:
      topologyKey: kubernetes.io/hostname
      labelSelector:
        matchLabels:
          {{- include "phalanx.selectorLabels" (list $ "operator") | nindent 10 }}
{{- else if eq $anti "hard" }}
podAntiAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
  - topologyKey: kubernetes.io/hostname
    labelSelector:
      matchLabels:
        {{- include "phalanx.selectorLabels" (list $ "operator") | nindent 8 }}
{{- end }}
{{- end }}
{{- end }}

{{/* The Secrets of the Placement API's TLS: given, or the ones tls-secrets.yaml makes. */}}
{{- define "phalanx.schedulerTlsSecret" -}}
{{- .Values.tls.schedulerSecret | default (printf "%s-scheduler-tls" (include "phalanx.fullname" .)) }}
{{- end }}
{{- define "phalanx.operatorTlsSecret" -}}
{{- .Values.tls.operatorSecret | default (printf "%s-operator-tls" (include "phalanx.fullname" .)) }}
{{- end }}

{{/* Who may change reservations (--grpc-tls-writers): tls.writers, else the generated
operator certificate's name when the chart makes the certificates, else "" (every client). */}}
{{- define "phalanx.tlsWriters" -}}
{{- if .Values.tls.writers }}
{{- join "," .Values.tls.writers }}
{{- else if not .Values.tls.operatorSecret }}
{{- printf "%s-operator" (include "phalanx.fullname" .) }}
{{- end }}
{{- end }}
