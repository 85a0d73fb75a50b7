// Package validation holds the WebApp API's own rules: what a WebApp's name and spec must be for
// the hook to build its children, as k8s.io/kubernetes/pkg/apis/apps/validation holds those of
// the apps API. The CRD schema (api/v1's markers) states most of the same rules; these are checked
// again because the schema may be older than the hook, or replaced, and Metacontroller passes on
// whatever the apiserver stored.
//
// Each file checks one part of the spec: container.go the container (image, environment,
// resources, probes, lifecycle handlers), pod.go the pod around it (volumes, security,
// scheduling, pod metadata, shutdown), workload.go the name and the spec as a whole with the
// rollout strategy, disruption budget and autoscaler, rollout.go the canary, and route.go the
// Ingress and the HTTPRoute. Every
// function returns a field.ErrorList in apimachinery's form, in a stable order.
package validation
