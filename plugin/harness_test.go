package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	gosync "sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/plugin/screen"
)

// seeded reads the story name of testdata/seeded: a WebApp, its Deployments and pods, as the
// hook's own code answered a request of examples/ (see its Source). The command tests read the
// seeds, never the stories an e2e run records, so that a new recording changes no expectation.
func seeded(t *testing.T, name string) *screen.Recording {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "seeded", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var r screen.Recording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return &r
}

// webAppOf is the WebApp of the story name, changed by edit when not nil.
func webAppOf(t *testing.T, name string, edit func(*webappv1.WebApp)) *webappv1.WebApp {
	t.Helper()
	wa := seeded(t, name).WebApp
	if edit != nil {
		edit(&wa)
	}
	return &wa
}

// harness is a cluster of client-go's fake clientsets, and a clock.
type harness struct {
	dyn  *dynamicfake.FakeDynamicClient
	kube *kubefake.Clientset
	now  time.Time
}

// newHarness serves webApps through the dynamic fake, and objects (Deployments, pods) through
// the typed one.
func newHarness(t *testing.T, webApps []*webappv1.WebApp, objects ...runtime.Object) *harness {
	t.Helper()
	var objs []runtime.Object
	for _, wa := range webApps {
		objs = append(objs, unstructuredOf(t, wa))
	}
	return &harness{
		dyn:  dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{WebApps: "WebAppList"}, objs...),
		kube: kubefake.NewClientset(objects...),
		now:  time.Date(2026, 11, 29, 10, 4, 30, 0, time.UTC),
	}
}

// unstructuredOf is a WebApp as the dynamic client holds it.
func unstructuredOf(t *testing.T, wa *webappv1.WebApp) *unstructured.Unstructured {
	t.Helper()
	b, err := json.Marshal(wa)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{}
	if err := json.Unmarshal(b, &u.Object); err != nil {
		t.Fatal(err)
	}
	u.SetAPIVersion(webappv1.Group + "/" + webappv1.Version)
	u.SetKind(webappv1.Kind)
	return u
}

// main is a Main on the fakes, in namespace default unless -n says otherwise.
func (h *harness) main(stdout, stderr *syncBuffer, args ...string) Main {
	return Main{
		Args: args, Stdout: stdout, Stderr: stderr, Version: "v0.1.0-test",
		Now: func() time.Time { return h.now },
		Connect: func(f *genericclioptions.ConfigFlags) (*Clients, error) {
			ns := "default"
			if f.Namespace != nil && *f.Namespace != "" {
				ns = *f.Namespace
			}
			return &Clients{Dynamic: h.dyn, Apps: h.kube.AppsV1(), Core: h.kube.CoreV1(), Namespace: ns}, nil
		},
	}
}

// run runs kubectl webapp args to the end.
func (h *harness) run(args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuffer
	code = h.main(&out, &errOut, args...).Run(context.Background())
	return code, out.String(), errOut.String()
}

// patches are the bodies of the patches of WebApps the commands sent, in order.
func (h *harness) patches() []string {
	var out []string
	for _, a := range h.dyn.Actions() {
		if p, ok := a.(clienttesting.PatchAction); ok && a.GetResource() == WebApps {
			out = append(out, string(p.GetPatch()))
		}
	}
	return out
}

// refuse makes the fakes answer verb on resource with err.
func (h *harness) refuse(verb, resource string, err error) {
	react := func(clienttesting.Action) (bool, runtime.Object, error) { return true, nil, err }
	h.dyn.PrependReactor(verb, resource, react)
	h.kube.PrependReactor(verb, resource, react)
}

// conflictOnce makes the first patch of a WebApp fail with the API server's 409, as when the
// WebApp changed after the command read it: edit changes the stored WebApp, whose
// resourceVersion goes up by one, before the 409 is answered. Later patches go through.
func (h *harness) conflictOnce(t *testing.T, edit func(*webappv1.WebApp)) {
	t.Helper()
	fired := false
	h.dyn.PrependReactor("patch", "webapps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if fired {
			return false, nil, nil
		}
		fired = true
		p := a.(clienttesting.PatchAction)
		obj, err := h.dyn.Tracker().Get(WebApps, p.GetNamespace(), p.GetName())
		if err != nil {
			return true, nil, err
		}
		wa, err := decodeWebApp(obj.(*unstructured.Unstructured))
		if err != nil {
			return true, nil, err
		}
		edit(wa)
		rv, _ := strconv.Atoi(wa.ResourceVersion)
		wa.ResourceVersion = strconv.Itoa(rv + 1)
		if err := h.dyn.Tracker().Update(WebApps, unstructuredOf(t, wa), p.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewConflict(schema.GroupResource{Group: webappv1.Group, Resource: "webapps"}, p.GetName(), errors.New("the object has been modified; please apply your changes to the latest version and try again"))
	})
}

// forbiddenErr is the API server's refusal of bob, for verb on resource in namespace default.
func forbiddenErr(group, resource, verb string) error {
	return apierrors.NewForbidden(schema.GroupResource{Group: group, Resource: resource}, "shop",
		errors.New(`User "bob" cannot `+verb+` resource "`+resource+`" in API group "`+group+`" in the namespace "default"`))
}

// syncBuffer is a bytes.Buffer safe for a command that writes while a test reads.
type syncBuffer struct {
	mu gosync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
