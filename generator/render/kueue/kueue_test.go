package kueue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	kueuev1beta1 "sigs.k8s.io/kueue/apis/kueue/v1beta1"
	kueuev1beta2 "sigs.k8s.io/kueue/apis/kueue/v1beta2"
	"sigs.k8s.io/kueue/pkg/webhooks"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/crdcheck"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/generator/internal/plantest"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/render/kueue"
	"github.com/tenancy-dev/tenancy/generator/render/namespaces"
)

func renderV1beta2(t *testing.T, p *plan.Agreement) []render.Object {
	t.Helper()
	objs, diags := kueue.Renderer{APIVersion: generator.KueueV1beta2}.Render(p)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	return objs
}

// typed reads a rendered object back into its Go type, as the API server's
// decoder would.
func typed[T any](t *testing.T, o render.Object) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Fields, out); err != nil {
		t.Fatalf("%s %s: %v", o.Kind(), o.Name(), err)
	}
	return out
}

// byName returns the objects of one kind, typed, by name.
func byName[T any](t *testing.T, objs []render.Object, kind string) map[string]*T {
	t.Helper()
	out := map[string]*T{}
	for _, o := range objs {
		if o.Kind() == kind {
			out[o.Name()] = typed[T](t, o)
		}
	}
	return out
}

func clusterQueues(t *testing.T, objs []render.Object) map[string]*kueuev1beta2.ClusterQueue {
	t.Helper()
	return byName[kueuev1beta2.ClusterQueue](t, objs, "ClusterQueue")
}

// quotaTable summarises a ClusterQueue's quotas as
// "flavor/resource" → "nominal/lendingLimit/borrowingLimit".
func quotaTable(cq *kueuev1beta2.ClusterQueue) map[string]string {
	out := map[string]string{}
	str := func(q *resource.Quantity) string {
		if q == nil {
			return "nil"
		}
		return q.String()
	}
	for _, g := range cq.Spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				nominal := r.NominalQuota
				out[string(f.Name)+"/"+string(r.Name)] = str(&nominal) + "/" + str(r.LendingLimit) + "/" + str(r.BorrowingLimit)
			}
		}
	}
	return out
}

func TestClusterQueueQuotas(t *testing.T) {
	// cpu and memory are covered with a quota no cluster reaches and never
	// lent or borrowed, so they never decide admission (see kueue.go).
	cpuMem := map[string]string{}
	for _, f := range []string{"h100", "a100-mig"} {
		cpuMem[f+"/cpu"] = "100k/0/0"
		cpuMem[f+"/memory"] = "100Ti/0/0"
	}
	with := func(m map[string]string, flavors ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for k, v := range cpuMem {
			for _, f := range flavors {
				if strings.HasPrefix(k, f+"/") {
					out[k] = v
				}
			}
		}
		return out
	}
	tests := map[string]struct {
		plan *plan.Agreement
		want map[string]map[string]string // team → quota table
	}{
		"reference agreement": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(32)},
				plantest.Team("training", plantest.Quota("h100", 16, 8, 8)),
				plantest.Team("research", plantest.Quota("h100", 8, 8, 8)),
				plantest.Team("inference", plantest.Quota("h100", 8, 0, 0))),
			want: map[string]map[string]string{
				"training":  with(map[string]string{"h100/nvidia.com/gpu": "16/8/8"}, "h100"),
				"research":  with(map[string]string{"h100/nvidia.com/gpu": "8/8/8"}, "h100"),
				"inference": with(map[string]string{"h100/nvidia.com/gpu": "8/0/0"}, "h100"),
			},
		},
		"a team with nothing guaranteed may still borrow": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(8)},
				plantest.Team("owner", plantest.Quota("h100", 8, 8, 0)),
				plantest.Team("guest", plantest.Quota("h100", 0, 0, 4))),
			want: map[string]map[string]string{
				"owner": with(map[string]string{"h100/nvidia.com/gpu": "8/8/0"}, "h100"),
				"guest": with(map[string]string{"h100/nvidia.com/gpu": "0/0/4"}, "h100"),
			},
		},
		"two flavors of two resources: each flavor has the other's resource at zero": {
			plan: plantest.Pool([]plan.Flavor{plantest.H100(32), plantest.MIG(56)},
				plantest.Team("notebooks", plantest.Quota("a100-mig", 28, 14, 14), plantest.Quota("h100", 0, 0, 4)),
				plantest.Team("training", plantest.Quota("h100", 16, 8, 8))),
			want: map[string]map[string]string{
				"notebooks": with(map[string]string{
					"h100/nvidia.com/gpu":             "0/0/4",
					"h100/nvidia.com/mig-1g.10gb":     "0/0/0",
					"a100-mig/nvidia.com/gpu":         "0/0/0",
					"a100-mig/nvidia.com/mig-1g.10gb": "28/14/14",
				}, "h100", "a100-mig"),
				"training": with(map[string]string{
					"h100/nvidia.com/gpu":             "16/8/8",
					"h100/nvidia.com/mig-1g.10gb":     "0/0/0",
					"a100-mig/nvidia.com/gpu":         "0/0/0",
					"a100-mig/nvidia.com/mig-1g.10gb": "0/0/0",
				}, "h100", "a100-mig"),
			},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := map[string]map[string]string{}
			for name, cq := range clusterQueues(t, renderV1beta2(t, tc.plan)) {
				got[name] = quotaTable(cq)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("quotas (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestFlavorOrderIsThePlans(t *testing.T) {
	// Kueue tries a resource group's flavors in order: the agreement's.
	for name, flavors := range map[string][]plan.Flavor{
		"h100 first": {plantest.H100(8), plantest.MIG(7)},
		"mig first":  {plantest.MIG(7), plantest.H100(8)},
	} {
		t.Run(name, func(t *testing.T) {
			cq := clusterQueues(t, renderV1beta2(t, plantest.Pool(flavors, plantest.Team("a", plantest.Quota("h100", 8, 0, 0)))))["a"]
			var want, got []string
			for _, f := range flavors {
				want = append(want, f.Name)
			}
			for _, f := range cq.Spec.ResourceGroups[0].Flavors {
				got = append(got, string(f.Name))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("flavor order (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReclaim(t *testing.T) {
	tests := map[string]struct {
		reclaim plan.ReclaimPolicy
		want    kueuev1beta2.PreemptionPolicy
	}{
		"preempt: borrowers are preempted":      {reclaim: plan.ReclaimPreempt, want: kueuev1beta2.PreemptionPolicyAny},
		"wait: the owner waits for them to end": {reclaim: plan.ReclaimWait, want: kueuev1beta2.PreemptionPolicyNever},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			tm := plantest.Team("a", plantest.Quota("h100", 8, 8, 0))
			tm.Reclaim = tc.reclaim
			cq := clusterQueues(t, renderV1beta2(t, plantest.Pool([]plan.Flavor{plantest.H100(8)}, tm)))["a"]
			if got := cq.Spec.Preemption.ReclaimWithinCohort; got != tc.want {
				t.Errorf("reclaimWithinCohort = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestNamespaceSelectorAdmitsTheTeamsNamespacesOnly(t *testing.T) {
	training := plantest.Team("training", plantest.Quota("h100", 8, 0, 0))
	training.Namespaces = []string{"training", "training-batch"}
	research := plantest.Team("research", plantest.Quota("h100", 8, 0, 0))
	cqs := clusterQueues(t, renderV1beta2(t, plantest.Pool([]plan.Flavor{plantest.H100(16)}, training, research)))
	// Namespaces as the API server labels them, plus one that copies a
	// team's label onto itself: the selector must not be fooled by it.
	namespaces := map[string]labels.Set{
		"training":       {render.NamespaceNameLabel: "training", render.TeamLabel: "training"},
		"training-batch": {render.NamespaceNameLabel: "training-batch", render.TeamLabel: "training"},
		"research":       {render.NamespaceNameLabel: "research", render.TeamLabel: "research"},
		"intruder":       {render.NamespaceNameLabel: "intruder", render.TeamLabel: "training"},
		"default":        {render.NamespaceNameLabel: "default"},
	}
	want := map[string][]string{
		"training": {"training", "training-batch"},
		"research": {"research"},
	}
	got := map[string][]string{}
	for name, cq := range cqs {
		sel, err := metav1.LabelSelectorAsSelector(cq.Spec.NamespaceSelector)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if sel.Empty() {
			t.Fatalf("%s: the selector admits every namespace", name)
		}
		for ns, l := range namespaces {
			if sel.Matches(l) {
				got[name] = append(got[name], ns)
			}
		}
		sort.Strings(got[name])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("admitted namespaces (-want,+got):\n%s", diff)
	}
}

func TestDefaultsWrittenOut(t *testing.T) {
	tm := plantest.Team("a", plantest.Quota("h100", 8, 0, 0))
	tm.Weight = 3
	objs := renderV1beta2(t, plantest.Pool([]plan.Flavor{plantest.H100(8)}, tm))
	never := kueuev1beta2.None
	weight := resource.MustParse("3")
	wantCQ := kueuev1beta2.ClusterQueueSpec{
		QueueingStrategy: kueuev1beta2.BestEffortFIFO,
		StopPolicy:       &never,
		FlavorFungibility: &kueuev1beta2.FlavorFungibility{
			WhenCanBorrow: kueuev1beta2.MayStopSearch, WhenCanPreempt: kueuev1beta2.TryNextFlavor,
		},
		Preemption: &kueuev1beta2.ClusterQueuePreemption{
			ReclaimWithinCohort: kueuev1beta2.PreemptionPolicyAny,
			BorrowWithinCohort:  &kueuev1beta2.BorrowWithinCohort{Policy: kueuev1beta2.BorrowWithinCohortPolicyNever},
			WithinClusterQueue:  kueuev1beta2.PreemptionPolicyLowerPriority,
		},
		FairSharing: &kueuev1beta2.FairSharing{Weight: &weight},
	}
	cq := clusterQueues(t, objs)["a"]
	got := kueuev1beta2.ClusterQueueSpec{
		QueueingStrategy: cq.Spec.QueueingStrategy, StopPolicy: cq.Spec.StopPolicy,
		FlavorFungibility: cq.Spec.FlavorFungibility, Preemption: cq.Spec.Preemption, FairSharing: cq.Spec.FairSharing,
	}
	if diff := cmp.Diff(wantCQ, got); diff != "" {
		t.Errorf("ClusterQueue defaults (-want,+got):\n%s", diff)
	}
	for _, o := range objs {
		if o.Kind() == "LocalQueue" {
			lq := typed[kueuev1beta2.LocalQueue](t, o)
			if lq.Spec.StopPolicy == nil || *lq.Spec.StopPolicy != kueuev1beta2.None {
				t.Errorf("LocalQueue %s/%s: stopPolicy %v, want None written out", lq.Namespace, lq.Name, lq.Spec.StopPolicy)
			}
		}
	}
}

// --- Every agreement in the repository, through the whole pipeline. ---

// kueueCRDs loads Kueue v0.17.0's CRDs from the module cache, by kind.
func kueueCRDs(t *testing.T) map[string]*crdcheck.CRD {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "sigs.k8s.io/kueue").Output()
	if err != nil {
		t.Fatalf("go list -m sigs.k8s.io/kueue: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "config", "components", "crd", "bases")
	paths, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no Kueue CRDs in %s (%v)", dir, err)
	}
	crds := map[string]*crdcheck.CRD{}
	for _, p := range paths {
		crd, err := crdcheck.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		crds[crd.Kind] = crd
	}
	return crds
}

// parse reads an object's YAML back the way kubectl and Argo CD do.
func parse(t *testing.T, o generator.Object) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(o.YAML, &obj); err != nil {
		t.Fatalf("%s %s: %v\n%s", o.Kind(), o.Name(), err, o.YAML)
	}
	return obj
}

// strict decodes an object's YAML into a Go API type, failing on any field
// the type does not have.

func report(t *testing.T, o generator.Object, what string, errs field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		t.Errorf("%s %s/%s: %s: %v", o.Kind(), o.Namespace(), o.Name(), what, e)
	}
}

// validateMeta checks names and labels as the API server does for every object.
func validateMeta(t *testing.T, o generator.Object, meta metav1.ObjectMeta, namespaced bool) {
	t.Helper()
	nameFn := apivalidation.NameIsDNSSubdomain
	if o.Kind() == "Namespace" {
		nameFn = apivalidation.ValidateNamespaceName
	}
	report(t, o, "metadata", apivalidation.ValidateObjectMeta(&meta, namespaced, nameFn, field.NewPath("metadata")))
	report(t, o, "labels", metav1validation.ValidateLabels(meta.Labels, field.NewPath("metadata", "labels")))
}

// eachKueueRendering runs check on the Kueue rendering of every example in
// both API versions.
func eachKueueRendering(t *testing.T, check func(t *testing.T, api string, res *generator.Result)) {
	for path, part := range examples.Parts(t) {
		for _, api := range []string{generator.KueueV1beta2, generator.KueueV1beta1} {
			t.Run(path+"/"+api, func(t *testing.T) {
				res, err := generator.Render(part.Source, part.Options(generator.Options{Backend: generator.Kueue, KueueAPI: api}))
				if err != nil {
					t.Fatal(err)
				}
				check(t, api, res)
			})
		}
	}
}

// TestConformsToKueue checks every rendered object of every agreement, in
// both API versions, against what the API server and Kueue's webhooks would
// check: the v0.17.0 CRDs, with the API server's own validators (structural
// schema, pruning of unknown fields, defaulting and x-kubernetes-validations
// CEL rules), the defaults the API server would add, strict decoding into
// Kueue's and Kubernetes' Go types, and Kueue's exported validation functions.
//
// Kueue v0.17.0 exports webhooks.ValidateClusterQueue and
// webhooks.ValidateResourceFlavor, and CohortWebhook.ValidateCreate (whose
// validateCohort is unexported). LocalQueue, WorkloadPriorityClass and
// Topology have no validation webhook in pkg/webhooks; for them, and for
// metadata everywhere, apimachinery's ObjectMeta and label validation runs.
// Kueue validates only v1beta2 (its storage version); v1beta1 objects are
// converted with Kueue's conversion functions first, as its conversion
// webhook would.
func TestConformsToKueue(t *testing.T) {
	crds := kueueCRDs(t)
	eachKueueRendering(t, func(t *testing.T, api string, res *generator.Result) {
		for _, o := range res.Objects {
			conform(t, crds, api, o)
		}
	})
}

func conform(t *testing.T, crds map[string]*crdcheck.CRD, api string, o generator.Object) {
	t.Helper()
	obj := parse(t, o)
	if crd, ok := crds[o.Kind()]; ok && strings.HasPrefix(o.APIVersion(), "kueue.x-k8s.io/") {
		if o.APIVersion() != "kueue.x-k8s.io/"+api {
			t.Errorf("%s %s: apiVersion %s, want kueue.x-k8s.io/%s", o.Kind(), o.Name(), o.APIVersion(), api)
		}
		for _, e := range crd.Validate(obj) {
			t.Errorf("%s %s/%s: CRD: %v", o.Kind(), o.Namespace(), o.Name(), e)
		}
		missing, err := crd.MissingDefaults(obj)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range missing {
			t.Errorf("%s %s/%s: %s has a default the API server would add: write it out, or Argo CD sees drift", o.Kind(), o.Namespace(), o.Name(), m)
		}
		conformKueue(t, o)
		return
	}
	switch o.APIVersion() + "/" + o.Kind() {
	case "v1/Namespace":
		var ns corev1.Namespace
		if crdcheck.Strict(t, o, o.YAML, &ns) {
			validateMeta(t, o, ns.ObjectMeta, false)
			if ns.Labels[render.NamespaceNameLabel] != ns.Name {
				t.Errorf("Namespace %s: label %s=%q, want its name (the API server sets it)", ns.Name, render.NamespaceNameLabel, ns.Labels[render.NamespaceNameLabel])
			}
		}
	case "v1/ResourceQuota":
		var rq corev1.ResourceQuota
		if crdcheck.Strict(t, o, o.YAML, &rq) {
			validateMeta(t, o, rq.ObjectMeta, true)
			// The VM quota holds VMs only; the guardrails' GPU quota is
			// checked by render/guard.
			if _, ok := rq.Spec.Hard[namespaces.VMResource]; rq.Name == namespaces.VMQuotaName && (!ok || len(rq.Spec.Hard) != 1) {
				t.Errorf("ResourceQuota %s/%s: hard %v, want only %s", rq.Namespace, rq.Name, rq.Spec.Hard, namespaces.VMResource)
			}
		}
	case "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy",
		"admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding",
		"networking.k8s.io/v1/NetworkPolicy":
		// The guardrails: render/guard's TestConformsToKubernetes.
	case "monitoring.coreos.com/v1/PrometheusRule", "v1/ConfigMap":
		// Monitoring: render/monitor's TestConformsToPrometheusOperator.
	default:
		t.Errorf("%s %s: no schema or Go type to check this kind against", o.APIVersion(), o.Kind())
	}
}

// hub decodes o strictly into the Go type of its API version and returns it
// as Kueue's v1beta2 (hub) type, converted with Kueue's own functions when o
// is v1beta1, so one set of checks serves both versions. It returns nil
// after reporting a decode or conversion failure.
func hub(t *testing.T, o generator.Object) metav1.Object {
	t.Helper()
	v1beta1 := o.APIVersion() == kueuev1beta1.GroupVersion.String()
	var old, out metav1.Object
	var convert func() error
	switch o.Kind() {
	case "ClusterQueue":
		h, in := &kueuev1beta2.ClusterQueue{}, &kueuev1beta1.ClusterQueue{}
		out, old, convert = h, in, func() error { return in.ConvertTo(h) }
	case "ResourceFlavor":
		h, in := &kueuev1beta2.ResourceFlavor{}, &kueuev1beta1.ResourceFlavor{}
		out, old, convert = h, in, func() error { return kueuev1beta1.Convert_v1beta1_ResourceFlavor_To_v1beta2_ResourceFlavor(in, h, nil) }
	case "Cohort":
		h, in := &kueuev1beta2.Cohort{}, &kueuev1beta1.Cohort{}
		out, old, convert = h, in, func() error { return in.ConvertTo(h) }
	case "LocalQueue":
		h, in := &kueuev1beta2.LocalQueue{}, &kueuev1beta1.LocalQueue{}
		out, old, convert = h, in, func() error { return in.ConvertTo(h) }
	case "WorkloadPriorityClass":
		h, in := &kueuev1beta2.WorkloadPriorityClass{}, &kueuev1beta1.WorkloadPriorityClass{}
		out, old, convert = h, in, func() error {
			return kueuev1beta1.Convert_v1beta1_WorkloadPriorityClass_To_v1beta2_WorkloadPriorityClass(in, h, nil)
		}
	case "Topology":
		h, in := &kueuev1beta2.Topology{}, &kueuev1beta1.Topology{}
		out, old, convert = h, in, func() error { return kueuev1beta1.Convert_v1beta1_Topology_To_v1beta2_Topology(in, h, nil) }
	// A fleet's manager (render/multikueue), in the stream of a Kueue
	// rendering.
	case "AdmissionCheck":
		h, in := &kueuev1beta2.AdmissionCheck{}, &kueuev1beta1.AdmissionCheck{}
		out, old, convert = h, in, func() error { return kueuev1beta1.Convert_v1beta1_AdmissionCheck_To_v1beta2_AdmissionCheck(in, h, nil) }
	case "MultiKueueConfig":
		h, in := &kueuev1beta2.MultiKueueConfig{}, &kueuev1beta1.MultiKueueConfig{}
		out, old, convert = h, in, func() error {
			return kueuev1beta1.Convert_v1beta1_MultiKueueConfig_To_v1beta2_MultiKueueConfig(in, h, nil)
		}
	case "MultiKueueCluster":
		h, in := &kueuev1beta2.MultiKueueCluster{}, &kueuev1beta1.MultiKueueCluster{}
		out, old, convert = h, in, func() error { return in.ConvertTo(h) }
	default:
		t.Errorf("%s %s: unexpected Kueue kind", o.APIVersion(), o.Kind())
		return nil
	}
	if !v1beta1 {
		if !crdcheck.Strict(t, o, o.YAML, out) {
			return nil
		}
		return out
	}
	if !crdcheck.Strict(t, o, o.YAML, old) {
		return nil
	}
	if err := convert(); err != nil {
		t.Errorf("%s %s: convert to v1beta2: %v", o.Kind(), o.Name(), err)
		return nil
	}
	return out
}

// conformKueue checks a Kueue object's metadata and, where Kueue exports
// them, runs the validators its admission webhook runs.
func conformKueue(t *testing.T, o generator.Object) {
	t.Helper()
	obj := hub(t, o)
	if obj == nil {
		return
	}
	// Every Kueue type embeds ObjectMeta, whose accessor returns itself.
	meta := obj.(metav1.ObjectMetaAccessor).GetObjectMeta().(*metav1.ObjectMeta)
	validateMeta(t, o, *meta, o.Kind() == "LocalQueue")
	switch h := obj.(type) {
	case *kueuev1beta2.ClusterQueue:
		report(t, o, "webhooks.ValidateClusterQueue", webhooks.ValidateClusterQueue(h))
	case *kueuev1beta2.ResourceFlavor:
		report(t, o, "webhooks.ValidateResourceFlavor", webhooks.ValidateResourceFlavor(h))
	case *kueuev1beta2.Cohort:
		if _, err := (&webhooks.CohortWebhook{}).ValidateCreate(context.Background(), h); err != nil {
			t.Errorf("Cohort %s: CohortWebhook.ValidateCreate: %v", h.Name, err)
		}
	}
}

// TestEncodedObjects checks what only the encoded objects show: labels,
// no status or timestamps, canonical quantities, and the cohort field of
// each API version.
func TestEncodedObjects(t *testing.T) {
	eachKueueRendering(t, func(t *testing.T, api string, res *generator.Result) {
		teams := map[string]bool{}
		cohortOf := map[string]string{} // a team's ClusterQueue's Cohort
		for _, tm := range res.Plan.Teams {
			teams[tm.Name] = true
			cohortOf[tm.Name] = res.Plan.Name
			if tm.Department != "" {
				cohortOf[tm.Name] = tm.Department
			}
		}
		for _, o := range res.Objects {
			obj := parse(t, o)
			id := o.Kind() + " " + o.Namespace() + "/" + o.Name()
			meta, _ := obj["metadata"].(map[string]any)
			lbls, _ := meta["labels"].(map[string]any)
			if lbls[render.ManagedByLabel] != render.ManagedBy {
				t.Errorf("%s: label %s=%v, want %s", id, render.ManagedByLabel, lbls[render.ManagedByLabel], render.ManagedBy)
			}
			// Every object but the pool-wide ones belongs to a team.
			switch o.Kind() {
			case "Namespace", "ClusterQueue", "LocalQueue", "ResourceQuota":
				if team, _ := lbls[render.TeamLabel].(string); !teams[team] {
					t.Errorf("%s: label %s=%q names no team", id, render.TeamLabel, team)
				}
			}
			if _, ok := obj["status"]; ok {
				t.Errorf("%s has a status", id)
			}
			walk(obj, "", func(path string, v any) {
				if strings.HasSuffix(path, ".creationTimestamp") || path == "creationTimestamp" {
					t.Errorf("%s: %s is written", id, path)
				}
				if s, ok := v.(string); ok && isQuantityPath(path) {
					q, err := resource.ParseQuantity(s)
					if err != nil {
						t.Errorf("%s: %s: %q is not a quantity: %v", id, path, s, err)
					} else if q.String() != s {
						t.Errorf("%s: %s: %q is not canonical; the API server stores %q", id, path, s, q.String())
					}
				}
			})
			if o.Kind() == "ClusterQueue" {
				spec := obj["spec"].(map[string]any)
				want, other := "cohortName", "cohort"
				if api == generator.KueueV1beta1 {
					want, other = "cohort", "cohortName"
				}
				if spec[want] != cohortOf[o.Name()] {
					t.Errorf("%s: spec.%s = %v, want %s", id, want, spec[want], cohortOf[o.Name()])
				}
				if _, ok := spec[other]; ok {
					t.Errorf("%s: spec.%s is not a %s field", id, other, api)
				}
			}
		}
	})
}

// isQuantityPath reports whether a field holds a resource.Quantity.
func isQuantityPath(path string) bool {
	for _, suffix := range []string{".nominalQuota", ".lendingLimit", ".borrowingLimit", "fairSharing.weight"} {
		if strings.HasSuffix(path, suffix) {
			return true
		}
	}
	return strings.HasPrefix(path, "spec.hard.")
}

// walk calls fn for every value of a decoded object, with its dotted path.
func walk(v any, path string, fn func(string, any)) {
	fn(path, v)
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			walk(e, join(k), fn)
		}
	case []any:
		for _, e := range x {
			walk(e, path, fn)
		}
	}
}

// TestV1beta1SaysTheSame converts each v1beta1 object back to v1beta2 with
// Kueue's conversion functions and compares it with the v1beta2 rendering.
func TestV1beta1SaysTheSame(t *testing.T) {
	for path, part := range examples.Parts(t) {
		t.Run(path, func(t *testing.T) {
			v2, err := generator.Render(part.Source, part.Options(generator.Options{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta2}))
			if err != nil {
				t.Fatal(err)
			}
			v1, err := generator.Render(part.Source, part.Options(generator.Options{Backend: generator.Kueue, KueueAPI: generator.KueueV1beta1}))
			if err != nil {
				t.Fatal(err)
			}
			if len(v1.Objects) != len(v2.Objects) {
				t.Fatalf("%d objects in v1beta1, %d in v1beta2", len(v1.Objects), len(v2.Objects))
			}
			for i, o := range v1.Objects {
				if o.Kind() != "ClusterQueue" {
					continue
				}
				var old kueuev1beta1.ClusterQueue
				var back, want kueuev1beta2.ClusterQueue
				if !crdcheck.Strict(t, o, o.YAML, &old) || !crdcheck.Strict(t, v2.Objects[i], v2.Objects[i].YAML, &want) {
					continue
				}
				if err := old.ConvertTo(&back); err != nil {
					t.Fatal(err)
				}
				back.TypeMeta = want.TypeMeta
				if diff := cmp.Diff(jsonOf(t, want), jsonOf(t, back)); diff != "" {
					t.Errorf("ClusterQueue %s (-v1beta2,+v1beta1 converted):\n%s", o.Name(), diff)
				}
			}
		})
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestLimitsOfTheCRDs renders agreements at and beyond the limits Kueue's
// CRDs set (flavors per resource group, covered resources, node labels,
// tolerations): each must either be refused as an invalid agreement, with a
// message, or render objects that pass the schema. Rendering what the API
// server then refuses would fail the sync halfway.
func TestLimitsOfTheCRDs(t *testing.T) {
	crds := kueueCRDs(t)
	flavors := func(n int, resource func(i int) string, extra string) string {
		var b strings.Builder
		b.WriteString("version = 1\nname = \"gpu-pool\"\n")
		for i := 0; i < n; i++ {
			fmt.Fprintf(&b, "[flavors.f%02d]\nresource = %q\ncapacity = 8\n%s\n", i, resource(i), extra)
		}
		b.WriteString("[teams.a]\n")
		for i := 0; i < n; i++ {
			if n == 1 {
				b.WriteString("guaranteed = 8\n")
			} else {
				fmt.Fprintf(&b, "[teams.a.flavors.f%02d]\nguaranteed = 8\n", i)
			}
		}
		return b.String()
	}
	gpu := func(int) string { return "nvidia.com/gpu" }
	migs := func(i int) string { return fmt.Sprintf("nvidia.com/mig-%dg.10gb", i+1) }
	labelsN := func(n int) string {
		var l []string
		for i := 0; i < n; i++ {
			l = append(l, fmt.Sprintf("%q = \"v\"", fmt.Sprintf("l%d.example.com/x", i)))
		}
		return "node_labels = { " + strings.Join(l, ", ") + " }"
	}
	tolerationsN := func(n int) string {
		var l []string
		for i := 0; i < n; i++ {
			l = append(l, fmt.Sprintf("{ key = \"k%d\", operator = \"Exists\", effect = \"NoSchedule\" }", i))
		}
		return "tolerations = [ " + strings.Join(l, ", ") + " ]"
	}
	// refused says why generator/validate must refuse the case: the API
	// server would refuse what it renders.
	tests := map[string]struct {
		toml    string
		refused string
	}{
		"16 flavors":       {toml: flavors(16, gpu, "")},
		"17 flavors":       {toml: flavors(17, gpu, "")},
		"64 flavors":       {toml: flavors(64, gpu, "")},
		"65 flavors":       {toml: flavors(65, gpu, "")},
		"14 GPU resources": {toml: flavors(14, migs, "")},
		"21 GPU resources": {toml: flavors(21, migs, "")},
		"22 GPU resources": {toml: flavors(22, migs, ""), refused: "every flavor lists every covered resource, so 22 flavors of 22 " +
			"resources (+ cpu, memory) make 528 flavor-resource combinations; Kueue's webhook allows 512 per resource group"},
		"63 GPU resources":      {toml: flavors(63, migs, "")},
		"8 node labels":         {toml: flavors(1, gpu, labelsN(8))},
		"9 node labels":         {toml: flavors(1, gpu, labelsN(9)), refused: "the ResourceFlavor CRD allows at most 8 nodeLabels"},
		"8 tolerations":         {toml: flavors(1, gpu, tolerationsN(8))},
		"9 tolerations":         {toml: flavors(1, gpu, tolerationsN(9)), refused: "the ResourceFlavor CRD allows at most 8 tolerations"},
		"a 63-character team":   {toml: strings.Replace(flavors(1, gpu, ""), "[teams.a]", "[teams."+strings.Repeat("t", 63)+"]", 1)},
		"a 63-character flavor": {toml: strings.ReplaceAll(flavors(1, gpu, ""), "f00", strings.Repeat("f", 63))},
		"a 63-character pool":   {toml: strings.Replace(flavors(1, gpu, ""), `"gpu-pool"`, `"`+strings.Repeat("p", 63)+`"`, 1)},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			for _, api := range []string{generator.KueueV1beta2, generator.KueueV1beta1} {
				res, err := generator.Render(generator.Source{Path: "tenancy.toml", Data: []byte(tc.toml)}, generator.Options{KueueAPI: api})
				var invalid *generator.AgreementError
				if tc.refused != "" && !errors.As(err, &invalid) {
					t.Fatalf("%s: rendered an agreement the API server refuses (%s); err = %v", api, tc.refused, err)
				}
				if errors.As(err, &invalid) {
					if len(invalid.Diagnostics) == 0 {
						t.Errorf("%s: refused without a message", api)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", api, err)
				}
				for _, o := range res.Objects {
					conform(t, crds, api, o)
				}
			}
		})
	}
}

// TestStrictDecodingCatchesUnknownFields makes sure the conformance check
// can fail: a field Kueue's types lack, as a typo in the renderer would
// produce, must not decode.
func TestStrictDecodingCatchesUnknownFields(t *testing.T) {
	res, err := generator.Render(examples.Sources(t)["tenancy.toml"], generator.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range res.Objects {
		if o.Kind() != "ClusterQueue" {
			continue
		}
		var cq kueuev1beta2.ClusterQueue
		if err := yaml.UnmarshalStrict(o.YAML, &cq); err != nil {
			t.Fatalf("the rendered ClusterQueue does not decode: %v", err)
		}
		typo := strings.Replace(string(o.YAML), "  cohortName:", "  cohort_name:", 1)
		if err := yaml.UnmarshalStrict([]byte(typo), &cq); err == nil {
			t.Errorf("a ClusterQueue with spec.cohort_name decoded without error:\n%s", typo)
		}
		return
	}
	t.Fatal("no ClusterQueue rendered")
}
