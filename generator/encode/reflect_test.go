package encode

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
)

// throughJSON is the definition fromGo must meet: json.Marshal, then a
// json.Decoder with UseNumber.
func throughJSON(t *testing.T, body any) map[string]any {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatalf("json.Marshal: %v", err)
	}
	want, err := decodeWithEncodingJSON(t, data)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return want
}

// A plan that exercises every field the Kueue backend sets.
func everyFeature() *plan.Agreement {
	vms := int64(2)
	return &plan.Agreement{
		Name: "gpu-pool",
		Flavors: []plan.Flavor{
			{Name: "h100", Resource: "nvidia.com/gpu", Capacity: 32, NodeLabels: map[string]string{"gpu": "h100"},
				Tolerations: []plan.Toleration{{Key: "nvidia.com/gpu", Operator: "Exists", Effect: "NoSchedule"}}},
			{Name: "mig", Resource: "nvidia.com/mig-1g.10gb", Capacity: 7},
		},
		Priorities: []plan.Priority{{Name: "critical", Value: 1000}, {Name: "low", Value: -5}},
		Teams: []plan.Team{
			{Name: "training", Namespaces: []string{"training", "training-dev"}, Reclaim: plan.ReclaimWait, Weight: 3, VMs: &vms,
				Quotas: []plan.Quota{{Flavor: "h100", Guaranteed: 16, Lendable: 8, Borrow: 8}, {Flavor: "mig", Guaranteed: 7}}},
			{Name: "research", Namespaces: []string{"research"}, Reclaim: plan.ReclaimPreempt, Weight: 1,
				Quotas: []plan.Quota{{Flavor: "h100", Guaranteed: 16, Lendable: 16}, {Flavor: "mig"}}},
		},
		Topology: &plan.Topology{Name: "gpu-pool", Levels: []string{"topology.kubernetes.io/zone", "kubernetes.io/hostname"}},
	}
}

func TestFromGoEqualsJSONForKueueObjects(t *testing.T) {
	for _, api := range []string{"v1beta2", "v1beta1"} {
		objs, err := kueue.Render(everyFeature(), api)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if _, isMap := o.Body.(map[string]any); isMap {
				continue
			}
			t.Run(api+"/"+o.Kind+"/"+o.Namespace+"/"+o.Name, func(t *testing.T) {
				got, ok := fromGo(o.Body, newInterner())
				if !ok {
					t.Fatalf("fromGo does not convert %T: every Kueue object would take the slow JSON route", o.Body)
				}
				if diff := cmp.Diff(throughJSON(t, o.Body), got); diff != "" {
					t.Errorf("fromGo (-want,+got):\n%s", diff)
				}
			})
		}
	}
}

// Types with the shapes encoding/json treats specially.

type valueZeroer struct{ N int }

func (z valueZeroer) IsZero() bool { return z.N < 0 }

type pointerZeroer struct{ N int }

func (z *pointerZeroer) IsZero() bool { return z.N < 0 }

type pointerMarshaler struct{ N int }

func (m *pointerMarshaler) MarshalJSON() ([]byte, error) { return []byte(`{"wrapped": 1}`), nil }

type failingMarshaler struct{}

func (failingMarshaler) MarshalJSON() ([]byte, error) { return nil, errors.New("no") }

type Inner struct {
	InnerName string `json:"innerName"`
	Hidden    string `json:"-"`
	Dash      string `json:"-,"`
}

type Named string

type shapes struct {
	metav1.TypeMeta `json:",inline"`
	*Inner
	Untagged       string
	unexported     string
	Named          Named                        `json:"named"`
	Uint           uint16                       `json:"uint"`
	Int8           int8                         `json:"int8"`
	Bool           bool                         `json:"bool"`
	EmptyString    string                       `json:"emptyString,omitempty"`
	EmptySlice     []string                     `json:"emptySlice,omitempty"`
	NilSlice       []string                     `json:"nilSlice"`
	NonNilEmpty    []string                     `json:"nonNilEmpty"`
	NilMap         map[string]string            `json:"nilMap"`
	EmptyMap       map[string]int               `json:"emptyMap"`
	NilPointer     *int                         `json:"nilPointer"`
	OmitPointer    *int                         `json:"omitPointer,omitempty"`
	ZeroStruct     metav1.Time                  `json:"zeroStruct,omitempty,omitzero"`
	KeptStruct     metav1.Time                  `json:"keptStruct"`
	ValueZero      valueZeroer                  `json:"valueZero,omitzero"`
	PointerZero    pointerZeroer                `json:"pointerZero,omitzero"`
	PointerZeroPtr *pointerZeroer               `json:"pointerZeroPtr,omitzero"`
	Any            any                          `json:"any"`
	NilAny         any                          `json:"nilAny"`
	Array          [2]int32                     `json:"array"`
	Nested         [][]string                   `json:"nested"`
	Quantities     map[string]resource.Quantity `json:"quantities"`
	IntOrString    intstr.IntOrString           `json:"intOrString"`
	Duration       metav1.Duration              `json:"duration"`
	AddrMarshaler  pointerMarshaler             `json:"addrMarshaler"`
	MapOfPointerM  map[string]pointerMarshaler  `json:"mapOfPointerMarshaler"`
	Unicode        string                       `json:"unicode"`
	HTML           string                       `json:"html"`
}

func TestFromGoEqualsJSONForShapes(t *testing.T) {
	zero := 0
	s := &shapes{
		TypeMeta:       metav1.TypeMeta{APIVersion: "v1", Kind: "Shape"},
		Inner:          &Inner{InnerName: "inner", Hidden: "x", Dash: "dash"},
		Untagged:       "u",
		unexported:     "never",
		Named:          "named",
		Uint:           65535,
		Int8:           -128,
		NonNilEmpty:    []string{},
		EmptyMap:       map[string]int{},
		OmitPointer:    &zero,
		KeptStruct:     metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
		ValueZero:      valueZeroer{N: -1},
		PointerZero:    pointerZeroer{N: 1},
		PointerZeroPtr: &pointerZeroer{N: -1},
		Any:            map[string]any{"k": []any{1, "two", nil, true}},
		Array:          [2]int32{1, -1},
		Nested:         [][]string{{"a"}, nil, {}},
		Quantities:     map[string]resource.Quantity{"cpu": resource.MustParse("1500m"), "memory": resource.MustParse("100Ti")},
		IntOrString:    intstr.FromString("50%"),
		Duration:       metav1.Duration{Duration: time.Minute},
		MapOfPointerM:  map[string]pointerMarshaler{"a": {N: 1}},
		Unicode:        "ünïcode ✓ \u2028",
		HTML:           "<a href=\"x\">&</a>",
	}
	for name, body := range map[string]any{
		"pointer":         s,
		"value":           *s,
		"nil embedded":    &shapes{},
		"resource quota":  &corev1.ResourceQuota{Spec: corev1.ResourceQuotaSpec{Hard: corev1.ResourceList{"count/x": resource.MustParse("2")}}},
		"label selector":  &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "In", Values: []string{"a"}}}},
		"object meta":     &metav1.ObjectMeta{Name: "n", Labels: map[string]string{"a": "b"}},
		"map body in any": &struct{ M any }{M: map[string]string{"a": "b"}},
	} {
		t.Run(name, func(t *testing.T) {
			got, ok := fromGo(body, newInterner())
			if !ok {
				t.Fatalf("fromGo does not convert %T", body)
			}
			if diff := cmp.Diff(throughJSON(t, body), got); diff != "" {
				t.Errorf("fromGo (-want,+got):\n%s", diff)
			}
		})
	}
}

type clash struct {
	Inner
	InnerName string `json:"innerName"`
}

type unexportedEmbed struct {
	inner
}

type inner struct{ A string }

type textKey struct{ T time.Time }

// TestFromGoDeclines lists shapes fromGo leaves to encoding/json; toFields
// must still give encoding/json's result for them.
func TestFromGoDeclines(t *testing.T) {
	for name, body := range map[string]any{
		"float": &struct{ F float64 }{F: 1.5},
		"bytes": &struct{ B []byte }{B: []byte("hi")},
		"string option": &struct {
			N int `json:"n,string"`
		}{N: 3},
		"invalid utf-8":          &struct{ S string }{S: "a\xffb"},
		"invalid utf-8 key":      &struct{ M map[string]int }{M: map[string]int{"a\xff": 1}},
		"clashing names":         &clash{Inner: Inner{InnerName: "deep"}, InnerName: "shallow"},
		"unexported embed":       &unexportedEmbed{inner{A: "a"}},
		"int map keys":           &struct{ M map[int]string }{M: map[int]string{1: "a"}},
		"failing marshaler":      &struct{ F failingMarshaler }{},
		"text marshaler":         &struct{ T textKey }{},
		"not an object":          []string{"a"},
		"interface with methods": &struct{ E error }{},
	} {
		t.Run(name, func(t *testing.T) {
			if got, ok := fromGo(body, newInterner()); ok {
				// Declining is only required where the result could differ;
				// converting is fine when it matches.
				if diff := cmp.Diff(throughJSONOrNil(body), got); diff != "" {
					t.Errorf("fromGo converted %T differently from encoding/json (-want,+got):\n%s", body, diff)
				}
			}
			want, wantErr := toFieldsThroughJSON(body)
			got, err := toFields(body, newInterner())
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("toFields error = %v, want %v", err, wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("toFields (-want,+got):\n%s", diff)
			}
		})
	}
}

func throughJSONOrNil(body any) map[string]any {
	fields, _ := toFieldsThroughJSON(body)
	return fields
}

// toFieldsThroughJSON is toFields as it was before fromGo.
func toFieldsThroughJSON(body any) (map[string]any, error) {
	data, err := json.Marshal(body)
	if err != nil {
		return nil, err
	}
	var fields map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	delete(fields, "status")
	if meta, ok := fields["metadata"].(map[string]any); ok {
		delete(meta, "creationTimestamp")
	}
	return fields, nil
}
