package crdcheck

import (
	"testing"

	"sigs.k8s.io/yaml"
)

// Named is how a rendered object is named in messages.
type Named interface {
	Kind() string
	Namespace() string
	Name() string
}

// Strict decodes an object's YAML into its Go type the way the API server's
// strict field validation does for a kind with Go types (built-in kinds,
// Kueue's): an unknown or duplicate field is an error, reported on t
// naming the object. It returns whether the object decoded.
func Strict(t testing.TB, o Named, data []byte, into any) bool {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Errorf("%s %s/%s does not decode strictly into %T: %v", o.Kind(), o.Namespace(), o.Name(), into, err)
		return false
	}
	return true
}
