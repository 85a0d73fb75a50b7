// Package policy tests the admission policy of metacontroller/base/policy.yaml as the apiserver
// runs it, offline: compiled by k8s.io/apiserver's own ValidatingAdmissionPolicy code, in the
// CEL environment of the Kubernetes version the policy needs, and evaluated on admission requests
// with an authorizer that answers as a test says and records what it is asked. The end-to-end
// suite (e2e TestPolicy, TestPolicyCanaryAnnotations) runs the same policy in a real apiserver
// with RBAC; this runs in a second, on every case.
package policy

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"
)

// policyFile is the policy, as kustomize and the Helm chart install it.
const policyFile = "../../metacontroller/base/policy.yaml"

// minimum is the oldest Kubernetes the policy is for (docs/security.md): its expressions must
// compile in the environment that version's apiserver checks a new policy with.
var minimum = version.MajorMinor(1, 33)

var (
	webApps = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "webapps"}
	webApp  = schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "WebApp"}
)

// load reads the ValidatingAdmissionPolicy of policyFile, its first document.
func load(t *testing.T) *admissionregistrationv1.ValidatingAdmissionPolicy {
	t.Helper()
	b, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	doc, _, _ := strings.Cut(string(b), "\n---\n")
	var p admissionregistrationv1.ValidatingAdmissionPolicy
	if err := yaml.UnmarshalStrict([]byte(doc), &p); err != nil {
		t.Fatalf("%s: %v", policyFile, err)
	}
	if p.Kind != "ValidatingAdmissionPolicy" {
		t.Fatalf("%s: the first document is a %s", policyFile, p.Kind)
	}
	return &p
}

// compile compiles p as the apiserver's ValidatingAdmissionPolicy plugin does (its
// compilePolicy), its expressions in mode: environment.NewExpressions checks them as a write of
// the policy is checked, environment.StoredExpressions as a stored policy is run.
func compile(p *admissionregistrationv1.ValidatingAdmissionPolicy, envs *environment.EnvSet, mode environment.Type) validating.Validator {
	withAuthz := cel.OptionalVariableDeclarations{HasAuthorizer: true}
	withoutAuthz := cel.OptionalVariableDeclarations{}
	compiler, err := cel.NewCompositedCompiler(envs)
	if err != nil {
		return validating.NewValidator(nil, nil, nil, nil, p.Spec.FailurePolicy, err)
	}
	var variables []cel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		variables = append(variables, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	compiler.CompileAndStoreVariables(variables, withAuthz, mode)
	var conditions []cel.ExpressionAccessor
	for i := range p.Spec.MatchConditions {
		conditions = append(conditions, (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]))
	}
	matcher := matchconditions.NewMatcher(compiler.CompileCondition(conditions, withAuthz, mode), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	validations := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	messages := make([]cel.ExpressionAccessor, len(p.Spec.Validations))
	for i, v := range p.Spec.Validations {
		validations[i] = &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason}
		if v.MessageExpression != "" {
			messages[i] = &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression}
		}
	}
	return validating.NewValidator(compiler.CompileCondition(validations, withAuthz, mode), matcher,
		compiler.CompileCondition(nil, withAuthz, mode), compiler.CompileCondition(messages, withoutAuthz, mode), p.Spec.FailurePolicy, nil)
}

// authz answers the policy's authorization checks: allowed holds what the user may do, as
// "verb resource" or "verb resource/name"; asked records every check.
type authz struct {
	allowed []string
	asked   []string
}

func (a *authz) Authorize(_ context.Context, attrs authorizer.Attributes) (authorizer.Decision, string, error) {
	what := attrs.GetVerb() + " " + attrs.GetResource()
	a.asked = append(a.asked, what+"/"+attrs.GetName())
	if slices.Contains(a.allowed, what) || slices.Contains(a.allowed, what+"/"+attrs.GetName()) {
		return authorizer.DecisionAllow, "", nil
	}
	return authorizer.DecisionNoOpinion, "", nil
}

// object is a WebApp of spec with annotations, as the apiserver hands it to a policy.
func object(spec map[string]any, annotations map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	u.SetGroupVersionKind(webApp)
	u.SetName("shop")
	u.SetNamespace("shop-prod")
	if annotations != nil {
		u.SetAnnotations(annotations)
	}
	return u
}

// admit runs the policy v on a write of object by alice (a create when old is nil, else an
// update of old), and returns the message of its refusal, "" when it lets the write in.
func admit(t *testing.T, v validating.Validator, a *authz, old, obj *unstructured.Unstructured) string {
	t.Helper()
	op := admission.Create
	var oldObj runtime.Object
	if old != nil {
		op, oldObj = admission.Update, old
	}
	attrs := admission.NewAttributesRecord(obj, oldObj, webApp, "shop-prod", "shop", webApps, "", op, nil, false, &user.DefaultInfo{Name: "alice"})
	va := &admission.VersionedAttributes{Attributes: attrs, VersionedKind: webApp, VersionedObject: admission.NewLazyObject(obj), VersionedOldObject: admission.NewLazyObject(oldObj)}
	ns := &corev1.Namespace{}
	ns.Name = "shop-prod"
	res := v.Validate(context.Background(), webApps, va, nil, ns, celconfig.RuntimeCELCostBudget, a)
	var refusals []string
	for _, d := range res.Decisions {
		switch d.Action {
		case validating.ActionAdmit:
		case validating.ActionDeny:
			refusals = append(refusals, d.Message)
		default:
			t.Fatalf("decision %+v", d)
		}
	}
	return strings.Join(refusals, "\n")
}

// TestPolicyCompiles: every expression of the policy compiles where the apiserver runs a stored
// policy, and, as a write of the policy is checked, in the environment of the oldest Kubernetes
// it is for.
func TestPolicyCompiles(t *testing.T) {
	p := load(t)
	for _, c := range []struct {
		name string
		envs *environment.EnvSet
		mode environment.Type
	}{
		{"stored, this apiserver", environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), environment.StoredExpressions},
		{fmt.Sprintf("written, Kubernetes %s", minimum), environment.MustBaseEnvSet(minimum), environment.NewExpressions},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := compile(p, c.envs, c.mode)
			if err := v.CompileError(); err != nil {
				t.Fatal(err)
			}
			// A compile error of one expression shows when it runs: run them all.
			spec := map[string]any{"image": "nginx"}
			if msg := admit(t, v, &authz{}, nil, object(spec, nil)); msg != "" {
				t.Errorf("a plain WebApp: %s", msg)
			}
		})
	}
}

// TestCanaryAnnotations: an update that changes a canary annotation is checked, its value
// against the form the hook reads, with a message that names the annotation; it asks the
// authorizer nothing, so that whoever may update a WebApp may promote or abort its canary; and
// the spec's checks still hold when the spec is written with it.
func TestCanaryAnnotations(t *testing.T) {
	v := compile(load(t), environment.MustBaseEnvSet(environment.DefaultCompatibilityVersion()), environment.StoredExpressions)
	spec := map[string]any{"image": "nginx:1.28", "rollout": map[string]any{"canary": map[string]any{"steps": []any{map[string]any{"weight": 10}}}}}
	secretSpec := map[string]any{"image": "nginx:1.29", "imagePullSecrets": []any{map[string]any{"name": "registry"}}}
	invalid := func(key, value, form string) string {
		return fmt.Sprintf(`metadata.annotations[%s]: Invalid value: "%s": must be %s`, key, value, form)
	}
	const (
		promote     = "webapp.example.com/promote"
		promoteStep = "webapp.example.com/promote-step"
		abort       = "webapp.example.com/abort"
		retry       = "webapp.example.com/retry"
	)
	tests := []struct {
		name     string
		old      map[string]string // the annotations before; nil for a create
		oldSpec  map[string]any    // the spec before, spec when nil
		spec     map[string]any    // the spec written, spec when nil
		new      map[string]string // the annotations written
		want     string            // the start of the refusal, "" to let it in
		wantAsks int               // the authorizer checks it makes
	}{
		{name: "promote", old: map[string]string{}, new: map[string]string{promote: "c138f6851b"}},
		{name: "promote of attempt 2", old: map[string]string{}, new: map[string]string{promote: "c138f6851b@2"}},
		{name: "abort, promote-step and retry together", old: map[string]string{"team": "shop"},
			new: map[string]string{"team": "shop", abort: "c138f6851b@1", promoteStep: "c138f6851b@1/2", retry: "c138f6851b"}},
		{name: "retry, in the form of the hook's earlier versions", old: map[string]string{}, new: map[string]string{retry: "c138f6851b/3"}},
		{name: "an annotation removed", old: map[string]string{promote: "c138f6851b"}, new: map[string]string{}},
		{name: "a malformed value left as it was, beside a new label", old: map[string]string{promote: "latest!"}, new: map[string]string{promote: "latest!", "team": "shop"}},
		{name: "a malformed value left as it was, the image changed", old: map[string]string{promote: "latest!"}, spec: map[string]any{"image": "nginx:1.29"}, new: map[string]string{promote: "latest!"}},

		{name: "refused: promote with a step", old: map[string]string{}, new: map[string]string{promote: "c138f6851b/1"},
			want: invalid(promote, "c138f6851b/1", "<revision>[@<attempt>], as status.canary.revision and status.canary.attempt name the canary")},
		{name: "refused: an empty abort", old: map[string]string{}, new: map[string]string{abort: ""},
			want: invalid(abort, "", "<revision>[@<attempt>]")},
		{name: "refused: an abort in capitals", old: map[string]string{abort: "c138f6851b"}, new: map[string]string{abort: "C138F6851B"},
			want: invalid(abort, "C138F6851B", "<revision>[@<attempt>]")},
		{name: "refused: a promote-step without its step", old: map[string]string{}, new: map[string]string{promoteStep: "c138f6851b"},
			want: invalid(promoteStep, "c138f6851b", "<revision>[@<attempt>]/<step>, as status.canary.revision, status.canary.attempt and status.canary.step name the step")},
		{name: "refused: an attempt of 8 digits", old: map[string]string{}, new: map[string]string{promoteStep: "c138f6851b@10000000/1"},
			want: invalid(promoteStep, "c138f6851b@10000000/1", "<revision>[@<attempt>]/<step>")},
		{name: "refused: retry /0", old: map[string]string{}, new: map[string]string{retry: "c138f6851b/0"},
			want: invalid(retry, "c138f6851b/0", "<revision>[@<attempt>] or <revision>/<n>, n from 1")},
		{name: "refused: retry of an attempt with a count", old: map[string]string{}, new: map[string]string{retry: "c138f6851b@1/2"},
			want: invalid(retry, "c138f6851b@1/2", "<revision>[@<attempt>] or <revision>/<n>")},
		{name: "refused: a long value is quoted cut", old: map[string]string{}, new: map[string]string{promote: strings.Repeat("a", 100)},
			want: invalid(promote, strings.Repeat("a", 80)+"…", "<revision>[@<attempt>]")},
		{name: "a create with a promote", new: map[string]string{promote: "c138f6851b"}},
		{name: "refused on create: a malformed promote", new: map[string]string{promote: "next!"},
			want: invalid(promote, "next!", "<revision>[@<attempt>]")},
		{name: "the spec written with a promote: the spec is checked as ever", old: map[string]string{}, spec: secretSpec, new: map[string]string{promote: "c138f6851b"},
			want: `spec.imagePullSecrets[0].name: user "alice" may not get secret "registry" in namespace "shop-prod"; a WebApp may reference only Secrets its author can read`, wantAsks: 3},
		{name: "a WebApp alice may not write the spec of: she may still promote it", old: map[string]string{}, oldSpec: secretSpec, spec: secretSpec, new: map[string]string{promote: "c138f6851b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			written, was := spec, spec
			if tt.spec != nil {
				written = tt.spec
			}
			if tt.oldSpec != nil {
				was = tt.oldSpec
			}
			var old *unstructured.Unstructured
			if tt.old != nil {
				old = object(was, tt.old)
			}
			a := &authz{}
			got := admit(t, v, a, old, object(written, tt.new))
			if !strings.HasPrefix(got, tt.want) || (got == "") != (tt.want == "") {
				t.Errorf("refusal %q; want it to start %q", got, tt.want)
			}
			if len(a.asked) != tt.wantAsks {
				t.Errorf("authorizer asked %q; want %d checks", a.asked, tt.wantAsks)
			}
		})
	}
}
