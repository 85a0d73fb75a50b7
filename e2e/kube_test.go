//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/example/webapp-operator/hooktest"
)

// kube is a minimal REST client for the test apiserver: enough to create, get, server-side apply
// and update status, without client-go.
type kube struct {
	server string
	token  string
	hc     *http.Client

	mu        sync.Mutex
	resources map[string]resourceInfo // by apiVersion + "/" + kind
}

type resourceInfo struct {
	name       string
	namespaced bool
}

// apiError is a non-2xx answer from the apiserver, with its metav1.Status message.
type apiError struct {
	Code    int
	Message string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d: %s", e.Code, e.Message) }

func newKube(server, token string) *kube {
	return &kube{server: server, token: token, hc: insecureLoopbackClient(), resources: map[string]resourceInfo{}}
}

// do sends one request; body may be nil, []byte or any JSON-encodable value.
func (k *kube) do(method, path, contentType string, body any) ([]byte, error) {
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		r = bytes.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		r = bytes.NewReader(j)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, k.server+path, r)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+k.token)
	req.Header.Set("Accept", "application/json")
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := k.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		var st struct{ Message string }
		json.Unmarshal(out, &st)
		if st.Message == "" {
			st.Message = string(out)
		}
		return out, &apiError{Code: resp.StatusCode, Message: st.Message}
	}
	return out, nil
}

// obj is an object as plain maps.
type obj = map[string]any

func decode(b []byte) (obj, error) {
	var o obj
	err := json.Unmarshal(b, &o)
	return o, err
}

// path returns the REST path of an object, or of its collection when name is empty, using discovery.
func (k *kube) path(apiVersion, kind, namespace, name string) (string, error) {
	info, err := k.resource(apiVersion, kind)
	if err != nil {
		return "", err
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	if info.namespaced {
		p += "/namespaces/" + namespace
	}
	p += "/" + info.name
	if name != "" {
		p += "/" + name
	}
	return p, nil
}

func (k *kube) resource(apiVersion, kind string) (resourceInfo, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if info, ok := k.resources[apiVersion+"/"+kind]; ok {
		return info, nil
	}
	p := "/apis/" + apiVersion
	if !strings.Contains(apiVersion, "/") {
		p = "/api/" + apiVersion
	}
	b, err := k.do("GET", p, "", nil)
	if err != nil {
		return resourceInfo{}, fmt.Errorf("discover %s: %w", apiVersion, err)
	}
	var list struct {
		Resources []struct {
			Name       string
			Kind       string
			Namespaced bool
		}
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return resourceInfo{}, err
	}
	for _, r := range list.Resources {
		if !strings.Contains(r.Name, "/") {
			k.resources[apiVersion+"/"+r.Kind] = resourceInfo{name: r.Name, namespaced: r.Namespaced}
		}
	}
	info, ok := k.resources[apiVersion+"/"+kind]
	if !ok {
		return info, fmt.Errorf("no resource for %s %s", apiVersion, kind)
	}
	return info, nil
}

// forget drops cached discovery, after new CRDs are installed.
func (k *kube) forget() {
	k.mu.Lock()
	k.resources = map[string]resourceInfo{}
	k.mu.Unlock()
}

func identity(o obj) (apiVersion, kind, namespace, name string) {
	meta, _ := o["metadata"].(map[string]any)
	apiVersion, _ = o["apiVersion"].(string)
	kind, _ = o["kind"].(string)
	namespace, _ = meta["namespace"].(string)
	name, _ = meta["name"].(string)
	return
}

// apply server-side applies o as fieldManager, forcing conflicts, optionally as a dry run, and
// returns the object the apiserver stored or would store.
func (k *kube) apply(o obj, fieldManager string, dryRun bool) (obj, error) {
	apiVersion, kind, namespace, name := identity(o)
	p, err := k.path(apiVersion, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	q := url.Values{"fieldManager": {fieldManager}, "force": {"true"}}
	if dryRun {
		q.Set("dryRun", "All")
	}
	b, err := k.do("PATCH", p+"?"+q.Encode(), "application/apply-patch+yaml", o)
	if err != nil {
		return nil, fmt.Errorf("apply %s %s/%s: %w", kind, namespace, name, err)
	}
	return decode(b)
}

func (k *kube) create(o obj) (obj, error) {
	apiVersion, kind, namespace, _ := identity(o)
	p, err := k.path(apiVersion, kind, namespace, "")
	if err != nil {
		return nil, err
	}
	b, err := k.do("POST", p, "application/json", o)
	if err != nil {
		return nil, err
	}
	return decode(b)
}

// get returns the object, or nil and no error when it does not exist.
func (k *kube) get(apiVersion, kind, namespace, name string) (obj, error) {
	p, err := k.path(apiVersion, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	b, err := k.do("GET", p, "", nil)
	if e, ok := err.(*apiError); ok && e.Code == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return decode(b)
}

// updateStatus replaces the status of an object through its status subresource and returns what
// the apiserver stored.
func (k *kube) updateStatus(o obj, status any) (obj, error) {
	apiVersion, kind, namespace, name := identity(o)
	p, err := k.path(apiVersion, kind, namespace, name)
	if err != nil {
		return nil, err
	}
	current, err := k.get(apiVersion, kind, namespace, name)
	if err != nil || current == nil {
		return nil, fmt.Errorf("get %s/%s for status: %v", namespace, name, err)
	}
	var s any
	if err := roundTrip(status, &s); err != nil {
		return nil, err
	}
	current["status"] = s
	b, err := k.do("PUT", p+"/status", "application/json", current)
	if err != nil {
		return nil, err
	}
	return decode(b)
}

// namespace creates a namespace named after the test and deletes it at the end.
func (k *kube) namespace(t *testing.T, prefix string) string {
	t.Helper()
	name := fmt.Sprintf("%s-%s", prefix, randomHex(3))
	if _, err := k.create(obj{"apiVersion": "v1", "kind": "Namespace", "metadata": obj{"name": name}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.do("DELETE", "/api/v1/namespaces/"+name, "", nil) })
	// Until the ServiceAccount controller has made the namespace's default ServiceAccount, the
	// apiserver refuses its pods, as in any cluster; wait for it, so that no test meets that race.
	waitFor(t, name+"'s default ServiceAccount", 30*time.Second, func() (bool, error) {
		sa, err := k.get("v1", "ServiceAccount", name, "default")
		return sa != nil, err
	})
	return name
}

// yamlDocs splits a multi-document YAML file into objects.
func yamlDocs(data []byte) ([]obj, error) {
	var out []obj
	for _, doc := range strings.Split("\n"+string(data), "\n---") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var o obj
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			return nil, err
		}
		if o != nil {
			out = append(out, o)
		}
	}
	return out, nil
}

func roundTrip(in, out any) error {
	b, err := json.Marshal(in)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}

// waitFor polls cond every 200ms until it returns true, an error, or the timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() (bool, error)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, err := cond()
		if err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			if err := cluster.exited(); err != nil {
				t.Fatalf("waiting for %s: %v", what, err)
			}
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// field walks map keys and list indexes.
var field = hooktest.Field

// watchEvent is one event of a watch (ADDED, MODIFIED or DELETED), when it arrived.
type watchEvent struct {
	Type   string
	Object obj
	At     time.Time
}

// record watches the object of kind named name in namespace ns (every object of the kind there,
// when name is ""), from its current state on, until
// the returned function is called; that function returns every event seen, in order. Polling
// misses states that last less than a poll; a watch sees each write.
func (k *kube) record(t *testing.T, apiVersion, kind, ns, name string) func() []watchEvent {
	t.Helper()
	p, err := k.path(apiVersion, kind, ns, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	q := "?watch=1"
	if name != "" {
		q += "&fieldSelector=" + url.QueryEscape("metadata.name="+name)
	}
	req, _ := http.NewRequestWithContext(ctx, "GET", k.server+p+q, nil)
	req.Header.Set("Authorization", "Bearer "+k.token)
	hc := &http.Client{Transport: k.hc.Transport} // no timeout: the watch lasts until cancelled
	resp, err := hc.Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		cancel()
		resp.Body.Close()
		t.Fatalf("watch %s: %s", p, resp.Status)
	}
	var events []watchEvent
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var e watchEvent
			if err := dec.Decode(&e); err != nil {
				return
			}
			e.At = time.Now()
			events = append(events, e)
		}
	}()
	return func() []watchEvent {
		cancel()
		<-done
		return events
	}
}

// kubectl runs kubectl, built into bin/ with the control plane, against the test apiserver, as a
// user would, and returns its output.
func kubectl(t *testing.T, args ...string) string {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(cluster.kubeconfig()), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(filepath.Join(cluster.bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// kubectlAs runs kubectl as one of testUsers, with that user's token and no other rights, and
// returns its output and error, for a test to check a refusal.
func kubectlAs(user string, args ...string) (string, error) {
	dir, err := os.MkdirTemp("", "kubectl-"+user+"-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(strings.Replace(cluster.kubeconfig(), cluster.token, cluster.users[user], 1)), 0o600); err != nil {
		return "", err
	}
	out, err := exec.Command(filepath.Join(cluster.bin, "kubectl"), append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// replicasOf is a Deployment's spec.replicas as the apiserver stores it.
func replicasOf(t *testing.T, ns, name string) any {
	t.Helper()
	d, err := client.get("apps/v1", "Deployment", ns, name)
	if err != nil || d == nil {
		t.Fatalf("get Deployment %s/%s: %v", ns, name, err)
	}
	return field(d, "spec", "replicas")
}
