// Package multikueue renders what a fleet's manager holds once for the whole
// fleet (Kueue's MultiKueue): the AdmissionCheck every team ClusterQueue on
// the manager requires (the kueue family puts it there, from the plan's
// AdmissionChecks), the MultiKueueConfig listing the workers, and one
// MultiKueueCluster per worker naming the Secret that holds its kubeconfig.
// It renders nothing for any other plan: a worker, or an agreement of one
// cluster. Secrets are never rendered: they hold credentials.
package multikueue

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueue "sigs.k8s.io/kueue/apis/kueue/v1beta2"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/kueueapi"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
)

// Family renders a fleet manager's MultiKueue objects for one Kueue API
// version ("v1beta2" or "v1beta1").
type Family struct {
	APIVersion string
}

// Check has nothing to say: the fleet's rules are the agreement's
// (validate) and the split's (plan.CheckFleet).
func (Family) Check(*plan.Agreement) diag.List { return nil }

// Render returns the manager's MultiKueue objects; nothing for other plans.
func (f Family) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	if !p.IsManager() {
		return nil, nil
	}
	typed := typedObjects(p)
	if f.APIVersion == "v1beta1" {
		var err error
		if typed, err = kueueapi.ToV1beta1(typed); err != nil {
			return nil, internal(p, err)
		}
		for _, o := range typed {
			// v1beta1's deprecated retryDelayMinutes has a default the
			// API server writes (15); written out, the object read back
			// equals the object rendered and Argo CD sees no drift.
			//lint:ignore SA1019 the field is deprecated, but the v1beta1 API server still defaults it
			if ac, ok := o.(*kueuev1beta1.AdmissionCheck); ok && ac.Spec.RetryDelayMinutes == nil {
				//lint:ignore SA1019 as above: written out so the object read back equals the render
				ac.Spec.RetryDelayMinutes = ptr.To(int64(15))
			}
		}
	}
	objs, err := render.Objects(typed)
	if err != nil {
		return nil, internal(p, err)
	}
	return objs, nil
}

func internal(p *plan.Agreement, err error) diag.List {
	return diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "multikueue: " + err.Error()}}
}

// typedObjects builds the manager's objects in Kueue's v1beta2 Go types:
// the AdmissionCheck and its MultiKueueConfig, named after the pool
// (plan.Fleet.AdmissionCheck), and a MultiKueueCluster per worker, named
// after it, as the MultiKueueConfig lists it.
func typedObjects(p *plan.Agreement) []runtime.Object {
	fleet := p.Fleet
	check := &kueue.AdmissionCheck{
		ObjectMeta: render.Meta(p.Name, "", fleet.AdmissionCheck, ""),
		Spec: kueue.AdmissionCheckSpec{
			ControllerName: kueue.MultiKueueControllerName,
			Parameters: &kueue.AdmissionCheckParametersReference{
				APIGroup: kueue.GroupVersion.Group, Kind: "MultiKueueConfig", Name: fleet.AdmissionCheck,
			},
		},
	}
	check.APIVersion, check.Kind = kueue.GroupVersion.String(), "AdmissionCheck"
	config := &kueue.MultiKueueConfig{ObjectMeta: render.Meta(p.Name, "", fleet.AdmissionCheck, "")}
	config.APIVersion, config.Kind = kueue.GroupVersion.String(), "MultiKueueConfig"
	objs := []runtime.Object{check, config}
	for _, w := range fleet.Workers {
		config.Spec.Clusters = append(config.Spec.Clusters, w.Name)
		c := &kueue.MultiKueueCluster{
			ObjectMeta: render.Meta(p.Name, "", w.Name, ""),
			Spec: kueue.MultiKueueClusterSpec{ClusterSource: kueue.ClusterSource{
				KubeConfig: &kueue.KubeConfig{Location: w.KubeconfigSecret, LocationType: kueue.SecretLocationType},
			}},
		}
		c.APIVersion, c.Kind = kueue.GroupVersion.String(), "MultiKueueCluster"
		objs = append(objs, c)
	}
	return objs
}
