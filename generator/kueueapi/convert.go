// Package kueueapi converts Kueue objects built in Kueue's v1beta2 Go types
// to v1beta1 with Kueue's own conversion functions, for the families that
// render Kueue objects (render/kueue, render/multikueue) when a cluster runs
// Kueue 0.15 or older.
package kueueapi

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"
)

// conversionScheme holds both Kueue API versions with the conversion
// functions Kueue generates and registers for them (v1beta1's
// RegisterConversions, through its AddToScheme), as Kueue's own manager
// scheme does. It is built on the first v1beta1 rendering only: a v1beta2
// rendering, the default, does not pay for it.
var conversionScheme = sync.OnceValues(func() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := kueue.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := kueuev1beta1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
})

// ToV1beta1 converts the Kueue objects to kueue.x-k8s.io/v1beta1 with the
// scheme's conversion functions, the ones Kueue's conversion webhook runs,
// so the older API says the same thing. Objects of other APIs pass
// unchanged.
func ToV1beta1(objs []runtime.Object) ([]runtime.Object, error) {
	scheme, err := conversionScheme()
	if err != nil {
		return nil, fmt.Errorf("register Kueue's API versions: %w", err)
	}
	out := make([]runtime.Object, 0, len(objs))
	for _, o := range objs {
		gvk := o.GetObjectKind().GroupVersionKind()
		if gvk.GroupVersion() != kueue.GroupVersion {
			out = append(out, o)
			continue
		}
		target := kueuev1beta1.GroupVersion.WithKind(gvk.Kind)
		conv, err := scheme.New(target)
		if err == nil {
			err = scheme.Convert(o, conv, nil)
		}
		if err != nil {
			return nil, fmt.Errorf("convert %s to %s: %w", gvk.Kind, kueuev1beta1.GroupVersion, err)
		}
		// The conversion functions convert metadata and spec, not TypeMeta.
		conv.GetObjectKind().SetGroupVersionKind(target)
		out = append(out, conv)
	}
	return out, nil
}
