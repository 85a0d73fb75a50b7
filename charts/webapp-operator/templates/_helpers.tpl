{{/*
The labels Helm's own conventions add to every object's metadata, beside the install's own
app.kubernetes.io/name and part-of. Never on selectors or pod templates, so that a new chart
version changes no selector and rolls no pod.
*/}}
{{- define "webapp-operator.labels" -}}
app.kubernetes.io/part-of: webapp-operator
{{ include "webapp-operator.helmLabels" . }}
{{- end -}}

{{/* The labels of Helm's conventions alone. */}}
{{- define "webapp-operator.helmLabels" -}}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end -}}

{{/* The hook's labels: selectors use app.kubernetes.io/name alone. */}}
{{- define "webapp-operator.hookLabels" -}}
app.kubernetes.io/name: webapp-hook
{{ include "webapp-operator.labels" . }}
{{- end -}}

{{/* The hook's image: repository@digest when a digest is set, else repository:tag. */}}
{{- define "webapp-operator.image" -}}
{{- if .Values.image.digest -}}
{{- if not (regexMatch "^sha256:[0-9a-f]{64}$" .Values.image.digest) -}}
{{- fail (printf "image.digest: %q is not sha256: and 64 hex digits" .Values.image.digest) -}}
{{- end -}}
{{ .Values.image.repository }}@{{ .Values.image.digest }}
{{- else -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}
{{- end -}}

{{/* The base URL Metacontroller calls the hooks at: the Service, by its namespace. */}}
{{- define "webapp-operator.hookURL" -}}
{{ ternary "https" "http" .Values.tls.enabled }}://webapp-hook.{{ .Release.Namespace }}
{{- end -}}

{{/*
webapp-operator.static renders a file of files/ (links to the kustomize install's own files, the
one source of these objects) with the chart's labels added to each object, a binding's paramRef
in the release's namespace (the kustomize install's is webapp-system), and, given "keep",
helm.sh/resource-policy: keep. Arguments: (list $ "files/x.yaml" keep).
*/}}
{{- define "webapp-operator.static" -}}
{{- $root := index . 0 -}}
{{- $labels := include "webapp-operator.helmLabels" $root | fromYaml -}}
{{- range $doc := regexSplit "(?m)^---[ \t]*$" ($root.Files.Get (index . 1)) -1 }}
{{- $o := fromYaml $doc -}}
{{- if $o }}
{{- $meta := $o.metadata -}}
{{- $_ := set $meta "labels" (merge (dict) ($meta.labels | default dict) $labels) -}}
{{- $spec := get $o "spec" -}}
{{- if and (kindIs "map" $spec) (hasKey $spec "paramRef") }}
{{- $_ := set $spec.paramRef "namespace" $root.Release.Namespace -}}
{{- end }}
{{- if index $ 2 }}
{{- $_ := set $meta "annotations" (merge (dict) ($meta.annotations | default dict) (dict "helm.sh/resource-policy" "keep")) -}}
{{- end }}
---
{{ toYaml $o }}
{{- end }}
{{- end }}
{{- end -}}
