package wire

import (
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/example/webapp-operator/sync"
)

// wireChild decodes one observed child where it stands in the request.
//
// Metacontroller files each child under its own type, "Kind.apiVersion", so a child filed under
// a kind the hook builds is decoded straight from the request into that kind's view (request.go),
// in the one pass that reads the request, and must be of that kind; its Raw is then cut from the
// body by DecodeRequest, from the offsets recorded here. Any other child is read whole, kept as
// Raw, and decoded by what it says it is.
type wireChild struct {
	child sync.Child
	// start and end are the input offsets around a child decoded in place, whose Raw is still to
	// be taken from the body: start is just after its member name, end just after its '}'.
	// Both are 0 when Raw is already set.
	start, end int64
}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom.
func (w *wireChild) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*w = wireChild{} // a repeated key decodes into the same wireChild: the last one wins
	at := dec.StackPointer()
	if k := dec.PeekKind(); k != '{' {
		return &RequestError{Field: fieldPath(at), Problem: "expected object, got JSON " + kindName(k)}
	}
	group := at.Parent().LastToken()
	if view := views[sync.KindByKey(group)]; view != nil {
		w.start = dec.InputOffset()
		c, err := view(func(v any) error { return jsonv2.UnmarshalDecode(dec, v, decodeOptions) })
		if err != nil {
			return err
		}
		w.end = dec.InputOffset()
		if err := checkChild(&c, at); err != nil {
			return err
		}
		if c.Kind+"."+c.APIVersion != group {
			return &RequestError{Field: fieldPath(at), Problem: fmt.Sprintf("a %s %s is filed under %s", c.APIVersion, c.Kind, group)}
		}
		w.child = c
		return nil
	}
	v, err := dec.ReadValue()
	if err != nil {
		return err
	}
	raw := v.Clone()
	var h wireHead
	if err := jsonv2.Unmarshal(raw, &h, decodeOptions); err != nil {
		return requestError(err, fieldPath(at), raw)
	}
	w.child = sync.Child{APIVersion: h.APIVersion, Kind: h.Kind}
	if h.Metadata != nil {
		w.child.Name, w.child.Namespace = h.Metadata.Name, h.Metadata.Namespace
	}
	if err := checkChild(&w.child, at); err != nil {
		return err
	}
	if view := views[sync.KindByKey(h.Kind+"."+h.APIVersion)]; view != nil { // a kind the hook builds, filed elsewhere
		c, err := view(func(v any) error { return jsonv2.Unmarshal(raw, v, decodeOptions) })
		if err != nil {
			return requestError(err, fieldPath(at), raw)
		}
		w.child = c
	}
	w.child.Raw = json.RawMessage(raw)
	return nil
}

// check reports a child without apiVersion, kind or metadata.name, found at at.
func checkChild(c *sync.Child, at jsontext.Pointer) error {
	switch {
	case c.APIVersion == "":
		return &RequestError{Field: memberPath(fieldPath(at), "apiVersion"), Problem: "required"}
	case c.Kind == "":
		return &RequestError{Field: memberPath(fieldPath(at), "kind"), Problem: "required"}
	case c.Name == "":
		return &RequestError{Field: memberPath(fieldPath(at), "metadata.name"), Problem: "required"}
	}
	return nil
}

// wireHead is what every observed child must carry, whatever its kind.
type wireHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   *struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
}

// views are how each kind the hook builds (sync.Kind.Built) is read: a function that decodes an
// observed child of the kind into its identity and the view of it the decision reads. It is this
// package's table, beside sync.Kinds, so that the decision's table holds no decoder
// (TestViewsCoverBuiltKinds).
var views = map[*sync.Kind]func(decode func(any) error) (sync.Child, error){
	sync.DeploymentKind:       deploymentView,
	sync.ServiceKind:          identityView,
	sync.IngressKind:          ingressView,
	sync.DisruptionBudgetKind: identityView,
	sync.AutoscalerKind:       autoscalerView,
	sync.RouteKind:            routeView,
}

// Deployment reads a Deployment, as JSON, into the view the decision reads of an observed one
// (sync.ObservedDeployment), as DecodeRequest reads a request's: for one had another way
// (kubectl webapp reads it from the API server), so that both read it alike. A body that does
// not decode is a *RequestError naming the field.
func Deployment(body []byte) (*sync.ObservedDeployment, error) {
	c, err := deploymentView(func(v any) error { return jsonv2.Unmarshal(body, v, decodeOptions) })
	if err != nil {
		return nil, requestError(err, "", body)
	}
	return c.Deployment, nil
}

// deploymentView, ingressView, autoscalerView, routeView and identityView decode an observed child of a
// kind the hook builds (views) into its identity and view with decode, which decodes JSON
// into the value it is given. Members a view does not name are passed over unstored, whatever
// JSON they hold.
func deploymentView(decode func(any) error) (sync.Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Spec         deploymentSpecWire            `json:"spec"`
		Status       sync.ObservedDeploymentStatus `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Deployment = &sync.ObservedDeployment{
		Generation:        w.Metadata.Generation,
		SpecHash:          w.Metadata.Annotations.SpecHash,
		Replicas:          w.Spec.Replicas,
		Selector:          w.Spec.Selector,
		ConfigHash:        w.Spec.Template.Metadata.Annotations.ConfigHash,
		PartialConfigHash: w.Metadata.Annotations.PartialConfigHash,
		Revision:          w.Metadata.Annotations.Revision,
		Aborted:           w.Metadata.Annotations.Aborted,
		Promoting:         w.Metadata.Annotations.Promoting,
		Retries:           w.Metadata.Annotations.Retries,
		Attempt:           w.Metadata.Annotations.Attempt,
		Status:            w.Status,
	}
	return c, err
}

func ingressView(decode func(any) error) (sync.Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Spec         struct {
			Rules []networkingv1.IngressRule `json:"rules"`
			TLS   []networkingv1.IngressTLS  `json:"tls"`
		} `json:"spec"`
		Status struct {
			LoadBalancer struct {
				Ingress []networkingv1.IngressLoadBalancerIngress `json:"ingress"`
			} `json:"loadBalancer"`
		} `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Ingress = &sync.ObservedIngress{Rules: w.Spec.Rules, TLS: w.Spec.TLS, LoadBalancer: w.Status.LoadBalancer.Ingress}
	return c, err
}

func autoscalerView(decode func(any) error) (sync.Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Status       sync.ObservedAutoscaler `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Autoscaler = &w.Status
	return c, err
}

func routeView(decode func(any) error) (sync.Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Spec         struct {
			Hostnames  []gatewayv1.Hostname        `json:"hostnames"`
			ParentRefs []gatewayv1.ParentReference `json:"parentRefs"`
			Rules      []struct {
				Matches []struct {
					Path struct {
						Value string `json:"value"`
					} `json:"path"`
					Headers []gatewayv1.HTTPHeaderMatch `json:"headers"`
				} `json:"matches"`
				BackendRefs []sync.RouteBackend `json:"backendRefs"`
			} `json:"rules"`
		} `json:"spec"`
		Status struct {
			Parents []gatewayv1.RouteParentStatus `json:"parents"`
		} `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Route = &sync.ObservedRoute{Generation: w.Metadata.Generation, Hostnames: w.Spec.Hostnames, ParentRefs: w.Spec.ParentRefs, Parents: w.Status.Parents}
	if rules := w.Spec.Rules; len(rules) > 0 {
		if len(rules[0].Matches) > 0 {
			c.Route.Path = rules[0].Matches[0].Path.Value
		}
		c.Route.Backends = rules[len(rules)-1].BackendRefs
		if len(rules) > 1 { // a canary's header route, before the weighted rule
			h := &sync.RouteRule{Backends: rules[len(rules)-2].BackendRefs}
			for _, m := range rules[len(rules)-2].Matches {
				h.Matches = append(h.Matches, sync.RouteMatch{Path: m.Path.Value, Headers: m.Headers})
			}
			c.Route.HeaderRule = h
		}
	}
	return c, err
}

// identityView is the view of a kind of which the decision reads nothing but the identity: a
// Service or a PodDisruptionBudget.
func identityView(decode func(any) error) (sync.Child, error) {
	var w observedHead
	err := decode(&w)
	return w.child(), err
}

// observedHead is what the decision reads of every observed child of a kind the hook builds: its
// identity, and the annotation and generation a Deployment's view takes.
type observedHead struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string `json:"name"`
		Namespace   string `json:"namespace"`
		Generation  int64  `json:"generation"`
		Annotations struct {
			SpecHash          string `json:"webapp.example.com/spec-hash"`           // sync.AnnotationSpecHash
			PartialConfigHash string `json:"webapp.example.com/partial-config-hash"` // sync.AnnotationPartialConfigHash, on Deployments
			Revision          string `json:"webapp.example.com/revision"`            // canary.AnnotationRevision, on a canary Deployment
			Aborted           string `json:"webapp.example.com/aborted"`             // canary.AnnotationAborted, on an aborted canary Deployment
			Promoting         string `json:"webapp.example.com/promoting"`           // canary.AnnotationPromoting, on a canary Deployment being promoted
			Retries           string `json:"webapp.example.com/retries"`             // canary.AnnotationRetries, on a canary Deployment retried
			Attempt           string `json:"webapp.example.com/attempt"`             // canary.AnnotationAttempt, on a canary Deployment of an attempt other than 0
		} `json:"annotations"`
	} `json:"metadata"`
}

// child returns the child's identity, as a child of a kind the hook builds.
func (h *observedHead) child() sync.Child {
	return sync.Child{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace, Built: true}
}

// deploymentSpecWire is what the decision reads of a Deployment's spec.
type deploymentSpecWire struct {
	Replicas *int32                `json:"replicas"`
	Selector *metav1.LabelSelector `json:"selector"`
	Template struct {
		Metadata struct {
			Annotations struct {
				ConfigHash string `json:"webapp.example.com/config-hash"` // webappv1.AnnotationConfigHash
			} `json:"annotations"`
		} `json:"metadata"`
	} `json:"template"`
}
