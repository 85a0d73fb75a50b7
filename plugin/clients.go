package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	appsv1client "k8s.io/client-go/kubernetes/typed/apps/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	webappv1 "github.com/example/webapp-operator/api/v1"
	"github.com/example/webapp-operator/plugin/screen"
)

// WebApps is the resource of WebApps.
var WebApps = schema.GroupVersionResource{Group: webappv1.Group, Version: webappv1.Version, Resource: "webapps"}

// FieldManager names kubectl webapp as the writer of what it patches.
const FieldManager = "kubectl-webapp"

// Clients are what a command talks to the cluster with, and the namespace it acts in.
type Clients struct {
	// Dynamic reads and patches WebApps.
	Dynamic dynamic.Interface
	// Apps reads Deployments, and Core pods: the two typed clients alone, not client-go's whole
	// clientset, which would build every API group's client into the plugin for each platform.
	Apps appsv1client.AppsV1Interface
	Core corev1client.CoreV1Interface
	// Namespace is --namespace's, or else the kubeconfig context's.
	Namespace string
}

// Connect makes Clients from kubectl's flags: the cluster, the user (--as included) and the
// namespace they name.
func Connect(f *genericclioptions.ConfigFlags) (*Clients, error) {
	cfg, err := f.ToRESTConfig()
	if err != nil {
		return nil, err
	}
	ns, _, err := f.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	apps, err := appsv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Clients{Dynamic: dyn, Apps: apps, Core: core, Namespace: ns}, nil
}

// webApp reads the WebApp name.
func (c *Clients) webApp(ctx context.Context, name string) (*webappv1.WebApp, error) {
	u, err := c.Dynamic.Resource(WebApps).Namespace(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, &apiError{"get", "webapps", c.Namespace, name, err}
	}
	return decodeWebApp(u)
}

// decodeWebApp is an object of the dynamic client as a WebApp.
func decodeWebApp(u *unstructured.Unstructured) (*webappv1.WebApp, error) {
	b, err := json.Marshal(u.Object)
	if err != nil {
		return nil, err
	}
	var wa webappv1.WebApp
	if err := json.Unmarshal(b, &wa); err != nil {
		return nil, fmt.Errorf("webapp %s does not decode as a WebApp: %w", u.GetName(), err)
	}
	return &wa, nil
}

// patch merge-patches the WebApp name with patch, in one request.
func (c *Clients) patch(ctx context.Context, name string, patch map[string]any) error {
	b, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = c.Dynamic.Resource(WebApps).Namespace(c.Namespace).Patch(ctx, name, types.MergePatchType, b, metav1.PatchOptions{FieldManager: FieldManager})
	if err != nil {
		return &apiError{"patch", "webapps", c.Namespace, name, err}
	}
	return nil
}

// deployment reads the Deployment name; nil when it does not exist.
func (c *Clients) deployment(ctx context.Context, name string) (*appsv1.Deployment, error) {
	d, err := c.Apps.Deployments(c.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, &apiError{"get", "deployments", c.Namespace, name, err}
	}
	return d, nil
}

// replicaSets lists the ReplicaSets the Deployment d owns, of the WebApp it is named after.
func (c *Clients) replicaSets(ctx context.Context, d *appsv1.Deployment) ([]appsv1.ReplicaSet, error) {
	l, err := c.Apps.ReplicaSets(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector(d.Name)})
	if err != nil {
		return nil, &apiError{"list", "replicasets", c.Namespace, "", err}
	}
	var out []appsv1.ReplicaSet
	for _, rs := range l.Items {
		if owner := metav1.GetControllerOf(&rs); owner != nil && owner.UID == d.UID && owner.Kind == "Deployment" {
			out = append(out, rs)
		}
	}
	return out, nil
}

// selector selects the children of the WebApp name, of either track: its Deployments and
// pods carry the WebApp's instance and managed-by labels (sync's labelsFor), the canary's too.
func selector(name string) string {
	return labels.SelectorFromSet(labels.Set{webappv1.LabelInstance: name, webappv1.LabelManagedBy: webappv1.ManagedBy}).String()
}

// story reads what the screen of the WebApp name shows, at now: the WebApp, its stable and
// canary Deployments and its pods. What RBAC keeps from the user is left out, and the story says
// why (Story.Unread): only the WebApp itself must be readable.
func (c *Clients) story(ctx context.Context, name string, now time.Time) (*screen.Story, error) {
	wa, err := c.webApp(ctx, name)
	if err != nil {
		return nil, err
	}
	s := &screen.Story{Now: now, WebApp: *wa}
	unread := func(what string, err error) {
		if s.Unread == nil {
			s.Unread = map[string]string{}
		}
		s.Unread[what] = err.Error()
	}
	for _, n := range []string{name, name + webappv1.CanarySuffix} {
		d, err := c.deployment(ctx, n)
		if forbidden(err) {
			unread("deployments", err)
			break
		}
		if err != nil {
			return nil, err
		}
		if d != nil {
			s.Deployments = append(s.Deployments, *d)
		}
	}
	pods, err := c.pods(ctx, name)
	switch {
	case forbidden(err):
		unread("pods", err)
	case err != nil:
		return nil, err
	}
	s.Pods = pods
	events, err := c.events(ctx, wa)
	switch {
	case forbidden(err):
		unread("events", err)
	case err != nil:
		return nil, err
	}
	s.Events = events
	return s, nil
}

// eventsOf selects the Events on the WebApp name.
func eventsOf(name string) string {
	return fields.Set{"involvedObject.kind": webappv1.Kind, "involvedObject.name": name}.String()
}

// events lists the Events on wa: of its name and, when they say, its uid (not a WebApp of the
// same name before it).
func (c *Clients) events(ctx context.Context, wa *webappv1.WebApp) ([]corev1.Event, error) {
	l, err := c.Core.Events(c.Namespace).List(ctx, metav1.ListOptions{FieldSelector: eventsOf(wa.Name)})
	if err != nil {
		return nil, &apiError{"list", "events", c.Namespace, "", err}
	}
	return slices.DeleteFunc(l.Items, func(e corev1.Event) bool {
		return e.InvolvedObject.UID != "" && e.InvolvedObject.UID != wa.UID
	}), nil
}

// pods lists the pods of the WebApp name.
func (c *Clients) pods(ctx context.Context, name string) ([]corev1.Pod, error) {
	l, err := c.Core.Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: selector(name)})
	if err != nil {
		return nil, &apiError{"list", "pods", c.Namespace, "", err}
	}
	return l.Items, nil
}

// complete completes the first argument with the names of the namespace's WebApps.
func (r *runner) complete(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := r.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	l, err := c.Dynamic.Resource(WebApps).Namespace(c.Namespace).List(cmd.Context(), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	var names []cobra.Completion
	for _, item := range l.Items {
		if strings.HasPrefix(item.GetName(), toComplete) {
			names = append(names, item.GetName())
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
