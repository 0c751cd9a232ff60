package guard_test

import (
	"context"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apiserver/pkg/admission"
	plugincel "k8s.io/apiserver/pkg/admission/plugin/cel"
	"k8s.io/apiserver/pkg/admission/plugin/policy/validating"
	"k8s.io/apiserver/pkg/admission/plugin/webhook/matchconditions"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	authnuser "k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/cel/environment"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/generator"
	"github.com/tenancy-dev/tenancy/generator/internal/examples"
	"github.com/tenancy-dev/tenancy/generator/render/guard"
)

// The reference agreement: training (16 GPUs, may borrow 8), research,
// inference; priorities critical, standard, scavenger.
const reference = `version = 1
name = "gpu-pool"
[flavors.h100]
capacity = 32
[priorities]
critical = 1000
standard = 100
[teams.training]
guaranteed = 16
lendable = 8
borrow = 8
[teams.research]
guaranteed = 8
lendable = 8
borrow = 8
[teams.inference]
guaranteed = 8
`

func renderAll(t *testing.T, src string, opts generator.Options) []generator.Object {
	t.Helper()
	res, err := generator.Render(generator.Source{Data: []byte(src)}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res.Objects
}

// policies returns the rendered ValidatingAdmissionPolicies, typed.
func policies(t *testing.T, objs []generator.Object) []*admissionv1.ValidatingAdmissionPolicy {
	t.Helper()
	var out []*admissionv1.ValidatingAdmissionPolicy
	for _, o := range objs {
		if o.Kind() != "ValidatingAdmissionPolicy" {
			continue
		}
		p := &admissionv1.ValidatingAdmissionPolicy{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Fields, p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// compile builds a policy's validator the way kube-apiserver's
// ValidatingAdmissionPolicy plugin does (k8s.io/apiserver's
// validating.compilePolicy, which is unexported): the same CEL environment,
// variable composition, match conditions, parameters, cost limits and
// message expressions. The environment is Kubernetes 1.30's, the oldest the
// README supports, as the API server checks a new policy against.
func compile(t *testing.T, p *admissionv1.ValidatingAdmissionPolicy) validating.Validator {
	t.Helper()
	env, err := plugincel.NewCompositionEnv(plugincel.VariablesTypeName, environment.MustBaseEnvSet(version.MajorMinor(1, 30)))
	if err != nil {
		t.Fatal(err)
	}
	vars := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil, HasAuthorizer: true}
	msgVars := plugincel.OptionalVariableDeclarations{HasParams: p.Spec.ParamKind != nil}
	c := plugincel.NewCompositedCompilerFromTemplate(env)
	var named []plugincel.NamedExpressionAccessor
	for _, v := range p.Spec.Variables {
		named = append(named, &validating.Variable{Name: v.Name, Expression: v.Expression})
	}
	c.CompileAndStoreVariables(named, vars, environment.NewExpressions)
	var exprs, msgs, conds []plugincel.ExpressionAccessor
	for _, v := range p.Spec.Validations {
		exprs = append(exprs, &validating.ValidationCondition{Expression: v.Expression, Message: v.Message, Reason: v.Reason})
		msgs = append(msgs, &validating.MessageExpressionCondition{MessageExpression: v.MessageExpression})
	}
	for i := range p.Spec.MatchConditions {
		conds = append(conds, (*matchconditions.MatchCondition)(&p.Spec.MatchConditions[i]))
	}
	var matcher matchconditions.Matcher
	if len(conds) > 0 {
		matcher = matchconditions.NewMatcher(c.CompileCondition(conds, vars, environment.NewExpressions), p.Spec.FailurePolicy, "policy", "validate", p.Name)
	}
	return validating.NewValidator(
		c.CompileCondition(exprs, vars, environment.NewExpressions),
		matcher,
		c.CompileCondition(nil, vars, environment.NewExpressions),
		c.CompileCondition(msgs, msgVars, environment.NewExpressions),
		p.Spec.FailurePolicy,
	)
}

// matches reports whether a policy's resource rules cover gvr.
func matches(p *admissionv1.ValidatingAdmissionPolicy, gvr schema.GroupVersionResource) bool {
	for _, r := range p.Spec.MatchConstraints.ResourceRules {
		if slices.Contains(r.APIGroups, gvr.Group) && slices.Contains(r.APIVersions, gvr.Version) && slices.Contains(r.Resources, gvr.Resource) {
			return true
		}
	}
	return false
}

// request is one admission request: obj created (old nil) or updated from
// old, by user.
type request struct {
	gvr  schema.GroupVersionResource
	obj  runtime.Object
	old  runtime.Object
	user string
}

func toUnstructured(t *testing.T, obj runtime.Object) *unstructured.Unstructured {
	t.Helper()
	if obj == nil {
		return nil
	}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: u}
}

// rendered is a render's queue policies and their parameter ConfigMaps.
type rendered struct {
	policies []*admissionv1.ValidatingAdmissionPolicy
	params   map[string]*unstructured.Unstructured // by name
	bindings []*admissionv1.ValidatingAdmissionPolicyBinding
}

func renderGuard(t *testing.T, src string, opts generator.Options) rendered {
	t.Helper()
	objs := renderAll(t, src, opts)
	r := rendered{policies: policies(t, objs), params: map[string]*unstructured.Unstructured{}}
	for _, o := range objs {
		switch o.Kind() {
		case "ConfigMap":
			r.params[o.Name()] = &unstructured.Unstructured{Object: o.Fields}
		case "ValidatingAdmissionPolicyBinding":
			b := &admissionv1.ValidatingAdmissionPolicyBinding{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Fields, b); err != nil {
				t.Fatal(err)
			}
			r.bindings = append(r.bindings, b)
		}
	}
	return r
}

// admit runs every matching policy, with the parameters its binding names,
// on the request in namespace ns of team and returns the messages of the
// refusals; an evaluation error fails the test (a typo in the CEL, a field
// that is not there).
func (r rendered) admit(t *testing.T, req request, ns, team string) []string {
	t.Helper()
	uo, old := toUnstructured(t, req.obj), toUnstructured(t, req.old)
	namespace := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: map[string]string{"tenancy.dev/team": team, "tenancy.dev/pool": "gpu-pool", "kubernetes.io/metadata.name": ns}}}
	op := admission.Create
	var opts runtime.Object = &metav1.CreateOptions{}
	if old != nil {
		op, opts = admission.Update, &metav1.UpdateOptions{}
	}
	user := req.user
	if user == "" {
		user = "alice"
	}
	userInfo := &authnuser.DefaultInfo{Name: user, Groups: []string{"system:authenticated"}}
	var oldObj runtime.Object
	if old != nil {
		oldObj = old
	}
	attr := admission.NewAttributesRecord(uo, oldObj, uo.GroupVersionKind(), ns, uo.GetName(), req.gvr, "", op, opts, false, userInfo)
	versioned := &admission.VersionedAttributes{Attributes: attr, VersionedObject: uo, VersionedOldObject: oldObj, VersionedKind: uo.GroupVersionKind()}
	var refusals []string
	matched := false
	for _, p := range r.policies {
		if !matches(p, req.gvr) {
			continue
		}
		matched = true
		var params runtime.Object
		for _, b := range r.bindings {
			if b.Spec.PolicyName == p.Name && b.Spec.ParamRef != nil {
				params = r.params[b.Spec.ParamRef.Name]
			}
		}
		if params == nil && p.Spec.ParamKind != nil {
			t.Fatalf("policy %s: no parameters", p.Name)
		}
		res := compile(t, p).Validate(context.Background(), req.gvr, versioned, params, namespace, celconfig.RuntimeCELCostBudget, nil)
		for _, d := range res.Decisions {
			switch d.Evaluation {
			case validating.EvalError:
				t.Errorf("policy %s: evaluation error: %s", p.Name, d.Message)
			case validating.EvalDeny:
				refusals = append(refusals, d.Message)
			}
		}
	}
	if !matched {
		t.Fatalf("no policy matches %s", req.gvr)
	}
	return refusals
}

func gpuContainer(res string, n int64) corev1.Container {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	return corev1.Container{Name: "work", Image: "x", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceName(res): q, corev1.ResourceCPU: resource.MustParse("1")},
		Limits:   corev1.ResourceList{corev1.ResourceName(res): q},
	}}
}

func cpuContainer() corev1.Container {
	return corev1.Container{Name: "work", Image: "x", Resources: corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
	}}
}

var (
	podsGVR       = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	jobsGVR       = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronJobsGVR   = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	deployGVR     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	jobSetsGVR    = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	pytorchGVR    = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	rayJobsGVR    = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	lwsGVR        = schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
	rayClusterGVR = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
)

func labels(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func pod(l map[string]string, c corev1.Container) *corev1.Pod {
	return &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "training", Labels: l},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{c}},
	}
}

func job(l map[string]string, c corev1.Container) *batchv1.Job {
	return &batchv1.Job{
		TypeMeta:   metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"},
		ObjectMeta: metav1.ObjectMeta{Name: "j", Namespace: "training", Labels: l},
		Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}},
	}
}

// crd builds a custom workload from its YAML-ish map, with one GPU
// container wherever its pod templates are.
func crd(apiVersion, kind string, l map[string]string, spec map[string]any) *unstructured.Unstructured {
	meta := map[string]any{"name": "w", "namespace": "training"}
	if l != nil {
		lm := map[string]any{}
		for k, v := range l {
			lm[k] = v
		}
		meta["labels"] = lm
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta, "spec": spec}}
}

func template(res string) map[string]any {
	return map[string]any{"spec": map[string]any{"containers": []any{map[string]any{
		"name": "w", "image": "x", "resources": map[string]any{"limits": map[string]any{res: "1"}},
	}}}}
}

// TestGuardrailsTuned: each part turns off with its key; default_queue adds
// Kueue's default LocalQueue and lets the policies accept its name.
func TestGuardrailsTuned(t *testing.T) {
	kinds := func(objs []generator.Object) map[string]int {
		m := map[string]int{}
		for _, o := range objs {
			m[o.Kind()]++
		}
		return m
	}
	on := kinds(renderAll(t, reference, generator.Options{}))
	off := kinds(renderAll(t, reference+"[guardrails]\nqueue_admission = false\ngpu_quota = false\nnetwork_isolation = false\n", generator.Options{}))
	for _, k := range []string{"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding", "NetworkPolicy"} {
		if on[k] == 0 || off[k] != 0 {
			t.Errorf("%s: %d by default, %d turned off; want some, then none", k, on[k], off[k])
		}
	}
	if on["ResourceQuota"] != 3 || off["ResourceQuota"] != 0 {
		t.Errorf("ResourceQuota: %d by default, %d turned off; want one per namespace (3), then none", on["ResourceQuota"], off["ResourceQuota"])
	}

	objs := renderAll(t, reference+"[guardrails]\ndefault_queue = true\n", generator.Options{})
	if diff := cmp.Diff(on["LocalQueue"]*2, kinds(objs)["LocalQueue"]); diff != "" {
		t.Errorf("LocalQueues with default_queue (-want,+got):\n%s", diff)
	}
	r := renderGuard(t, reference+"[guardrails]\ndefault_queue = true\n", generator.Options{})
	got := r.admit(t, request{gvr: jobsGVR, obj: job(labels("kueue.x-k8s.io/queue-name", "default"), gpuContainer("nvidia.com/gpu", 1))}, "training", "training")
	if len(got) != 0 {
		t.Errorf("a Job on the default LocalQueue is refused: %q", got)
	}
}

// TestGPUQuota: with the queue policy on, the quota refuses no queued work:
// it holds at 0 only what the team may never use (a GPU resource it has no
// quota of, DRA GPU claims); without the policy it caps each GPU resource at
// the team's most usable.
func TestGPUQuota(t *testing.T) {
	src := "version = 1\nname = \"gpu-pool\"\n[flavors.h100]\ncapacity = 32\n[flavors.mig]\nresource = \"nvidia.com/mig-1g.10gb\"\ncapacity = 7\n" +
		"[teams.training.flavors.h100]\nguaranteed = 16\nlendable = 8\nborrow = 8\n[teams.research.flavors.mig]\nguaranteed = 7\n"
	hard := func(objs []generator.Object, ns string) map[string]string {
		for _, o := range objs {
			if o.Kind() == "ResourceQuota" && o.Name() == guard.GPUQuotaName && o.Namespace() == ns {
				m, _, _ := unstructured.NestedStringMap(o.Fields, "spec", "hard")
				return m
			}
		}
		t.Fatalf("no GPU quota in %s", ns)
		return nil
	}
	dra := map[string]string{"gpu.nvidia.com.deviceclass.resource.k8s.io/devices": "0", "mig.nvidia.com.deviceclass.resource.k8s.io/devices": "0"}
	with := func(kv ...string) map[string]string {
		m := maps.Clone(dra)
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	guarded := renderAll(t, src, generator.Options{})
	if diff := cmp.Diff(with("requests.nvidia.com/mig-1g.10gb", "0"), hard(guarded, "training")); diff != "" {
		t.Errorf("training, policy on (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(with("requests.nvidia.com/gpu", "0"), hard(guarded, "research")); diff != "" {
		t.Errorf("research, which has no h100, policy on (-want,+got):\n%s", diff)
	}
	unguarded := renderAll(t, src+"[guardrails]\nqueue_admission = false\n", generator.Options{})
	if diff := cmp.Diff(with("requests.nvidia.com/gpu", "24", "requests.nvidia.com/mig-1g.10gb", "0"), hard(unguarded, "training")); diff != "" {
		t.Errorf("training, policy off (-want,+got):\n%s", diff)
	}
}

// TestConformsToKubernetes decodes every guardrail object of every
// agreement in the repository strictly into its Go type (a misspelt field
// fails), checks its metadata as the API server does, and checks what the
// API server would refuse: a GPU quota on anything but requests of the
// agreement's GPU resources, a binding to a policy that is not rendered.
func TestConformsToKubernetes(t *testing.T) {
	for path, part := range examples.Parts(t) {
		for _, opts := range []generator.Options{{Backend: generator.Kueue}, {Backend: generator.KAI}} {
			if part.Manager && opts.Backend == generator.KAI {
				continue // KAI has no multi-cluster dispatch: a fleet's manager is Kueue's
			}
			t.Run(path+"/"+string(opts.Backend), func(t *testing.T) {
				res, err := generator.Render(part.Source, part.Options(opts))
				if err != nil {
					t.Fatal(err)
				}
				policiesByName := map[string]bool{}
				var bindings []*admissionv1.ValidatingAdmissionPolicyBinding
				for _, o := range res.Objects {
					var into any
					namespaced := true
					switch o.Kind() {
					case "ValidatingAdmissionPolicy":
						p := &admissionv1.ValidatingAdmissionPolicy{}
						into, namespaced = p, false
						policiesByName[o.Name()] = true
					case "ValidatingAdmissionPolicyBinding":
						b := &admissionv1.ValidatingAdmissionPolicyBinding{}
						into, namespaced = b, false
						bindings = append(bindings, b)
					case "NetworkPolicy":
						into = &networkingv1.NetworkPolicy{}
					case "ResourceQuota":
						if o.Name() != guard.GPUQuotaName {
							continue
						}
						into = &corev1.ResourceQuota{}
					default:
						continue
					}
					if err := yaml.UnmarshalStrict(o.YAML, into); err != nil {
						t.Errorf("%s %s: does not decode strictly into %T: %v", o.Kind(), o.Name(), into, err)
						continue
					}
					meta := into.(metav1.Object)
					om := metav1.ObjectMeta{Name: meta.GetName(), Namespace: meta.GetNamespace(), Labels: meta.GetLabels()}
					for _, e := range apivalidation.ValidateObjectMeta(&om, namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata")) {
						t.Errorf("%s %s: %v", o.Kind(), o.Name(), e)
					}
					if rq, ok := into.(*corev1.ResourceQuota); ok {
						for name := range rq.Spec.Hard {
							dra := strings.HasSuffix(string(name), ".deviceclass.resource.k8s.io/devices")
							if !dra && (!strings.HasPrefix(string(name), "requests.") || !strings.Contains(string(name), "/")) {
								t.Errorf("ResourceQuota %s/%s: %s is not requests of an extended resource", rq.Namespace, rq.Name, name)
							}
						}
					}
				}
				for _, b := range bindings {
					if !policiesByName[b.Spec.PolicyName] {
						t.Errorf("binding %s names policy %s, which is not rendered", b.Name, b.Spec.PolicyName)
					}
				}
			})
		}
	}
}

// TestKAIRules: what only Kueue expresses is a warning under KAI, at its key;
// retiring holds and drains the team's Kueue queues.
func TestKAIRules(t *testing.T) {
	src := reference + "retiring = true\n[guardrails]\ndefault_queue = true\n"
	res, err := generator.Render(generator.Source{Data: []byte(src)}, generator.Options{Backend: generator.KAI})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range res.Warnings {
		if strings.Contains(w.Field(), "retiring") || strings.Contains(w.Field(), "default_queue") {
			got = append(got, w.Field())
		}
	}
	if diff := cmp.Diff([]string{"teams.inference.retiring", "guardrails.default_queue"}, got); diff != "" {
		t.Errorf("KAI warnings (-want,+got):\n%s", diff)
	}

	var stops []string
	for _, o := range renderAll(t, src, generator.Options{}) {
		if o.Kind() == "ClusterQueue" || o.Kind() == "LocalQueue" {
			stop, _, _ := unstructured.NestedString(o.Fields, "spec", "stopPolicy")
			stops = append(stops, o.Kind()+"/"+o.Namespace()+"/"+o.Name()+"="+stop)
		}
	}
	want := []string{
		"ClusterQueue//inference=HoldAndDrain", "ClusterQueue//research=None", "ClusterQueue//training=None",
		"LocalQueue/inference/default=HoldAndDrain", "LocalQueue/inference/inference=HoldAndDrain",
		"LocalQueue/research/default=None", "LocalQueue/research/research=None",
		"LocalQueue/training/default=None", "LocalQueue/training/training=None",
	}
	if diff := cmp.Diff(want, stops); diff != "" {
		t.Errorf("stop policies (-want,+got):\n%s", diff)
	}
}

// equalSpecs compares two policies but for the variables that carry the
// agreement's data.
func equalSpecs(a, b *admissionv1.ValidatingAdmissionPolicy) bool {
	strip := func(p *admissionv1.ValidatingAdmissionPolicy) admissionv1.ValidatingAdmissionPolicySpec {
		s := *p.Spec.DeepCopy()
		s.Variables = slices.DeleteFunc(s.Variables, func(v admissionv1.Variable) bool {
			return slices.Contains([]string{"pool", "gpus", "priorities", "queueNames", "trustedControllers", "most",
				"nodePoolLabel", "nodePools", "teamQueues", "queuePools", "poolGPUs", "poolFlavors", "fractionPools"}, v.Name)
		})
		return s
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

func ptrTrue() *bool { b := true; return &b }

// wantRefusals compares refusals with the substrings each must contain, in
// order; nil wants none. The message is the feature here: it names the
// team and what to set.
func wantRefusals(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("refusals = %q, want %d matching %q", got, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("refusal %d = %q, want it to contain %q", i, got[i], w)
		}
	}
}
