package validate

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/agreement"
)

// kai checks [kai] and the flavors' node_pool and gpu_sharing: names
// Kubernetes accepts as a label key and a label value, and sharing values
// tenancy knows. They are the format's rules, so they hold for every
// backend, though only a render for KAI reads the keys.
func (v *validator) kai() {
	if k := v.a.KAI; k != nil {
		if k.NodePoolLabel.IsSet() {
			for _, msg := range validation.IsQualifiedName(k.NodePoolLabel.Value) {
				v.errorf(field.ErrorTypeInvalid, k.NodePoolLabel.Pos, k.NodePoolLabel.Path, "%q is not a valid label key: %s", k.NodePoolLabel.Value, msg)
			}
		}
		v.gpuSharing(k.GPUSharing)
	}
	for _, f := range v.a.Flavors {
		if f.NodePool.IsSet() {
			pool := f.NodePool.Value
			msgs := validation.IsValidLabelValue(pool)
			if pool == "" {
				msgs = append(msgs, "must not be empty: a node pool is the Nodes that carry the label with this value")
			}
			for _, msg := range msgs {
				v.errorf(field.ErrorTypeInvalid, f.NodePool.Pos, f.NodePool.Path, "%q is not a valid label value: %s", pool, msg)
			}
		}
		if f.GPUSharing.IsSet() {
			v.gpuSharing(f.GPUSharing)
		}
	}
}

// gpuSharing refuses a gpu_sharing value tenancy does not know.
func (v *validator) gpuSharing(s agreement.Str) {
	if !s.IsSet() || slices.Contains(agreement.GPUSharingValues, s.Value) {
		return
	}
	quoted := make([]string, len(agreement.GPUSharingValues))
	for i, x := range agreement.GPUSharingValues {
		quoted[i] = fmt.Sprintf("%q", x)
	}
	v.errorf(field.ErrorTypeNotSupported, s.Pos, s.Path, "unknown GPU sharing %q: must be %s", s.Value, strings.Join(quoted, " or "))
}
