//go:build e2e

package e2e

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// TestMetacontrollerProduction runs the real Metacontroller, with the install metacontroller/
// renders, through what stops pods in the clusters platform teams run: a namespace that enforces
// Pod Security "restricted", a quota, a missing ServiceAccount, and a node drain while every pod
// is unhealthy. The ReplicaSet controller of the real kube-controller-manager meets the
// apiserver's refusals; the WebApp must say which.
func TestMetacontrollerProduction(t *testing.T) {
	requireCluster(t)
	realInstall(t, "metacontroller")

	cannotCreate := func(t *testing.T, ns, name, reason string, wantInMessage string) {
		t.Helper()
		st := waitStatus(t, ns, name, reason, 90*time.Second, func(st webappv1.WebAppStatus) bool {
			r, _ := readyCondition(st)
			return r == reason
		})
		if _, msg := readyCondition(st); st.Phase != webappv1.PhaseDegraded || !strings.Contains(msg, "cannot create pods: ") || !strings.Contains(msg, wantInMessage) || strings.Contains(msg, `pods "`) {
			t.Errorf("phase %q, message %q; want Degraded, quoting %q without the pod's name", st.Phase, msg, wantInMessage)
		}
	}

	t.Run("Pod Security restricted", func(t *testing.T) {
		ns := client.namespace(t, "restricted")
		labelNamespace(t, ns, map[string]string{"pod-security.kubernetes.io/enforce": "restricted"})
		if _, err := client.create(webApp(ns, "app", obj{"image": "nginx:1.27", "replicas": 2, "port": 8080})); err != nil {
			t.Fatal(err)
		}
		cannotCreate(t, ns, "app", webappv1.ReasonPodSecurityViolation, `violates PodSecurity "restricted:latest"`)
		patchSpec(t, ns, "app", obj{"securityProfile": "restricted"})
		st := waitStatus(t, ns, "app", "Ready under restricted", 90*time.Second, phaseIs(webappv1.PhaseReady))
		if st.ReadyReplicas != 2 {
			t.Errorf("status %+v; want 2 ready pods", st)
		}
		pod := podsOf(t, ns, "app")[0]
		if field(pod, "spec", "automountServiceAccountToken") != false || field(pod, "spec", "securityContext", "seccompProfile", "type") != "RuntimeDefault" {
			t.Errorf("pod spec %v; want no token and RuntimeDefault seccomp", field(pod, "spec"))
		}
	})

	t.Run("a quota of 0 pods", func(t *testing.T) {
		ns := client.namespace(t, "quota")
		if _, err := client.create(obj{"apiVersion": "v1", "kind": "ResourceQuota", "metadata": obj{"name": "pods", "namespace": ns}, "spec": obj{"hard": obj{"pods": "0"}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.create(webApp(ns, "app", obj{"image": "nginx:1.27"})); err != nil {
			t.Fatal(err)
		}
		cannotCreate(t, ns, "app", webappv1.ReasonQuotaExceeded, "exceeded quota: pods")
	})

	t.Run("a missing ServiceAccount", func(t *testing.T) {
		ns := client.namespace(t, "account")
		if _, err := client.create(webApp(ns, "app", obj{"image": "nginx:1.27", "serviceAccountName": "missing"})); err != nil {
			t.Fatal(err)
		}
		cannotCreate(t, ns, "app", webappv1.ReasonServiceAccountMissing, `serviceaccount "missing" not found`)
		if _, err := client.create(obj{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": "missing", "namespace": ns}}); err != nil {
			t.Fatal(err)
		}
		waitStatus(t, ns, "app", "Ready once the ServiceAccount exists", 120*time.Second, phaseIs(webappv1.PhaseReady))
	})

	t.Run("a drain evicts pods that are all unhealthy", func(t *testing.T) {
		ns := client.namespace(t, "drain")
		// kwok's stage for this image crash-loops the container (testdata/kwok-stages.yaml).
		if _, err := client.create(webApp(ns, "app", obj{"image": "registry.invalid/crash:1.0", "replicas": 2, "disruptionBudget": obj{"maxUnavailable": 1}})); err != nil {
			t.Fatal(err)
		}
		var pdb obj
		waitFor(t, "a budget that sees 2 pods, none healthy", 90*time.Second, func() (bool, error) {
			var err error
			pdb, err = client.get("policy/v1", "PodDisruptionBudget", ns, "app")
			return pdb != nil && field(pdb, "status", "expectedPods") == float64(2) && field(pdb, "status", "currentHealthy") == float64(0) &&
				field(pdb, "status", "observedGeneration") == field(pdb, "metadata", "generation"), err
		})
		if got := field(pdb, "spec", "unhealthyPodEvictionPolicy"); got != "AlwaysAllow" {
			t.Fatalf("unhealthyPodEvictionPolicy = %v; want AlwaysAllow", got)
		}
		// A pod that is not Running may be evicted under either policy: wait until both crash
		// while Running, the case IfHealthyBudget refuses.
		pod := runningPod(t, ns, webappv1.LabelInstance+"=app")
		if err := evict(ns, pod); err != nil {
			t.Fatalf("evict: %v; want the pod evicted though the budget allows no disruption of healthy pods", err)
		}

		// The control: the same pods under a budget with the default policy, IfHealthyBudget,
		// which is what the WebApp's budget had before. Its eviction is refused.
		labels := obj{"app": "control"}
		podSpec := obj{"containers": []any{obj{"name": "app", "image": "registry.invalid/crash:1.0"}}}
		if _, err := client.create(obj{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": obj{"name": "control", "namespace": ns},
			"spec": obj{"replicas": 2, "selector": obj{"matchLabels": labels}, "template": obj{"metadata": obj{"labels": labels}, "spec": podSpec}}}); err != nil {
			t.Fatal(err)
		}
		if _, err := client.create(obj{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": obj{"name": "control", "namespace": ns},
			"spec": obj{"maxUnavailable": 1, "selector": obj{"matchLabels": labels}}}); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the control budget sees 2 pods, none healthy", 90*time.Second, func() (bool, error) {
			pdb, err := client.get("policy/v1", "PodDisruptionBudget", ns, "control")
			return pdb != nil && field(pdb, "status", "expectedPods") == float64(2) && field(pdb, "status", "currentHealthy") == float64(0) &&
				field(pdb, "status", "observedGeneration") == field(pdb, "metadata", "generation"), err
		})
		name := runningPod(t, ns, "app=control")
		if err := evict(ns, name); err == nil || err.(*apiError).Code != http.StatusTooManyRequests {
			t.Errorf("evict %s under IfHealthyBudget = %v; want 429, as a drain would meet", name, err)
		}
	})
}

// runningPod waits until every pod of selector in ns (two or more) is Running (kwok's crash stage
// keeps them not Ready), and returns the first one's name.
func runningPod(t *testing.T, ns, selector string) string {
	t.Helper()
	var name string
	waitFor(t, "pods of "+selector+" Running", 90*time.Second, func() (bool, error) {
		b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/pods?labelSelector="+url.QueryEscape(selector), "", nil)
		if err != nil {
			return false, err
		}
		list, _ := decode(b)
		items, _ := list["items"].([]any)
		for _, it := range items {
			if field(it, "status", "phase") != "Running" || field(it, "metadata", "deletionTimestamp") != nil {
				return false, nil
			}
		}
		if len(items) < 2 {
			return false, nil
		}
		name, _ = field(items[0], "metadata", "name").(string)
		return true, nil
	})
	return name
}

// evict asks the Eviction API to evict a pod, as kubectl drain does.
func evict(ns, pod string) error {
	eviction := obj{"apiVersion": "policy/v1", "kind": "Eviction", "metadata": obj{"name": pod, "namespace": ns}}
	_, err := client.do("POST", "/api/v1/namespaces/"+ns+"/pods/"+pod+"/eviction", "application/json", eviction)
	return err
}

// labelNamespace merges labels into a namespace's.
func labelNamespace(t *testing.T, ns string, labels map[string]string) {
	t.Helper()
	if _, err := client.do("PATCH", "/api/v1/namespaces/"+ns, "application/merge-patch+json", obj{"metadata": obj{"labels": labels}}); err != nil {
		t.Fatal(err)
	}
}

// podsOf lists the pods of a WebApp, by its instance label; it fails the test when there are none.
func podsOf(t *testing.T, ns, name string) []obj {
	t.Helper()
	b, err := client.do("GET", "/api/v1/namespaces/"+ns+"/pods?labelSelector="+url.QueryEscape(webappv1.LabelInstance+"="+name), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	list, err := decode(b)
	if err != nil {
		t.Fatal(err)
	}
	items, _ := list["items"].([]any)
	var pods []obj
	for _, it := range items {
		pods = append(pods, it.(map[string]any))
	}
	if len(pods) == 0 {
		t.Fatalf("no pods of %s/%s", ns, name)
	}
	return pods
}
