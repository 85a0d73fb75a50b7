package sync

import (
	"os"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type vCond struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}
type vDep struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name        string `json:"name"`
		Namespace   string `json:"namespace"`
		Generation  int64  `json:"generation"`
		Annotations struct {
			SpecHash string `json:"webapp.example.com/spec-hash"`
		} `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		Replicas *int32                `json:"replicas"`
		Selector *metav1.LabelSelector `json:"selector"`
		Template struct {
			Metadata struct {
				Annotations struct {
					ConfigHash string `json:"webapp.example.com/config-hash"`
				} `json:"annotations"`
			} `json:"metadata"`
		} `json:"template"`
	} `json:"spec"`
	Status struct {
		ObservedGeneration  int64   `json:"observedGeneration"`
		Replicas            int32   `json:"replicas"`
		UpdatedReplicas     int32   `json:"updatedReplicas"`
		ReadyReplicas       int32   `json:"readyReplicas"`
		AvailableReplicas   int32   `json:"availableReplicas"`
		TerminatingReplicas *int32  `json:"terminatingReplicas"`
		Conditions          []vCond `json:"conditions"`
	} `json:"status"`
}

func BenchmarkScratch(b *testing.B) {
	body, _ := os.ReadFile("../../shared/fixtures/metacontroller-4.17.2/v1/03-three-available.sync.json")
	var m struct {
		Children map[string]map[string]jsontext.Value `json:"children"`
	}
	jsonv2.Unmarshal(body, &m)
	d := m.Children["Deployment.apps/v1"]["hello"]
	opts := jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true))
	b.Run("full", func(b *testing.B) {
		for b.Loop() {
			var x appsv1.Deployment
			jsonv2.Unmarshal(d, &x, decodeOptions)
		}
	})
	b.Run("view", func(b *testing.B) {
		for b.Loop() {
			var x vDep
			jsonv2.Unmarshal(d, &x, opts)
		}
	})
	b.Run("skip", func(b *testing.B) {
		for b.Loop() {
			var x struct{}
			jsonv2.Unmarshal(d, &x, opts)
		}
	})
}
