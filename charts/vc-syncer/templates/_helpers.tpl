{{/* Chart name, cut to the 63 characters of a DNS label. */}}
{{- define "vc-syncer.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Full name of the release's objects: the release name when it already contains the chart
name (`helm install vc-syncer ...` gives "vc-syncer", as config/ does), otherwise
<release>-vc-syncer. */}}
{{- define "vc-syncer.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "vc-syncer.selectorLabels" -}}
app.kubernetes.io/name: {{ include "vc-syncer.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "vc-syncer.labels" -}}
{{ include "vc-syncer.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{- define "vc-syncer.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "vc-syncer.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- required "serviceAccount.name is required when serviceAccount.create is false" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{/* The checkpoint store flag value: checkpoint.store, or a Secret in the release namespace. */}}
{{- define "vc-syncer.checkpointStore" -}}
{{- default (printf "secret:%s/%s-checkpoint" .Release.Namespace (include "vc-syncer.fullname" .)) .Values.checkpoint.store -}}
{{- end -}}

{{/* Fails rendering on an unknown opt-in kind (the syncer would refuse to start). */}}
{{- define "vc-syncer.validateOptIn" -}}
{{- range .Values.optInKinds -}}
{{- if not (has . (list "Ingress" "NetworkPolicy" "PodDisruptionBudget" "Event")) -}}
{{- fail (printf "optInKinds: unknown kind %q (known: Ingress, NetworkPolicy, PodDisruptionBudget, Event)" .) -}}
{{- end -}}
{{- end -}}
{{- range .Values.disabledKinds -}}
{{- if not (has . (list "Event")) -}}
{{- fail (printf "disabledKinds: kind %q cannot be turned off (these can: Event)" .) -}}
{{- end -}}
{{- if has . $.Values.optInKinds -}}
{{- fail (printf "disabledKinds: kind %q is in optInKinds too" .) -}}
{{- end -}}
{{- end -}}
{{- end -}}


{{/* The port the vNodes advertise for the kubelet API and the kubelet Service's port. */}}
{{- define "vc-syncer.kubeletAdvertisePort" -}}
{{- .Values.kubeletAPI.advertisePort | default .Values.kubeletAPI.port -}}
{{- end -}}

{{/* Fails rendering when the kubelet API is on without the address the vNodes advertise (the
syncer would refuse to start). */}}
{{- define "vc-syncer.validateKubeletAPI" -}}
{{- if .Values.kubeletAPI.enabled -}}
{{- if not .Values.kubeletAPI.advertiseAddress -}}
{{- fail (printf "kubeletAPI.advertiseAddress is required when kubeletAPI.enabled: the IP address or DNS name the tenant apiservers reach the kubelet API at, e.g. %s-kubelet.%s.svc" (include "vc-syncer.fullname" .) .Release.Namespace) -}}
{{- end -}}
{{- if or .Values.sharding.enabled (gt (int .Values.replicaCount) 1) -}}
{{- fail "kubeletAPI.enabled needs replicaCount: 1 and sharding.enabled: false: a replica answers the kubelet API only for the tenants it syncs, so behind the Service a request that reaches the standby or another shard would get 401" -}}
{{- end -}}
{{- end -}}
{{- end -}}
