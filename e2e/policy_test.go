//go:build e2e

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	webappv1 "github.com/example/webapp-operator/api/v1"
)

// policyName names the ValidatingAdmissionPolicy of metacontroller/base/policy.yaml and its binding.
const policyName = "webapp-no-escalation"

// as is a client that authenticates as one of testUsers.
func as(user string) *kube { return newKube(cluster.server, cluster.users[user]) }

// installPolicy applies what metacontroller/ renders for authorization, the admission policy, its
// binding and the ClusterRoles, and removes them when t ends. It waits until RBAC has aggregated
// the ClusterRoles into edit, admin and view.
func installPolicy(t *testing.T) {
	t.Helper()
	out, err := exec.Command(filepath.Join(cluster.bin, "kubectl"), "kustomize", "../metacontroller").Output()
	if err != nil {
		t.Fatalf("kubectl kustomize metacontroller: %v", err)
	}
	docs, err := yamlDocs(out)
	if err != nil {
		t.Fatal(err)
	}
	var installed []obj
	for _, d := range docs {
		switch _, kind, _, _ := identity(d); kind {
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "ClusterRole":
			if _, err := client.apply(d, "webapp-e2e", false); err != nil {
				t.Fatal(err)
			}
			installed = append(installed, d)
		}
	}
	t.Cleanup(func() {
		for _, d := range installed {
			apiVersion, kind, _, name := identity(d)
			p, _ := client.path(apiVersion, kind, "", name)
			client.do("DELETE", p, "", nil)
		}
	})
	kinds := map[string]int{}
	for _, d := range installed {
		_, kind, _, _ := identity(d)
		kinds[kind]++
	}
	if kinds["ValidatingAdmissionPolicy"] != 1 || kinds["ValidatingAdmissionPolicyBinding"] != 1 || kinds["ClusterRole"] != 2 {
		t.Fatalf("metacontroller/ renders %v; want the policy, its binding and the two ClusterRoles", kinds)
	}
	for role, verb := range map[string]string{"edit": "create", "admin": "create", "view": "get"} {
		waitFor(t, "webapps in ClusterRole "+role, 30*time.Second, func() (bool, error) {
			r, err := client.get("rbac.authorization.k8s.io/v1", "ClusterRole", "", role)
			return r != nil && grants(r, "example.com", "webapps", verb), err
		})
	}
	// The policy takes effect a moment after it is written, once the apiserver's informer has
	// seen it: until a dry run by a user with webapp-edit alone is refused.
	ns := client.namespace(t, "policy-probe")
	bind(t, ns, "alice", "ClusterRole", "webapp-edit")
	may(t, "alice", "create", "example.com", "webapps", ns)
	p, _ := client.path("example.com/v1", "WebApp", ns, "")
	probe := webApp(ns, "probe", obj{"image": "nginx", "imagePullSecrets": []any{obj{"name": "probe"}}})
	waitFor(t, "the policy in force", 30*time.Second, func() (bool, error) {
		_, err := as("alice").do("POST", p+"?dryRun=All", "application/json", probe)
		return err != nil && strings.Contains(err.Error(), policyName), nil
	})
}

// grants reports whether a role's rules allow verb on resource in group, for any name.
func grants(role obj, group, resource, verb string) bool {
	rules, _ := field(role, "rules").([]any)
	for _, r := range rules {
		if field(r, "resourceNames") == nil && has(field(r, "apiGroups"), group) && has(field(r, "resources"), resource) && has(field(r, "verbs"), verb) {
			return true
		}
	}
	return false
}

func has(list any, s string) bool {
	l, _ := list.([]any)
	return slices.Contains(l, any(s))
}

// bind gives user the Role or ClusterRole role in ns.
func bind(t *testing.T, ns, user, kind, role string) {
	t.Helper()
	rb := obj{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
		"metadata": obj{"name": user + "-" + strings.ToLower(kind) + "-" + role, "namespace": ns},
		"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": kind, "name": role},
		"subjects": []any{obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}},
	}
	if _, err := client.create(rb); err != nil {
		t.Fatal(err)
	}
}

// grant makes a Role of rules in ns and binds it to user.
func grant(t *testing.T, ns, user, role string, rules ...obj) {
	t.Helper()
	r := obj{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": obj{"name": role, "namespace": ns}, "rules": rules}
	if _, err := client.create(r); err != nil {
		t.Fatal(err)
	}
	bind(t, ns, user, "Role", role)
}

// byName is an RBAC rule for verb on resource (of the core group) limited to names: the grant
// by name a platform team gives instead of get on Secrets or create on pods.
func byName(verb, resource string, names ...string) obj {
	return obj{"apiGroups": []any{""}, "resources": []any{resource}, "verbs": []any{verb}, "resourceNames": names}
}

// may waits until the apiserver's RBAC cache lets user do verb on resource in ns (its
// informers see a new binding a moment after it is written), and fails if it never does.
func may(t *testing.T, user, verb, group, resource, ns string) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%s may %s %s in %s", user, verb, resource, ns), 30*time.Second, func() (bool, error) {
		return allowed(user, verb, group, resource, ns, "")
	})
}

// allowed asks the apiserver, by a SubjectAccessReview, whether user may do verb on the resource
// ("webapps", or "webapps/status" for a subresource).
func allowed(user, verb, group, resource, ns, name string) (bool, error) {
	resource, subresource, _ := strings.Cut(resource, "/")
	b, err := client.do("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", "application/json", obj{
		"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
		"spec": obj{"user": user, "resourceAttributes": obj{"verb": verb, "group": group, "resource": resource, "subresource": subresource, "namespace": ns, "name": name}},
	})
	if err != nil {
		return false, err
	}
	sar, err := decode(b)
	return field(sar, "status", "allowed") == true, err
}

// refusal is the message the apiserver gives for a write the policy refuses with message.
func refusal(message string) string {
	return "ValidatingAdmissionPolicy '" + policyName + "' with binding '" + policyName + "' denied request: " + message
}

// wantRefused fails unless err is the policy's 403 ending in want.
func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	e, ok := err.(*apiError)
	if !ok || e.Code != http.StatusForbidden || !strings.HasSuffix(e.Message, refusal(want)) {
		t.Errorf("got %v;\nwant 403 ending in %q", err, refusal(want))
	}
}

// mergePatch merge-patches the WebApp ns/name, or its subresource when not empty, as k.
func mergePatch(k *kube, ns, name, subresource string, patch obj) error {
	p, _ := client.path("example.com/v1", "WebApp", ns, name)
	if subresource != "" {
		p += "/" + subresource
	}
	_, err := k.do("PATCH", p, "application/merge-patch+json", patch)
	return err
}

// escalation is a WebApp spec that reaches what a user with webapp-edit alone may not reach
// directly, with the refusal the policy gives alice.
type escalation struct {
	name string
	spec obj
	want string
}

// escalations are the escalations of a WebApp in namespace ns, one field each.
func escalations(ns string) []escalation {
	secret := func(path, name string) string {
		return path + `: user "alice" may not get secret "` + name + `" in namespace "` + ns + `"; a WebApp may reference only Secrets its author can read`
	}
	return []escalation{
		{"env secretKeyRef", obj{"image": "nginx", "env": []any{
			obj{"name": "LEVEL", "value": "info"},
			obj{"name": "HOST", "valueFrom": obj{"configMapKeyRef": obj{"name": "app-config", "key": "host"}}},
			obj{"name": "PASSWORD", "valueFrom": obj{"secretKeyRef": obj{"name": "db-creds", "key": "password"}}},
		}}, secret("spec.env[2].valueFrom.secretKeyRef.name", "db-creds")},
		{"envFrom secretRef", obj{"image": "nginx", "envFrom": []any{
			obj{"configMapRef": obj{"name": "app-config"}},
			obj{"secretRef": obj{"name": "db-creds"}, "prefix": "DB_"},
		}}, secret("spec.envFrom[1].secretRef.name", "db-creds")},
		{"secret volume", obj{"image": "nginx", "volumes": []any{
			obj{"name": "scratch", "mountPath": "/tmp", "emptyDir": obj{}},
			obj{"name": "creds", "mountPath": "/etc/creds", "readOnly": true, "secret": obj{"secretName": "db-creds"}},
		}}, secret("spec.volumes[1].secret.secretName", "db-creds")},
		{"optional secret volume", obj{"image": "nginx", "volumes": []any{
			obj{"name": "creds", "mountPath": "/etc/creds", "secret": obj{"secretName": "db-creds", "optional": true}},
		}}, secret("spec.volumes[0].secret.secretName", "db-creds")},
		{"imagePullSecrets", obj{"image": "registry.example.com/app:1", "imagePullSecrets": []any{obj{"name": "registry"}}},
			secret("spec.imagePullSecrets[0].name", "registry")},
		{"ingress tls", obj{"image": "nginx", "port": 8080, "ingress": obj{"host": "shop.example.com", "tls": obj{"secretName": "shop-tls"}}},
			secret("spec.ingress.tls.secretName", "shop-tls")},
		// Several Secrets: the refusal names the first reference, in spec order, of the first
		// Secret the author may not read. TestPolicy lets alice get app-secret by name;
		// app-config is a ConfigMap, which the policy does not check.
		{"the first Secret refused is named, at its first reference", obj{"image": "nginx",
			"env": []any{obj{"name": "A", "valueFrom": obj{"secretKeyRef": obj{"name": "app-secret", "key": "a"}}}},
			"volumes": []any{
				obj{"name": "config", "mountPath": "/etc/config", "configMap": obj{"name": "app-config"}},
				obj{"name": "creds", "mountPath": "/etc/creds", "secret": obj{"secretName": "db-creds"}},
				obj{"name": "own", "mountPath": "/etc/own", "secret": obj{"secretName": "app-secret"}},
			},
			"envFrom": []any{obj{"secretRef": obj{"name": "db-creds"}}},
		}, secret("spec.envFrom[0].secretRef.name", "db-creds")},
		{"serviceAccountName", obj{"image": "nginx", "serviceAccountName": "builder"},
			`spec.serviceAccountName: user "alice" may not create pods in namespace "` + ns + `" nor use serviceaccount "builder"; a WebApp may run as a ServiceAccount only if its author could run pods as it`},
		{"ingress annotations", obj{"image": "nginx", "port": 8080, "ingress": obj{"host": "shop.example.com", "annotations": obj{
			"nginx.ingress.kubernetes.io/server-snippet": "location /admin { allow all; }",
		}}}, `spec.ingress.annotations: user "alice" may not create ingresses in namespace "` + ns + `"; a WebApp may set Ingress annotations only if its author may create Ingresses`},
	}
}

// TestPolicy checks the webapp-no-escalation admission policy and the webapp-edit and
// webapp-view roles against the real apiserver, with RBAC: alice holds webapp-edit alone (and may
// read app-secret, by a grant by name), bob edit, carol view. The subtests share one install.
func TestPolicy(t *testing.T) {
	requireCluster(t)
	installPolicy(t)
	ns := client.namespace(t, "policy")
	bind(t, ns, "alice", "ClusterRole", "webapp-edit")
	bind(t, ns, "bob", "ClusterRole", "edit")
	bind(t, ns, "carol", "ClusterRole", "view")
	grant(t, ns, "alice", "app-secret", byName("get", "secrets", "app-secret"))
	may(t, "alice", "create", "example.com", "webapps", ns)
	may(t, "bob", "create", "example.com", "webapps", ns)
	may(t, "carol", "get", "example.com", "webapps", ns)
	alice, bob, carol := as("alice"), as("bob"), as("carol")
	cases := escalations(ns)
	// Everything at once: bob may do each directly, and so all of it through one WebApp.
	cases = append(cases, escalation{"every escalation at once", obj{"image": "nginx", "port": 8080, "serviceAccountName": "builder",
		"env":              []any{obj{"name": "P", "valueFrom": obj{"secretKeyRef": obj{"name": "db-creds", "key": "p"}}}},
		"envFrom":          []any{obj{"secretRef": obj{"name": "db-creds"}}},
		"volumes":          []any{obj{"name": "creds", "mountPath": "/etc/creds", "secret": obj{"secretName": "db-creds"}}},
		"imagePullSecrets": []any{obj{"name": "registry"}},
		"ingress": obj{"host": "shop.example.com", "tls": obj{"secretName": "shop-tls"}, "annotations": obj{
			"nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers \"X: y\";"}},
	}, `spec.env[0].valueFrom.secretKeyRef.name: user "alice" may not get secret "db-creds" in namespace "` + ns + `"; a WebApp may reference only Secrets its author can read`})

	t.Run("webapp-edit alone: refused on create", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				_, err := alice.create(webApp(ns, fmt.Sprintf("create-%d", i), c.spec))
				wantRefused(t, err, c.want)
			})
		}
	})

	t.Run("webapp-edit alone: refused on update", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				name := fmt.Sprintf("update-%d", i)
				// Written by the admin, who may do anything; then alice changes only the image.
				if _, err := client.create(webApp(ns, name, c.spec)); err != nil {
					t.Fatal(err)
				}
				wantRefused(t, mergePatch(alice, ns, name, "", obj{"spec": obj{"image": "nginx:1.29"}}), c.want)
				// Or takes the escalation out of a WebApp she may write, and puts it back.
				if err := mergePatch(alice, ns, name, "", obj{"spec": obj{"image": "nginx:1.29", "env": nil, "envFrom": nil, "volumes": nil,
					"imagePullSecrets": nil, "serviceAccountName": nil, "ingress": nil}}); err != nil {
					t.Fatalf("removing every reference: %v", err)
				}
				wantRefused(t, mergePatch(alice, ns, name, "", obj{"spec": c.spec}), c.want)
			})
		}
	})

	t.Run("edit: allowed the same", func(t *testing.T) {
		for i, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				name := fmt.Sprintf("bob-%d", i)
				if _, err := bob.create(webApp(ns, name, c.spec)); err != nil {
					t.Fatal(err)
				}
				if err := mergePatch(bob, ns, name, "", obj{"spec": obj{"image": "nginx:1.29"}}); err != nil {
					t.Fatal(err)
				}
				p, _ := client.path("example.com/v1", "WebApp", ns, name)
				if _, err := bob.do("DELETE", p, "", nil); err != nil {
					t.Fatal(err)
				}
			})
		}
	})

	t.Run("webapp-edit alone: allowed what reaches nothing new", func(t *testing.T) {
		for i, spec := range []obj{
			{"image": "nginx", "replicas": 2, "port": 8080},
			{"image": "nginx", "serviceAccountName": "default"}, // what an empty name means
			{"image": "nginx", "port": 8080, "ingress": obj{"host": "shop.example.com", "annotations": obj{}}},
			{"image": "nginx", "envFrom": []any{obj{"configMapRef": obj{"name": "app-config"}}},
				"volumes": []any{obj{"name": "config", "mountPath": "/etc/config", "configMap": obj{"name": "app-config"}}}},
			// A Secret alice may get by name (Role app-secret).
			{"image": "nginx", "volumes": []any{obj{"name": "own", "mountPath": "/etc/own", "secret": obj{"secretName": "app-secret"}}}},
		} {
			name := fmt.Sprintf("plain-%d", i)
			if _, err := alice.create(webApp(ns, name, spec)); err != nil {
				t.Errorf("%v: %v", spec, err)
				continue
			}
			if err := mergePatch(alice, ns, name, "", obj{"spec": obj{"image": "nginx:1.29"}}); err != nil {
				t.Errorf("%v, image changed: %v", spec, err)
			}
		}
	})

	t.Run("a WebApp alice may not write: status, scale and metadata pass", func(t *testing.T) {
		spec := cases[len(cases)-1].spec // every escalation
		if _, err := client.create(webApp(ns, "theirs", spec)); err != nil {
			t.Fatal(err)
		}
		// A change of replicas is a change of the spec like any other on the WebApp itself...
		wantRefused(t, mergePatch(alice, ns, "theirs", "", obj{"spec": obj{"replicas": 3}}), cases[len(cases)-1].want)
		// ...but through the scale subresource it is what an autoscaler or kubectl scale does,
		// and changes nothing the pods run or mount (webapp-edit may write webapps/scale).
		if err := mergePatch(alice, ns, "theirs", "scale", obj{"spec": obj{"replicas": 3}}); err != nil {
			t.Errorf("scale: %v", err)
		}
		if got := field(mustGet(t, "example.com/v1", "WebApp", ns, "theirs"), "spec", "replicas"); got != float64(3) {
			t.Errorf("spec.replicas = %v after the scale; want 3", got)
		}
		// The status is Metacontroller's to write; a user given webapps/status may write it too.
		grant(t, ns, "alice", "webapp-status", obj{"apiGroups": []any{"example.com"}, "resources": []any{"webapps/status"}, "verbs": []any{"patch"}})
		may(t, "alice", "patch", "example.com", "webapps/status", ns)
		if err := mergePatch(alice, ns, "theirs", "status", obj{"status": obj{"message": "written by alice"}}); err != nil {
			t.Errorf("status: %v", err)
		}
		// An update that leaves the spec as it is: a label, a finalizer taken off, as the
		// garbage collector and Metacontroller do with rights that need not cover the spec.
		if err := mergePatch(client, ns, "theirs", "", obj{"metadata": obj{"finalizers": []any{"example.com/hold"}}}); err != nil {
			t.Fatal(err)
		}
		if err := mergePatch(alice, ns, "theirs", "", obj{"metadata": obj{"labels": obj{"team": "shop"}, "finalizers": nil}}); err != nil {
			t.Errorf("metadata: %v", err)
		}
		wa := mustGet(t, "example.com/v1", "WebApp", ns, "theirs")
		if field(wa, "metadata", "labels", "team") != "shop" || field(wa, "metadata", "finalizers") != nil || field(wa, "status", "message") != "written by alice" {
			t.Errorf("metadata %v, status %v; want the label, no finalizer and alice's status", wa["metadata"], wa["status"])
		}
	})

	t.Run("view: reads, never writes", func(t *testing.T) {
		p, _ := client.path("example.com/v1", "WebApp", ns, "theirs")
		list, _ := client.path("example.com/v1", "WebApp", ns, "")
		for _, read := range []string{p, p + "/status", p + "/scale", list} {
			if _, err := carol.do("GET", read, "", nil); err != nil {
				t.Errorf("GET %s: %v", read, err)
			}
		}
		rbac := func(what string, err error) {
			e, ok := err.(*apiError)
			if !ok || e.Code != http.StatusForbidden || !strings.Contains(e.Message, `User "carol" cannot`) {
				t.Errorf("%s: %v; want RBAC's 403", what, err)
			}
		}
		_, err := carol.create(webApp(ns, "carols", obj{"image": "nginx"}))
		rbac("create", err)
		rbac("patch", mergePatch(carol, ns, "theirs", "", obj{"spec": obj{"image": "nginx:1.29"}}))
		rbac("scale", mergePatch(carol, ns, "theirs", "scale", obj{"spec": obj{"replicas": 1}}))
		rbac("status", mergePatch(carol, ns, "theirs", "status", obj{"status": obj{"message": "carol"}}))
		_, err = carol.do("DELETE", p, "", nil)
		rbac("delete", err)
	})

	t.Run("webapp-edit and nothing else: kubectl apply, scale and delete", func(t *testing.T) {
		// dave is a tenant given WebApps and nothing else: webapp-edit alone, no view, no edit.
		bind(t, ns, "dave", "ClusterRole", "webapp-edit")
		may(t, "dave", "get", "example.com", "webapps", ns)
		// Not t.TempDir(): the test's name has commas, and kubectl apply -f splits paths on them.
		dir, err := os.MkdirTemp("", "dave-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		file := filepath.Join(dir, "webapp.yaml")
		write := func(name string, spec obj) {
			t.Helper()
			b, err := json.Marshal(webApp(ns, name, spec))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, b, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("daves", obj{"image": "nginx:1.27", "port": 8080, "replicas": 1})
		for _, args := range [][]string{
			{"apply", "-f", file},
			{"get", "webapps", "-n", ns},
			{"get", "webapp/daves", "-n", ns, "-o", "jsonpath={.spec.image}"},
		} {
			if out, err := kubectlAs("dave", args...); err != nil {
				t.Errorf("kubectl %s as dave: %v\n%s", strings.Join(args, " "), err, out)
			}
		}
		write("daves", obj{"image": "nginx:1.28", "port": 8080, "replicas": 1})
		if out, err := kubectlAs("dave", "apply", "-f", file); err != nil || !strings.Contains(out, "configured") {
			t.Errorf("kubectl apply of a change as dave: %v\n%s", err, out)
		}
		if out, err := kubectlAs("dave", "scale", "-n", ns, "webapp/daves", "--replicas=3"); err != nil {
			t.Errorf("kubectl scale as dave: %v\n%s", err, out)
		}
		wa := mustGet(t, "example.com/v1", "WebApp", ns, "daves")
		if field(wa, "spec", "replicas") != float64(3) || field(wa, "spec", "image") != "nginx:1.28" {
			t.Errorf("spec %v; want dave's image nginx:1.28 and replicas 3", wa["spec"])
		}
		// Every refusal of the policy still names the field and the object, through kubectl.
		for i, c := range escalations(ns) {
			if strings.HasPrefix(c.name, "the first Secret refused") {
				continue // alice's grant on app-secret decides which reference is named; dave has none
			}
			t.Run(c.name, func(t *testing.T) {
				name := fmt.Sprintf("dave-%d", i)
				write(name, c.spec)
				out, err := kubectlAs("dave", "apply", "-f", file)
				want := strings.ReplaceAll(c.want, `user "alice"`, `user "dave"`)
				if err == nil || !strings.Contains(out, `webapps.example.com "`+name+`" is forbidden`) || !strings.Contains(out, refusal(want)) {
					t.Errorf("kubectl apply as dave: %v\n%s\nwant it refused, naming %s and %q", err, out, name, want)
				}
			})
		}
		if out, err := kubectlAs("dave", "delete", "-n", ns, "webapp/daves", "--wait=false"); err != nil {
			t.Errorf("kubectl delete as dave: %v\n%s", err, out)
		}
		// The same rights as edit on Deployments: deletecollection too.
		may(t, "dave", "deletecollection", "example.com", "webapps", ns)
		// And nothing beyond WebApps.
		for _, r := range []struct{ verb, group, resource string }{{"get", "", "secrets"}, {"create", "", "pods"}, {"patch", "example.com", "webapps/status"}, {"get", "apps", "deployments"}} {
			if ok, err := allowed("dave", r.verb, r.group, r.resource, ns, ""); ok || err != nil {
				t.Errorf("dave may %s %s: %v (%v); want webapp-edit to give nothing beyond WebApps", r.verb, r.resource, ok, err)
			}
		}
	})
}

// TestPolicyCanaryAnnotations checks the policy's canary annotations against the real apiserver,
// with RBAC: alice, with webapp-edit alone, may promote, abort and retry the canary of a WebApp
// whose spec she could not have written (it references a Secret she may not read), since an update
// of the canary annotations alone asks for no right beyond RBAC's update; with a spec change in the
// same update the spec is checked as ever; and a value of a form the hook does not read is
// refused, 422 with the annotation named, on update and on create. hack/policy runs the same
// cases offline (make policy-test).
func TestPolicyCanaryAnnotations(t *testing.T) {
	requireCluster(t)
	installPolicy(t)
	ns := client.namespace(t, "policy-canary")
	bind(t, ns, "alice", "ClusterRole", "webapp-edit")
	may(t, "alice", "patch", "example.com", "webapps", ns)
	alice := as("alice")
	spec := obj{"image": "nginx", "imagePullSecrets": []any{obj{"name": "registry"}}}
	if _, err := client.create(webApp(ns, "theirs", spec)); err != nil {
		t.Fatal(err)
	}
	annotate := func(k *kube, a obj) error {
		return mergePatch(k, ns, "theirs", "", obj{"metadata": obj{"annotations": a}})
	}
	for _, a := range []obj{
		{webappv1.AnnotationPromote: "c138f6851b"},
		{webappv1.AnnotationPromoteStep: "c138f6851b@1/2", webappv1.AnnotationAbort: "c138f6851b@1"},
		{webappv1.AnnotationRetry: "c138f6851b/2"},
		{webappv1.AnnotationPromote: nil, webappv1.AnnotationAbort: nil, webappv1.AnnotationPromoteStep: nil, webappv1.AnnotationRetry: nil},
	} {
		if err := annotate(alice, a); err != nil {
			t.Errorf("annotations %v, as alice: %v; want them let in", a, err)
		}
	}
	wantRefused(t, mergePatch(alice, ns, "theirs", "", obj{"metadata": obj{"annotations": obj{webappv1.AnnotationPromote: "c138f6851b"}}, "spec": obj{"image": "nginx:1.29"}}),
		`spec.imagePullSecrets[0].name: user "alice" may not get secret "registry" in namespace "`+ns+`"; a WebApp may reference only Secrets its author can read`)

	invalid := func(err error, key, value, form string) {
		t.Helper()
		want := refusal(fmt.Sprintf(`metadata.annotations[%s]: Invalid value: "%s": must be %s`, key, value, form))
		e, ok := err.(*apiError)
		if !ok || e.Code != http.StatusUnprocessableEntity || !strings.Contains(e.Message, want) {
			t.Errorf("got %v;\nwant 422 holding %q", err, want)
		}
	}
	for _, c := range []struct{ key, value, form string }{
		{webappv1.AnnotationPromote, "c138f6851b/1", "<revision>[@<attempt>]"},
		{webappv1.AnnotationAbort, "", "<revision>[@<attempt>]"},
		{webappv1.AnnotationPromoteStep, "c138f6851b", "<revision>[@<attempt>]/<step>"},
		{webappv1.AnnotationRetry, "c138f6851b/0", "<revision>[@<attempt>] or <revision>/<n>"},
	} {
		invalid(annotate(alice, obj{c.key: c.value}), c.key, c.value, c.form)
	}
	created := webApp(ns, "annotated", obj{"image": "nginx"})
	created["metadata"].(obj)["annotations"] = obj{webappv1.AnnotationPromote: "latest"}
	if _, err := alice.create(created); err != nil {
		t.Errorf("a create with a promote: %v", err)
	}
	created = webApp(ns, "malformed", obj{"image": "nginx"})
	created["metadata"].(obj)["annotations"] = obj{webappv1.AnnotationPromote: "Latest!"}
	_, err := alice.create(created)
	invalid(err, webappv1.AnnotationPromote, "Latest!", "<revision>[@<attempt>]")
}

// TestPolicyGrants checks the grants by name the policy accepts instead of the namespace's rights:
// use on a Secret or a ServiceAccount, get on a Secret by name; and create on Ingresses for
// annotations. Each is checked alone, in a namespace of its own.
func TestPolicyGrants(t *testing.T) {
	requireCluster(t)
	installPolicy(t)
	cases := escalations("")
	rules := map[string][]obj{
		"env secretKeyRef":       {byName("use", "secrets", "db-creds")},
		"envFrom secretRef":      {byName("use", "secrets", "db-creds")},
		"secret volume":          {byName("get", "secrets", "db-creds")},
		"optional secret volume": {byName("use", "secrets", "db-creds")},
		"imagePullSecrets":       {byName("use", "secrets", "registry")},
		"ingress tls":            {byName("use", "secrets", "shop-tls")},
		"the first Secret refused is named, at its first reference": {byName("use", "secrets", "db-creds", "app-secret")},
		"serviceAccountName":  {byName("use", "serviceaccounts", "builder")},
		"ingress annotations": {{"apiGroups": []any{"networking.k8s.io"}, "resources": []any{"ingresses"}, "verbs": []any{"create"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ns := client.namespace(t, "grant")
			bind(t, ns, "alice", "ClusterRole", "webapp-edit")
			may(t, "alice", "create", "example.com", "webapps", ns)
			alice := as("alice")
			// Refused first, so that the grant is what lets it through.
			_, err := alice.create(webApp(ns, "app", c.spec))
			if err == nil || !strings.Contains(err.Error(), policyName) {
				t.Fatalf("create without the grant: %v; want the policy's refusal", err)
			}
			r, ok := rules[c.name]
			if !ok {
				t.Fatalf("no grant for case %q", c.name)
			}
			grant(t, ns, "alice", "grant", r...)
			for _, rule := range r {
				group, _ := field(rule, "apiGroups", 0).(string)
				names, _ := field(rule, "resourceNames").([]string)
				name := ""
				if len(names) > 0 {
					name = names[len(names)-1]
				}
				waitFor(t, "the grant in RBAC's cache", 30*time.Second, func() (bool, error) {
					return allowed("alice", field(rule, "verbs", 0).(string), group, field(rule, "resources", 0).(string), ns, name)
				})
			}
			if _, err := alice.create(webApp(ns, "app", c.spec)); err != nil {
				t.Fatalf("create with the grant: %v", err)
			}
			if err := mergePatch(alice, ns, "app", "", obj{"spec": obj{"image": "nginx:1.29"}}); err != nil {
				t.Errorf("image change with the grant: %v", err)
			}
		})
	}

	// An authorization check costs a fifth of an expression's CEL budget: the policy checks each
	// of up to 10 Secrets in a validation of its own, within the budget of a request whatever the
	// answers, and needs get on every Secret of the namespace for more.
	t.Run("ten Secrets and more", func(t *testing.T) {
		ns := client.namespace(t, "budget")
		bind(t, ns, "alice", "ClusterRole", "webapp-edit")
		bind(t, ns, "bob", "ClusterRole", "edit")
		may(t, "alice", "create", "example.com", "webapps", ns)
		may(t, "bob", "create", "example.com", "webapps", ns)
		spec := func(secrets int) obj {
			var volumes []any
			for i := range secrets {
				volumes = append(volumes, obj{"name": fmt.Sprintf("s%d", i), "mountPath": fmt.Sprintf("/s%d", i), "secret": obj{"secretName": fmt.Sprintf("s%d", i)}})
			}
			return obj{"image": "nginx", "port": 8080, "volumes": volumes, "serviceAccountName": "builder",
				"ingress": obj{"host": "shop.example.com", "annotations": obj{"a": "b"}}}
		}
		alice, bob := as("alice"), as("bob")
		// Nothing granted: 10 Secrets, each checked twice, and the ServiceAccount and the
		// annotations still make a refusal that names the first Secret, not a spent budget.
		_, err := alice.create(webApp(ns, "ten", spec(10)))
		wantRefused(t, err, `spec.volumes[0].secret.secretName: user "alice" may not get secret "s0" in namespace "`+ns+`"; a WebApp may reference only Secrets its author can read`)
		// The most checks a WebApp that passes can take: get by name for each Secret (after
		// use by name is refused), use for the ServiceAccount (after create on pods is refused).
		var names []string
		for i := range 11 {
			names = append(names, fmt.Sprintf("s%d", i))
		}
		grant(t, ns, "alice", "grant",
			byName("get", "secrets", names...),
			byName("use", "serviceaccounts", "builder"),
			obj{"apiGroups": []any{"networking.k8s.io"}, "resources": []any{"ingresses"}, "verbs": []any{"create"}})
		waitFor(t, "the grant in RBAC's cache", 30*time.Second, func() (bool, error) {
			return allowed("alice", "get", "", "secrets", ns, "s10")
		})
		if _, err := alice.create(webApp(ns, "ten", spec(10))); err != nil {
			t.Errorf("10 Secrets, each readable by name: %v", err)
		}
		_, err = alice.create(webApp(ns, "eleven", spec(11)))
		wantRefused(t, err, `spec: the WebApp references 11 Secrets; user "alice" may not get every secret in namespace "`+ns+`", and this policy checks at most 10 by name`)
		if _, err := bob.create(webApp(ns, "eleven", spec(11))); err != nil {
			t.Errorf("11 Secrets by a user who may get every Secret: %v", err)
		}
	})
}

// TestPolicyMetacontroller runs the real Metacontroller with the least-privilege ClusterRole of
// docs/security.md, under the admission policy: a WebApp alice may write only by grants by name,
// which mounts a Secret and runs as a ServiceAccount, reaches Ready and is torn down. Metacontroller
// may neither create pods nor use that ServiceAccount, and still adds and removes its finalizer:
// updates that leave the spec as it is are not checked.
func TestPolicyMetacontroller(t *testing.T) {
	requireCluster(t)
	requireMetacontroller(t)
	installPolicy(t)
	role := leastPrivilegeRole(t)
	if _, err := client.apply(role, "webapp-e2e", false); err != nil {
		t.Fatal(err)
	}
	_, _, _, roleName := identity(role)
	crb := obj{
		"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
		"metadata": obj{"name": "metacontroller-e2e"},
		"roleRef":  obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": roleName},
		"subjects": []any{obj{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "metacontroller-e2e"}},
	}
	if _, err := client.apply(crb, "webapp-e2e", false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.do("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/metacontroller-e2e", "", nil)
		client.do("DELETE", "/apis/rbac.authorization.k8s.io/v1/clusterroles/"+roleName, "", nil)
	})

	ns := client.namespace(t, "policy-mc")
	for _, o := range []obj{
		{"apiVersion": "v1", "kind": "Secret", "metadata": obj{"name": "db-creds", "namespace": ns}, "stringData": obj{"password": "s3cr3t"}},
		{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": obj{"name": "builder", "namespace": ns}},
	} {
		if _, err := client.create(o); err != nil {
			t.Fatal(err)
		}
	}
	bind(t, ns, "alice", "ClusterRole", "webapp-edit")
	grant(t, ns, "alice", "grant", byName("use", "secrets", "db-creds"), byName("use", "serviceaccounts", "builder"))
	may(t, "metacontroller-e2e", "update", "example.com", "webapps", ns)
	waitFor(t, "alice's grant in RBAC's cache", 30*time.Second, func() (bool, error) {
		return allowed("alice", "use", "", "serviceaccounts", ns, "builder")
	})
	// Without either right the policy would refuse Metacontroller's own updates of this WebApp,
	// were they checked.
	for _, right := range [][3]string{{"create", "pods", ""}, {"use", "serviceaccounts", "builder"}} {
		if ok, err := allowed("metacontroller-e2e", right[0], "", right[1], ns, right[2]); err != nil || ok {
			t.Fatalf("metacontroller-e2e may %s %s (%v); the test needs a Metacontroller that may not", right[0], right[1], err)
		}
	}

	in := renderInstall(t, "metacontroller")
	hook := startHook(t, in)
	cc := in.compositeController(t, hook.url())
	cc["spec"].(map[string]any)["resyncPeriodSeconds"] = 5
	mc := startMetacontrollerAs(t, cc, "metacontroller-e2e")

	alice := as("alice")
	spec := obj{"image": "nginx:1.27", "replicas": 2, "port": 8080, "serviceAccountName": "builder",
		"envFrom": []any{obj{"secretRef": obj{"name": "db-creds"}}},
		"volumes": []any{obj{"name": "creds", "mountPath": "/etc/creds", "readOnly": true, "secret": obj{"secretName": "db-creds"}}}}
	if _, err := alice.create(webApp(ns, "shop", spec)); err != nil {
		t.Fatalf("alice's WebApp, with her grants: %v", err)
	}
	waitStatus(t, ns, "shop", "Ready", 90*time.Second, phaseIs(webappv1.PhaseReady))
	dep := mustGet(t, "apps/v1", "Deployment", ns, "shop")
	if sa, secret := field(dep, "spec", "template", "spec", "serviceAccountName"), field(dep, "spec", "template", "spec", "volumes", 0, "secret", "secretName"); sa != "builder" || secret != "db-creds" {
		t.Errorf("pod template runs as %v and mounts %v; want builder and db-creds", sa, secret)
	}
	if f := field(mustGet(t, "example.com/v1", "WebApp", ns, "shop"), "metadata", "finalizers"); f == nil {
		t.Error("no finalizer on the WebApp; want Metacontroller's")
	}

	p, _ := client.path("example.com/v1", "WebApp", ns, "shop")
	if _, err := alice.do("DELETE", p, "", nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the WebApp and its children gone", 90*time.Second, func() (bool, error) {
		wa, err := client.get("example.com/v1", "WebApp", ns, "shop")
		return wa == nil && len(childrenOf(t, ns, "shop")) == 0, err
	})
	// RBAC's refusals; others (a namespace of an earlier test being deleted) are no concern here.
	if refused := rbacRefusals(tailFile(mc.log, 1<<20), "metacontroller-e2e"); refused != "" {
		t.Errorf("Metacontroller was refused rights the ClusterRole of docs/security.md lacks:\n%s", refused)
	}
}

// leastPrivilegeRole is the ClusterRole for Metacontroller that docs/security.md shows, read from
// the YAML block that defines it, so that the documentation is what the test runs.
func leastPrivilegeRole(t *testing.T) obj {
	t.Helper()
	b, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		docs, err := yamlDocs([]byte(block[1]))
		if err != nil {
			continue
		}
		for _, d := range docs {
			if _, kind, _, name := identity(d); kind == "ClusterRole" && name == "metacontroller-webapp" {
				return d
			}
		}
	}
	t.Fatal("docs/security.md shows no ClusterRole metacontroller-webapp")
	return nil
}

// rbacRefusals returns the first lines of log in which RBAC refused user something.
func rbacRefusals(log, user string) string {
	var out []string
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, `User \"`+user+`\" cannot`) && len(out) < 5 {
			out = append(out, l[:min(len(l), 600)])
		}
	}
	return strings.Join(out, "\n")
}

// startMetacontrollerAs is startMetacontroller with Metacontroller authenticating as user, one of
// testUsers, instead of the admin.
func startMetacontrollerAs(t *testing.T, cc obj, user string) *metacontroller {
	t.Helper()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	config := strings.Replace(cluster.kubeconfig(), "token: "+cluster.token, "token: "+cluster.users[user], 1)
	if err := os.WriteFile(kubeconfig, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	return startMetacontrollerWith(t, cc, 5, kubeconfig)
}

// templatesPolicy names the ValidatingAdmissionPolicy of metacontroller/analysis/policy.yaml
// and its binding.
const templatesPolicy = "webapp-analysis-templates"

// TestPolicyAnalysisTemplates checks metacontroller/analysis's webapp-analysis-templates policy
// against the real apiserver: a WebApp that names a metric template the templates ConfigMap does
// not define is refused, on create and when an update adds the name, with a message that names
// it; one that names only defined templates is let in, and so is an update of a WebApp that keeps
// naming a template since removed. The policy is installed as the component renders it; its
// binding reads a ConfigMap of the test's namespace and binds only there, so that no other
// test's WebApp meets it.
func TestPolicyAnalysisTemplates(t *testing.T) {
	requireCluster(t)
	ns := client.namespace(t, "templates-policy")
	var policy, binding, cm obj
	for _, d := range renderKustomize(t, "testdata/analysis") {
		switch _, kind, _, name := identity(d); {
		case kind == "ValidatingAdmissionPolicy" && name == templatesPolicy:
			policy = d
		case kind == "ValidatingAdmissionPolicyBinding" && name == templatesPolicy:
			binding = d
		case kind == "ConfigMap" && name == "webapp-hook-analysis-templates":
			cm = d
		}
	}
	if policy == nil || binding == nil || cm == nil {
		t.Fatalf("testdata/analysis renders policy %v, binding %v, ConfigMap %v; want all three", policy != nil, binding != nil, cm != nil)
	}
	if got := field(binding, "spec", "paramRef", "namespace"); got != field(cm, "metadata", "namespace") {
		t.Errorf("the binding reads ConfigMaps of namespace %v; want the ConfigMap's, %v", got, field(cm, "metadata", "namespace"))
	}
	cm["metadata"].(map[string]any)["namespace"] = ns
	setTemplates := func(names ...string) {
		t.Helper()
		var b strings.Builder
		b.WriteString("templates:\n# - name: commented-out\n")
		for _, n := range names {
			fmt.Fprintf(&b, "- name: %q  # quoted\n  query: |\n    sum(up{name=\"x\"})\n", n)
		}
		cm["data"] = obj{"templates.yaml": b.String()}
		if _, err := client.apply(cm, "webapp-e2e", false); err != nil {
			t.Fatal(err)
		}
	}
	setTemplates("error-budget", "app-p95")
	spec := binding["spec"].(map[string]any)
	spec["paramRef"].(map[string]any)["namespace"] = ns
	spec["matchResources"] = obj{"namespaceSelector": obj{"matchLabels": obj{"kubernetes.io/metadata.name": ns}}}
	for _, d := range []obj{policy, binding} {
		if _, err := client.apply(d, "webapp-e2e", false); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			apiVersion, kind, _, name := identity(d)
			p, _ := client.path(apiVersion, kind, "", name)
			client.do("DELETE", p, "", nil)
		})
	}

	analysed := func(templates ...string) obj {
		metrics := []any{obj{"name": "request-success-rate", "thresholdRange": obj{"min": 99}}}
		for _, n := range templates {
			metrics = append(metrics, obj{"name": n, "templateRef": obj{"name": n}, "thresholdRange": obj{"max": 1}})
		}
		return obj{"image": "nginx", "port": 8080,
			"route":   obj{"hostnames": []any{"shop.example.com"}, "parentRefs": []any{obj{"name": "public"}}},
			"rollout": obj{"canary": obj{"steps": []any{obj{"weight": 10}}, "analysis": obj{"metrics": metrics}}}}
	}
	p, _ := client.path("example.com/v1", "WebApp", ns, "")
	dryRun := func(name string, spec obj) error {
		_, err := client.do("POST", p+"?dryRun=All", "application/json", webApp(ns, name, spec))
		return err
	}
	unknown := func(name string) string {
		return "ValidatingAdmissionPolicy '" + templatesPolicy + "' with binding '" + templatesPolicy + "' denied request: " +
			`spec.rollout.canary.analysis.metrics: templateRef "` + name + `" names no template of the hook's analysis templates (the ConfigMap webapp-hook-analysis-templates)`
	}
	wantUnknown := func(t *testing.T, err error, name string) {
		t.Helper()
		if e, ok := err.(*apiError); !ok || e.Code != http.StatusUnprocessableEntity || !strings.HasSuffix(e.Message, unknown(name)) {
			t.Errorf("got %v;\nwant 422 ending in %q", err, unknown(name))
		}
	}
	// The policy takes effect a moment after it is written.
	waitFor(t, "the policy in force", 30*time.Second, func() (bool, error) {
		err := dryRun("probe", analysed("nope"))
		return err != nil && strings.Contains(err.Error(), templatesPolicy), nil
	})

	t.Run("refused on create: a name not defined, a prefix of one, one commented out", func(t *testing.T) {
		for _, n := range []string{"nope", "error", "app-p9", "commented-out"} {
			wantUnknown(t, dryRun("create-"+n, analysed("error-budget", n)), n)
		}
	})
	t.Run("allowed: defined names, or none", func(t *testing.T) {
		for i, spec := range []obj{analysed("error-budget", "app-p95"), analysed(), {"image": "nginx"}} {
			if err := dryRun(fmt.Sprint("allowed-", i), spec); err != nil {
				t.Errorf("%v: %v", spec, err)
			}
		}
	})
	t.Run("update: a template since removed stays, a new unknown one is refused", func(t *testing.T) {
		if _, err := client.create(webApp(ns, "shop", analysed("app-p95"))); err != nil {
			t.Fatal(err)
		}
		setTemplates("error-budget")
		waitFor(t, "the policy reading the ConfigMap without app-p95", 30*time.Second, func() (bool, error) {
			err := dryRun("probe", analysed("app-p95"))
			return err != nil && strings.Contains(err.Error(), templatesPolicy), nil
		})
		if err := mergePatch(client, ns, "shop", "", obj{"spec": obj{"image": "nginx:1.29"}}); err != nil {
			t.Errorf("an image changed, app-p95 kept: %v", err)
		}
		s := analysed("app-p95", "nope")
		s["image"] = "nginx:1.29"
		wantUnknown(t, mergePatch(client, ns, "shop", "", obj{"spec": s}), "nope")
	})
}
