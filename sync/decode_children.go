package sync

import (
	"encoding/json"
	"fmt"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// wireChild decodes one observed child where it stands in the request.
//
// Metacontroller files each child under its own type, "Kind.apiVersion", so a child filed under
// a kind the hook builds is decoded straight from the request into that kind's view (request.go),
// in the one pass that reads the request, and must be of that kind; its Raw is then cut from the
// body by DecodeRequest, from the offsets recorded here. Any other child is read whole, kept as
// Raw, and decoded by what it says it is.
type wireChild struct {
	child Child
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
	if k := kindByKey(group); k != nil && k.Built {
		w.start = dec.InputOffset()
		c, err := k.view(func(v any) error { return jsonv2.UnmarshalDecode(dec, v, decodeOptions) })
		if err != nil {
			return err
		}
		w.end = dec.InputOffset()
		if err := c.check(at); err != nil {
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
	w.child = Child{APIVersion: h.APIVersion, Kind: h.Kind}
	if h.Metadata != nil {
		w.child.Name, w.child.Namespace = h.Metadata.Name, h.Metadata.Namespace
	}
	if err := w.child.check(at); err != nil {
		return err
	}
	if k := kindByKey(h.Kind + "." + h.APIVersion); k != nil && k.Built { // a kind the hook builds, filed elsewhere
		c, err := k.view(func(v any) error { return jsonv2.Unmarshal(raw, v, decodeOptions) })
		if err != nil {
			return requestError(err, fieldPath(at), raw)
		}
		w.child = c
	}
	w.child.Raw = json.RawMessage(raw)
	return nil
}

// check reports a child without apiVersion, kind or metadata.name, found at at.
func (c *Child) check(at jsontext.Pointer) error {
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

// deploymentView, ingressView, autoscalerView, routeView and identityView decode an observed child of a
// kind the hook builds (Kind.view) into its identity and view with decode, which decodes JSON
// into the value it is given. Members a view does not name are passed over unstored, whatever
// JSON they hold.
func deploymentView(decode func(any) error) (Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Spec         deploymentSpecWire       `json:"spec"`
		Status       ObservedDeploymentStatus `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Deployment = &ObservedDeployment{
		Generation:        w.Metadata.Generation,
		SpecHash:          w.Metadata.Annotations.SpecHash,
		Replicas:          w.Spec.Replicas,
		Selector:          w.Spec.Selector,
		ConfigHash:        w.Spec.Template.Metadata.Annotations.ConfigHash,
		PartialConfigHash: w.Metadata.Annotations.PartialConfigHash,
		Status:            w.Status,
	}
	return c, err
}

func ingressView(decode func(any) error) (Child, error) {
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
	c.Ingress = &ObservedIngress{Rules: w.Spec.Rules, TLS: w.Spec.TLS, LoadBalancer: w.Status.LoadBalancer.Ingress}
	return c, err
}

func autoscalerView(decode func(any) error) (Child, error) {
	var w struct {
		observedHead `json:",inline"`
		Status       ObservedAutoscaler `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Autoscaler = &w.Status
	return c, err
}

func routeView(decode func(any) error) (Child, error) {
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
				} `json:"matches"`
			} `json:"rules"`
		} `json:"spec"`
		Status struct {
			Parents []gatewayv1.RouteParentStatus `json:"parents"`
		} `json:"status"`
	}
	err := decode(&w)
	c := w.child()
	c.Route = &ObservedRoute{Generation: w.Metadata.Generation, Hostnames: w.Spec.Hostnames, ParentRefs: w.Spec.ParentRefs, Parents: w.Status.Parents}
	if rules := w.Spec.Rules; len(rules) > 0 && len(rules[0].Matches) > 0 {
		c.Route.Path = rules[0].Matches[0].Path.Value
	}
	return c, err
}

// identityView is the view of a kind of which the decision reads nothing but the identity: a
// Service or a PodDisruptionBudget.
func identityView(decode func(any) error) (Child, error) {
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
			SpecHash          string `json:"webapp.example.com/spec-hash"`           // AnnotationSpecHash
			PartialConfigHash string `json:"webapp.example.com/partial-config-hash"` // AnnotationPartialConfigHash, on Deployments
		} `json:"annotations"`
	} `json:"metadata"`
}

// child returns the child's identity, as a child of a kind the hook builds.
func (h *observedHead) child() Child {
	return Child{APIVersion: h.APIVersion, Kind: h.Kind, Name: h.Metadata.Name, Namespace: h.Metadata.Namespace, Built: true}
}

// deploymentSpecWire is what the decision reads of a Deployment's spec.
type deploymentSpecWire struct {
	Replicas *int32                `json:"replicas"`
	Selector *metav1.LabelSelector `json:"selector"`
	Template struct {
		Metadata struct {
			Annotations struct {
				ConfigHash string `json:"webapp.example.com/config-hash"` // AnnotationConfigHash
			} `json:"annotations"`
		} `json:"metadata"`
	} `json:"template"`
}
