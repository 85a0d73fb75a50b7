package sync

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"sort"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// wireRelated decodes one related object by the kind it is filed under, keeping only what the
// decision reads; objects of other kinds are skipped.
type wireRelated struct {
	pod       *RelatedPod
	config    *ConfigRef
	digest    string
	gateway   *RelatedGateway
	namespace string
}

// UnmarshalJSONFrom implements json/v2's UnmarshalerFrom. A ConfigMap's or Secret's data is read
// as raw JSON and digested at once: it is never interpreted, so no value of it can appear in an
// error, and never stored.
func (w *wireRelated) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	*w = wireRelated{}
	at := dec.StackPointer()
	if k := dec.PeekKind(); k != '{' {
		return &RequestError{Field: fieldPath(at), Problem: "expected object, got JSON " + kindName(k)}
	}
	switch k := kindByKey(at.Parent().LastToken()); k {
	case PodKind:
		var p struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				Containers []struct {
					Name  string `json:"name"`
					Image string `json:"image"`
				} `json:"containers"`
			} `json:"spec"`
			Status corev1.PodStatus `json:"status"`
		}
		if err := jsonv2.UnmarshalDecode(dec, &p, decodeOptions); err != nil {
			return err
		}
		w.pod = &RelatedPod{ObjectMeta: p.Metadata, Images: map[string]string{}, Status: p.Status}
		for _, c := range p.Spec.Containers {
			w.pod.Images[c.Name] = c.Image
		}
		w.namespace = p.Metadata.Namespace
	case ConfigMapKind, SecretKind:
		var c struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
				UID       string `json:"uid"`
			} `json:"metadata"`
			Data       jsontext.Value `json:"data"`
			BinaryData jsontext.Value `json:"binaryData"`
		}
		if err := jsonv2.UnmarshalDecode(dec, &c); err != nil {
			return err
		}
		w.config = &ConfigRef{Kind: k.Kind, Name: c.Metadata.Name}
		w.digest = configDigest(c.Metadata.UID, c.Data, c.BinaryData)
		w.namespace = c.Metadata.Namespace
	case GatewayKind:
		var g struct {
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Spec struct {
				Listeners []RelatedListener `json:"listeners"`
			} `json:"spec"`
		}
		if err := jsonv2.UnmarshalDecode(dec, &g, decodeOptions); err != nil {
			return err
		}
		w.gateway = &RelatedGateway{Namespace: g.Metadata.Namespace, Name: g.Metadata.Name, Listeners: g.Spec.Listeners}
		w.namespace = g.Metadata.Namespace
	default:
		return dec.SkipValue()
	}
	return nil
}

// configDigest is a digest of a ConfigMap's or Secret's data that tells nothing about the data to
// someone who cannot read the object: HMAC-SHA256 keyed with the object's uid, which the apiserver
// makes at random and shows only to those who can read the object (and so its data anyway). A
// plain hash would let anyone who can read the Deployment test guesses of a short secret value.
// The data is canonicalized (RFC 8785) first, so only a change of data changes the digest: a new
// label or annotation does not. A new object under the same name has a new uid, and so a new
// digest.
func configDigest(uid string, data ...jsontext.Value) string {
	mac := hmac.New(sha256.New, []byte(uid))
	for _, d := range data {
		c := d.Clone()
		if len(c) == 0 || c.Canonicalize() != nil {
			c = jsontext.Value("null")
		}
		mac.Write(c)
		mac.Write([]byte{0})
	}
	return hex.EncodeToString(mac.Sum(nil))
}

// related collects the related objects, sorted: the pods, ConfigMaps and Secrets of the parent's
// namespace, and the Gateways of any (Related).
func related(groups map[string]map[string]wireRelated, namespace string) Related {
	r := Related{Kinds: map[string]bool{}, Config: map[ConfigRef]string{}}
	for group, objects := range groups {
		r.Kinds[group] = true
		for _, w := range objects {
			if w.namespace != "" && w.namespace != namespace && w.gateway == nil {
				continue
			}
			switch {
			case w.pod != nil:
				r.Pods = append(r.Pods, *w.pod)
			case w.config != nil:
				r.Config[*w.config] = w.digest
			case w.gateway != nil:
				r.Gateways = append(r.Gateways, *w.gateway)
			}
		}
	}
	sort.Slice(r.Pods, func(i, j int) bool { return r.Pods[i].Name < r.Pods[j].Name })
	sort.Slice(r.Gateways, func(i, j int) bool {
		a, b := r.Gateways[i], r.Gateways[j]
		return a.Namespace < b.Namespace || a.Namespace == b.Namespace && a.Name < b.Name
	})
	return r
}
