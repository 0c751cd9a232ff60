package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/probe"
)

// The guardrails' checks: the rendered ValidatingAdmissionPolicy, Pod
// Security labels and GPU ResourceQuotas, in the real kube-apiserver, with
// kube-controller-manager's controllers making pods under their own service
// accounts, refuse what escapes the agreement and let through what it
// wants. Every probe is made by a team's namespace admin: a ServiceAccount
// of the team's namespace bound to the built-in admin ClusterRole there,
// with a token, as clusters give teams rights. Requests are server-side dry
// runs unless a probe needs the real controllers.

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

// gpuPodSpec is a pod spec asking for n of res, with cpu and memory.
func gpuPodSpec(res corev1.ResourceName, n int64) corev1.PodSpec {
	q := *resource.NewQuantity(n, resource.DecimalSI)
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "work", Image: "registry.invalid/tenancy-e2e:never-pulled",
			Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{res: q, corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{res: q},
			},
		}},
	}
}

func cpuPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "work", Image: "registry.invalid/tenancy-e2e:never-pulled",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}},
	}
}

// gpuAlways is a pod spec for a template that restarts (Deployments and the
// like).
func gpuAlways(n int64) corev1.PodSpec {
	s := gpuPodSpec(gpu, n)
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}

func cpuAlways() corev1.PodSpec {
	s := cpuPodSpec()
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}

func guardJob(ns, name string, labels map[string]string, spec corev1.PodSpec) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), Parallelism: ptr.To(int32(1)), Completions: ptr.To(int32(1)),
			Template: corev1.PodTemplateSpec{Spec: spec},
		},
	}
}

func guardPod(ns, name string, labels map[string]string, spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: spec}
}

// attempt is one request a check expects refused (with every want in the
// message) or let through (want nil).
type attempt struct {
	what   string
	create func(ctx context.Context) error
	want   []string
}

func jobAttempt(what string, j *batchv1.Job, want ...string) attempt {
	return attempt{what, func(ctx context.Context) error {
		_, err := env.cp.Kube.BatchV1().Jobs(j.Namespace).Create(ctx, j, dryRun)
		return err
	}, want}
}

func podAttempt(what string, p *corev1.Pod, want ...string) attempt {
	return attempt{what, func(ctx context.Context) error {
		_, err := env.cp.Kube.CoreV1().Pods(p.Namespace).Create(ctx, p, dryRun)
		return err
	}, want}
}

// probesRun counts the probes of the guardrails' checks, for the log.
var probesRun int

// try runs the attempts and reports each outcome that is not the expected
// one; every refusal's message is logged, for the report.
func try(t *testing.T, attempts []attempt) {
	t.Helper()
	for _, a := range attempts {
		probesRun++
		probe.Judge(t, a.what, a.create(ctxFor(t)), a.want)
	}
	t.Logf("%d probes in this check, %d in the guardrails' checks so far", len(attempts), probesRun)
}

// teamUser is a team's namespace admin, with typed and dynamic clients that
// authenticate with its service account token.
type teamUser struct {
	name string
	ns   string
	kube kubernetes.Interface
	dyn  dynamic.Interface
}

// e2eWorkloadsAdmin aggregates the covered CRD kinds into the built-in
// admin ClusterRole, as their operators' installs do.
func e2eWorkloadsAdmin() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tenancy-e2e-workloads-admin", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
		Rules: []rbacv1.PolicyRule{{
			APIGroups: []string{"kubeflow.org", "ray.io", "leaderworkerset.x-k8s.io", "scheduling.run.ai", "resource.k8s.io",
				"jobset.x-k8s.io", "trainer.kubeflow.org", "workload.codeflare.dev"},
			Resources: []string{"*"}, Verbs: []string{"*"},
		}},
	}
}

// newTeamUser creates ServiceAccount sa in ns, binds it to admin there and
// returns clients with its token, once the API server authorizes it to
// create Jobs and PyTorchJobs (the aggregation controller fills admin).
func newTeamUser(t *testing.T, ns, sa string) *teamUser {
	t.Helper()
	ctx := ctxFor(t)
	kube := env.cp.Kube
	ignoreExists := func(what string, err error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	_, err := kube.RbacV1().ClusterRoles().Create(ctx, e2eWorkloadsAdmin(), metav1.CreateOptions{})
	ignoreExists("create the aggregated workloads role", err)
	_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	ignoreExists("create ServiceAccount "+ns+"/"+sa, err)
	_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenancy-e2e-" + sa + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{})
	ignoreExists("bind admin", err)
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	cfg := rest.CopyConfig(env.cp.Config)
	cfg.CertData, cfg.KeyData, cfg.BearerToken = nil, nil, tok.Status.Token
	u := &teamUser{name: "system:serviceaccount:" + ns + ":" + sa, ns: ns}
	if u.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if u.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	for _, ra := range []authorizationv1.ResourceAttributes{
		{Namespace: ns, Verb: "create", Group: "batch", Resource: "jobs"},
		{Namespace: ns, Verb: "create", Group: "kubeflow.org", Resource: "pytorchjobs"},
	} {
		waitFor(t, u.name+" may create "+ra.Resource, func(ctx context.Context) (bool, string) {
			r, err := u.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, metav1.CreateOptions{})
			if err != nil {
				return false, err.Error()
			}
			return r.Status.Allowed, r.Status.Reason
		})
	}
	return u
}

// typeMeta maps each resource the probes create to its apiVersion and kind.
var typeMeta = map[schema.GroupVersionResource][2]string{
	podsRes:    {"v1", "Pod"},
	jobsRes:    {"batch/v1", "Job"},
	cronRes:    {"batch/v1", "CronJob"},
	deployRes:  {"apps/v1", "Deployment"},
	stsRes:     {"apps/v1", "StatefulSet"},
	rsRes:      {"apps/v1", "ReplicaSet"},
	dsRes:      {"apps/v1", "DaemonSet"},
	rcRes:      {"v1", "ReplicationController"},
	claimRes:   {"resource.k8s.io/v1", "ResourceClaim"},
	claimTRes:  {"resource.k8s.io/v1", "ResourceClaimTemplate"},
	jobSetRes:  {"jobset.x-k8s.io/v1alpha2", "JobSet"},
	trainRes:   {"trainer.kubeflow.org/v1alpha1", "TrainJob"},
	awRes:      {"workload.codeflare.dev/v1beta2", "AppWrapper"},
	podGrpRes:  {"scheduling.run.ai/v2alpha2", "PodGroup"},
	pytorchRes: {"kubeflow.org/v1", "PyTorchJob"},
	tfRes:      {"kubeflow.org/v1", "TFJob"},
	xgbRes:     {"kubeflow.org/v1", "XGBoostJob"},
	paddleRes:  {"kubeflow.org/v1", "PaddleJob"},
	jaxRes:     {"kubeflow.org/v1", "JAXJob"},
	mpiRes:     {"kubeflow.org/v1", "MPIJob"},
	rayJobRes:  {"ray.io/v1", "RayJob"},
	rayCluRes:  {"ray.io/v1", "RayCluster"},
	raySvcRes:  {"ray.io/v1", "RayService"},
	lwsRes:     {"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"},
}

var (
	podsRes    = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	jobsRes    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	cronRes    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	deployRes  = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	stsRes     = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	rsRes      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	dsRes      = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	rcRes      = schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}
	claimRes   = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	claimTRes  = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"}
	jobSetRes  = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	trainRes   = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	awRes      = schema.GroupVersionResource{Group: "workload.codeflare.dev", Version: "v1beta2", Resource: "appwrappers"}
	podGrpRes  = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}
	pytorchRes = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	tfRes      = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}
	xgbRes     = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "xgboostjobs"}
	paddleRes  = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "paddlejobs"}
	jaxRes     = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "jaxjobs"}
	mpiRes     = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}
	rayJobRes  = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	rayCluRes  = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	raySvcRes  = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
	lwsRes     = schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
)

// toUnstructured converts a typed object (or passes an unstructured one)
// and sets the apiVersion and kind of its resource.
func toUnstructured(t *testing.T, gvr schema.GroupVersionResource, obj any) *unstructured.Unstructured {
	t.Helper()
	var u *unstructured.Unstructured
	if uo, ok := obj.(*unstructured.Unstructured); ok {
		u = uo.DeepCopy()
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			t.Fatal(err)
		}
		u = &unstructured.Unstructured{Object: m}
	}
	tm, ok := typeMeta[gvr]
	if !ok {
		t.Fatalf("no kind for %s", gvr)
	}
	u.SetAPIVersion(tm[0])
	u.SetKind(tm[1])
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

// probe is a dry-run create of obj by the user.
func (u *teamUser) probe(t *testing.T, what string, gvr schema.GroupVersionResource, obj any, want ...string) attempt {
	t.Helper()
	uo := toUnstructured(t, gvr, obj)
	if uo.GetNamespace() == "" {
		uo.SetNamespace(u.ns)
	}
	if uo.GetName() == "" {
		uo.SetName("probe")
	}
	return attempt{what, func(ctx context.Context) error {
		_, err := u.dyn.Resource(gvr).Namespace(uo.GetNamespace()).Create(ctx, uo, dryRun)
		return err
	}, want}
}

// create creates obj for real, by the user.
func (u *teamUser) create(t *testing.T, gvr schema.GroupVersionResource, obj any) *unstructured.Unstructured {
	t.Helper()
	uo := toUnstructured(t, gvr, obj)
	got, err := u.dyn.Resource(gvr).Namespace(u.ns).Create(ctxFor(t), uo, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s creates %s %s: %v", u.name, uo.GetKind(), uo.GetName(), err)
	}
	return got
}

// waitPoliciesEnforced waits until the API server enforces the rendered
// policies (its admission plugin picks them up from an informer) and has
// type-checked them against the matched kinds' schemas: a warning there is
// a CEL expression that refers to a field or function that does not exist.
func waitPoliciesEnforced(t *testing.T, objs []*unstructuredObj, probe attempt) {
	t.Helper()
	policies := byKind(objs, "ValidatingAdmissionPolicy")
	if len(policies) == 0 {
		t.Fatal("the render has no ValidatingAdmissionPolicy")
	}
	waitFor(t, "the queue policies enforced", func(ctx context.Context) (bool, string) {
		err := probe.create(ctx)
		return err != nil, fmt.Sprintf("%s still let through", probe.what)
	})
	for _, p := range policies {
		waitFor(t, "policy "+p.GetName()+" type-checked", func(ctx context.Context) (bool, string) {
			live, err := env.cp.Dynamic.Resource(vapGVR).Get(ctx, p.GetName(), metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			gen, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
			if gen != live.GetGeneration() {
				return false, fmt.Sprintf("observedGeneration %d of %d", gen, live.GetGeneration())
			}
			warnings, _, _ := unstructured.NestedSlice(live.Object, "status", "typeChecking", "expressionWarnings")
			for _, w := range warnings {
				t.Errorf("policy %s: the API server's type check warns: %v", p.GetName(), w)
			}
			return true, ""
		})
	}
}

// waitParams waits until the API server answers a as the agreement's data
// in the policy says (refused with a.want[0], or let through): the
// admission plugin reads policies through an informer, so a changed
// agreement is in force a moment after it is applied.
func waitParams(t *testing.T, a attempt) {
	t.Helper()
	waitFor(t, "the agreement's data in force ("+a.what+")", func(ctx context.Context) (bool, string) {
		err := a.create(ctx)
		if a.want == nil {
			return err == nil, fmt.Sprint(err)
		}
		return err != nil && strings.Contains(err.Error(), a.want[0]), fmt.Sprint(err)
	})
}

// Builders of the probes' objects.

func withOwner[T metav1.Object](o T, kind string) T {
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: "forged", UID: "0a0a0a0a-0000-0000-0000-000000000000", Controller: ptr.To(true)}})
	return o
}

func podWith(labels map[string]string, spec corev1.PodSpec, f func(*corev1.Pod)) *corev1.Pod {
	p := guardPod("", "probe", labels, spec)
	if f != nil {
		f(p)
	}
	return p
}

func specWith(s corev1.PodSpec, f func(*corev1.PodSpec)) corev1.PodSpec { f(&s); return s }

func cronJob(ownLabels, jobLabels map[string]string, spec corev1.PodSpec) *batchv1.CronJob {
	return &batchv1.CronJob{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: ownLabels},
		Spec: batchv1.CronJobSpec{Schedule: "@daily", JobTemplate: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: jobLabels},
			Spec:       batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: spec}},
		}},
	}
}

func selectorFor(name string) (*metav1.LabelSelector, map[string]string) {
	l := map[string]string{"app": name}
	return &metav1.LabelSelector{MatchLabels: l}, l
}

func deploymentOf(name string, labels, templateLabels map[string]string, spec corev1.PodSpec) *appsv1.Deployment {
	sel, l := selectorFor(name)
	for k, v := range templateLabels {
		l[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func statefulSetOf(labels map[string]string, spec corev1.PodSpec) *appsv1.StatefulSet {
	sel, l := selectorFor("probe")
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: labels},
		Spec:       appsv1.StatefulSetSpec{Selector: sel, ServiceName: "probe", Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func replicaSetOf(labels map[string]string, spec corev1.PodSpec) *appsv1.ReplicaSet {
	sel, l := selectorFor("probe")
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: labels},
		Spec:       appsv1.ReplicaSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func daemonSetOf(spec corev1.PodSpec) *appsv1.DaemonSet {
	sel, l := selectorFor("probe")
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec:       appsv1.DaemonSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func replicationControllerOf(spec corev1.PodSpec) *corev1.ReplicationController {
	_, l := selectorFor("probe")
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec:       corev1.ReplicationControllerSpec{Selector: l, Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

// podTemplate is a pod template as a CRD holds it.
func podTemplate(t *testing.T, spec corev1.PodSpec) map[string]any {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	delete(m["metadata"].(map[string]any), "creationTimestamp")
	return m
}

// toAny is a label map as unstructured objects hold it.
func toAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func custom(labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "probe"}, "spec": spec}}
	u.SetLabels(labels)
	return u
}

// kubeflowJob is a Kubeflow training-operator v1 job with one Worker
// replica type (MPIJob: a Launcher).
func kubeflowJob(t *testing.T, field, replica string, labels map[string]string, spec corev1.PodSpec) *unstructured.Unstructured {
	return custom(labels, map[string]any{field: map[string]any{replica: map[string]any{"replicas": int64(1), "template": podTemplate(t, spec)}}})
}

func rayCluster(t *testing.T, head, worker corev1.PodSpec) map[string]any {
	return map[string]any{
		"headGroupSpec":    map[string]any{"rayStartParams": map[string]any{}, "template": podTemplate(t, head)},
		"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": int64(1), "minReplicas": int64(0), "maxReplicas": int64(1), "rayStartParams": map[string]any{}, "template": podTemplate(t, worker)}},
	}
}

func restartAlways(s corev1.PodSpec) corev1.PodSpec {
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}

// installWorkloadCRDs installs the CRDs of the covered kinds that Go modules
// ship: Kubeflow training-operator v1 (PyTorchJob, TFJob, XGBoostJob,
// PaddleJob, JAXJob, MPIJob v1), KubeRay (RayJob, RayCluster, RayService),
// LeaderWorkerSet, JobSet, Kubeflow Trainer v2 (TrainJob and its runtimes)
// and AppWrapper, fetched through the Go module proxy (the last three at
// the versions Kueue v0.17.0's go.mod names). The MPI operator's v2beta1 MPIJob is not installed: its
// CRD has the name of training-operator's (mpijobs.kubeflow.org).
func installWorkloadCRDs(t *testing.T) {
	t.Helper()
	sources := []struct{ module, dir string }{
		{"github.com/kubeflow/training-operator@v1.9.3", "manifests/base/crds"},
		{"github.com/ray-project/kuberay/ray-operator@v1.5.1", "config/crd/bases"},
		{"sigs.k8s.io/lws@v0.7.0", "config/crd/bases"},
		{"sigs.k8s.io/jobset@v0.11.1", "config/components/crd/bases"},
		{"github.com/kubeflow/trainer/v2@v2.2.0", "manifests/base/crds"},
		{"github.com/project-codeflare/appwrapper@v1.2.0", "config/crd/bases"},
	}
	var crds []*unstructuredObj
	for _, s := range sources {
		out, err := exec.Command("go", "mod", "download", "-json", s.module).Output()
		if err != nil {
			t.Fatalf("the CRDs of %s come from its Go module: go mod download: %v", s.module, err)
		}
		var mod struct{ Dir string }
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
			t.Fatalf("go mod download %s: no module directory in %s", s.module, out)
		}
		files, _ := filepath.Glob(filepath.Join(mod.Dir, s.dir, "*.yaml"))
		for _, f := range files {
			objs, err := controlplane.ReadManifestFile(f)
			if err != nil {
				t.Fatal(err)
			}
			crds = append(crds, byKind(objs, "CustomResourceDefinition")...)
		}
	}
	if len(crds) < 15 {
		t.Fatalf("found %d workload CRDs, want the 15 of training-operator, KubeRay, LWS, JobSet, Trainer and AppWrapper", len(crds))
	}
	ctx := ctxFor(t)
	// A loaded API server can time out on these large CRDs: try again.
	var err error
	for range 3 {
		if _, err = env.cp.Applier.Apply(ctx, crds, false); err == nil {
			break
		}
		t.Logf("install workload CRDs, again: %v", err)
	}
	if err != nil {
		t.Fatalf("install workload CRDs: %v", err)
	}
	// KubeRay's CRDs are large (every pod template field, several times):
	// on a loaded machine they take longer than the usual deadline.
	if err := env.cp.Applier.WaitCRDsEstablished(ctx, 110*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Check: with the reference agreement's Kueue render, a team's namespace
// admin cannot run GPU work outside the agreement by any of the ways the
// guardrails know (no queue or another team's, an owner they wrote, a kind
// no queue holds, a node or priority of their choice, a GPU resource or DRA
// claim the agreement does not share, every covered kind), and the same
// work written as the agreement wants, CPU-only work without a queue and
// the pods the real controllers make are let through; updates of fields the
// policy does not read are never checked.
func TestGuardrailsKueue(t *testing.T) {
	begin(t)
	installWorkloadCRDs(t)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	alice := newTeamUser(t, "training", "alice")
	// A team's own account named like a kube-controller-manager controller.
	lookalike := newTeamUser(t, "training", "job-controller")
	own := map[string]string{queueKey: "training"}
	other := map[string]string{queueKey: "research"}
	// The probe is refused by the Kueue render's policy only, not by the
	// KAI render's that an earlier check may have left behind.
	kaiOK := gpuPodSpec(gpu, 1)
	kaiOK.SchedulerName = "kai-scheduler"
	probe := alice.probe(t, "probe", jobsRes, guardJob("", "probe", map[string]string{"kai.scheduler/queue": "training"}, kaiOK), "x")
	waitPoliciesEnforced(t, objs, probe)
	// The API server reads the parameters through an informer too: wait
	// until the reference's GPU resources are the ones in force.
	waitParams(t, alice.probe(t, "an unshared MIG profile on its queue", podsRes, podWith(own, gpuPodSpec("nvidia.com/mig-1g.10gb", 1), nil), "does not share"))

	privileged := cpuPodSpec()
	privileged.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	initGPU := cpuPodSpec()
	initGPU.InitContainers = gpuPodSpec(gpu, 1).Containers
	initGPU.InitContainers[0].Name = "setup"
	dra := specWith(cpuPodSpec(), func(s *corev1.PodSpec) {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
		s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	})
	claim := &unstructured.Unstructured{Object: map[string]any{
		"metadata": map[string]any{"name": "probe"},
		"spec": map[string]any{"devices": map[string]any{"requests": []any{map[string]any{
			"name": "gpu", "exactly": map[string]any{"deviceClassName": "gpu.nvidia.com"},
		}}}},
	}}
	prio := func(p string) map[string]string { return map[string]string{queueKey: "training", prioKey: p} }
	ray := func(worker corev1.PodSpec) map[string]any {
		return rayCluster(t, restartAlways(cpuPodSpec()), restartAlways(worker))
	}
	refused := "add the label kueue.x-k8s.io/queue-name: training"
	try(t, []attempt{
		// Pods.
		alice.probe(t, "a bare GPU Pod without a queue", podsRes, podWith(nil, gpuPodSpec(gpu, 1), nil), "this Pod requests GPUs in namespace training of team training (tenancy agreement gpu-pool)", refused),
		alice.probe(t, "a GPU Pod naming another team's queue", podsRes, podWith(other, gpuPodSpec(gpu, 1), nil), "queue research is not this team's", "set the label kueue.x-k8s.io/queue-name: training"),
		alice.probe(t, "a GPU Pod on its team's queue", podsRes, podWith(own, gpuPodSpec(gpu, 1), nil)),
		alice.probe(t, "a CPU-only Pod without a queue", podsRes, podWith(nil, cpuPodSpec(), nil)),
		alice.probe(t, "a GPU Pod with a forged Job owner", podsRes, withOwner(podWith(nil, gpuPodSpec(gpu, 1), nil), "Job"), "names a controller owner, but system:serviceaccount:training:alice is not a trusted controller"),
		alice.probe(t, "a GPU Pod on its queue owned by a ConfigMap", podsRes, withOwner(podWith(own, gpuPodSpec(gpu, 1), nil), "ConfigMap"), "names a controller owner"),
		lookalike.probe(t, "a GPU Pod by the team's own account named job-controller", podsRes, withOwner(podWith(nil, gpuPodSpec(gpu, 1), nil), "Job"), "system:serviceaccount:training:job-controller is not a trusted controller"),
		alice.probe(t, "GPUs in an init container", podsRes, podWith(nil, initGPU, nil), refused),
		alice.probe(t, "priorityClassName system-node-critical on a GPU pod", podsRes, podWith(own, specWith(gpuPodSpec(gpu, 1), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil), "priority class system-node-critical is not a priority of the agreement gpu-pool"),
		alice.probe(t, "priorityClassName system-node-critical on a CPU pod", podsRes, podWith(nil, specWith(cpuPodSpec(), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil)),
		alice.probe(t, "spec.nodeName on a GPU pod", podsRes, podWith(own, specWith(gpuPodSpec(gpu, 1), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil), "sets spec.nodeName"),
		alice.probe(t, "spec.nodeName on a CPU pod", podsRes, podWith(nil, specWith(cpuPodSpec(), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil)),
		alice.probe(t, "a MIG profile the agreement does not share", podsRes, podWith(own, gpuPodSpec("nvidia.com/mig-1g.10gb", 1), nil), "asks for an nvidia.com/ resource that the agreement does not share", "ask for one of nvidia.com/gpu"),
		alice.probe(t, "another nvidia.com/ resource", podsRes, podWith(own, gpuPodSpec("nvidia.com/gpu.shared", 1), nil), "does not share"),
		alice.probe(t, "a resource that is no GPU, without a queue", podsRes, podWith(nil, gpuPodSpec("example.com/fpga", 1), nil)),
		alice.probe(t, "KAI's gpu-fraction annotation without a queue", podsRes, podWith(nil, cpuPodSpec(), func(p *corev1.Pod) { p.Annotations = map[string]string{"gpu-fraction": "0.5"} }), refused),
		alice.probe(t, "a DRA claim without a queue", podsRes, podWith(nil, dra, nil), refused),
		alice.probe(t, "a DRA claim on its team's queue", podsRes, podWith(own, dra, nil)),
		alice.probe(t, "a ResourceClaim of NVIDIA's DRA GPU class", claimRes, claim, "exceeded quota: tenancy-gpus", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"),
		alice.probe(t, "a privileged pod in a team namespace", podsRes, podWith(own, privileged, nil), `violates PodSecurity "baseline:latest"`, "privileged"),
		alice.probe(t, "a GPU Pod with a priority the agreement does not have", podsRes, podWith(prio("urgent"), gpuPodSpec(gpu, 1), nil), "priority urgent is not a priority of the agreement gpu-pool"),
		alice.probe(t, "a GPU Pod with a priority of the agreement", podsRes, podWith(prio("critical"), gpuPodSpec(gpu, 1), nil)),
		alice.probe(t, "a pod asking for more GPUs than the pool has, on its queue", podsRes, podWith(own, gpuPodSpec(gpu, 64), nil)),

		// Jobs.
		alice.probe(t, "a GPU Job without a queue", jobsRes, guardJob("", "probe", nil, gpuPodSpec(gpu, 8)), "this Job requests GPUs", refused),
		alice.probe(t, "a GPU Job naming another team's queue", jobsRes, guardJob("", "probe", other, gpuPodSpec(gpu, 8)), "queue research is not this team's"),
		alice.probe(t, "a GPU Job on its team's queue", jobsRes, guardJob("", "probe", own, gpuPodSpec(gpu, 8))),
		alice.probe(t, "a CPU-only Job without a queue", jobsRes, guardJob("", "probe", nil, cpuPodSpec())),
		alice.probe(t, "a GPU Job with a priority the agreement does not have", jobsRes, guardJob("", "probe", prio("urgent"), gpuPodSpec(gpu, 1)), "priority urgent is not a priority"),
		alice.probe(t, "a GPU Job with a priority of the agreement", jobsRes, guardJob("", "probe", prio("standard"), gpuPodSpec(gpu, 1))),
		alice.probe(t, "a GPU Job on its queue with a forged JobSet owner", jobsRes, withOwner(guardJob("", "probe", own, gpuPodSpec(gpu, 1)), "JobSet"), "names a controller owner"),
		alice.probe(t, "a GPU Job whose template sets nodeName", jobsRes, guardJob("", "probe", own, specWith(gpuPodSpec(gpu, 1), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" })), "sets spec.nodeName"),
		alice.probe(t, "a GPU Job asking for an unshared MIG profile", jobsRes, guardJob("", "probe", own, gpuPodSpec("nvidia.com/mig-3g.40gb", 1)), "does not share"),

		// CronJobs: their Jobs carry spec.jobTemplate's labels.
		alice.probe(t, "a GPU CronJob without a queue", cronRes, cronJob(nil, nil, gpuPodSpec(gpu, 1)), "this CronJob requests GPUs", refused),
		alice.probe(t, "a GPU CronJob with the queue on itself, not its jobTemplate", cronRes, cronJob(own, nil, gpuPodSpec(gpu, 1)), refused),
		alice.probe(t, "a GPU CronJob with its jobTemplate on its queue", cronRes, cronJob(nil, own, gpuPodSpec(gpu, 1))),
		alice.probe(t, "a GPU CronJob with another team's jobTemplate queue", cronRes, cronJob(nil, other, gpuPodSpec(gpu, 1)), "queue research is not this team's"),
		alice.probe(t, "a GPU CronJob with an unknown jobTemplate priority", cronRes, cronJob(nil, prio("urgent"), gpuPodSpec(gpu, 1)), "priority urgent is not a priority"),

		// Built-in kinds that make pods.
		alice.probe(t, "a GPU Deployment without a queue", deployRes, deploymentOf("probe", nil, nil, gpuAlways(1)), "this Deployment requests GPUs", refused),
		alice.probe(t, "a GPU Deployment on its team's queue", deployRes, deploymentOf("probe", own, nil, gpuAlways(1))),
		alice.probe(t, "a GPU Deployment naming another team's queue", deployRes, deploymentOf("probe", other, nil, gpuAlways(1)), "queue research is not this team's"),
		alice.probe(t, "a CPU-only Deployment without a queue", deployRes, deploymentOf("probe", nil, nil, cpuAlways())),
		alice.probe(t, "a GPU StatefulSet without a queue", stsRes, statefulSetOf(nil, gpuAlways(1)), "this StatefulSet requests GPUs"),
		alice.probe(t, "a GPU StatefulSet on its team's queue", stsRes, statefulSetOf(own, gpuAlways(1))),
		alice.probe(t, "a GPU ReplicaSet made by hand", rsRes, replicaSetOf(own, gpuAlways(1)), "a ReplicaSet that requests GPUs cannot wait in a queue"),
		alice.probe(t, "a CPU-only ReplicaSet", rsRes, replicaSetOf(nil, cpuAlways())),
		alice.probe(t, "a GPU DaemonSet", dsRes, daemonSetOf(gpuAlways(1)), "a DaemonSet that requests GPUs cannot wait in a queue"),
		alice.probe(t, "a CPU-only DaemonSet", dsRes, daemonSetOf(cpuAlways())),
		alice.probe(t, "a GPU ReplicationController", rcRes, replicationControllerOf(gpuAlways(1)), "a ReplicationController that requests GPUs cannot wait in a queue"),
		alice.probe(t, "a CPU-only ReplicationController", rcRes, replicationControllerOf(cpuAlways())),

		// Kinds of the operators Kueue integrates.
		alice.probe(t, "a GPU PyTorchJob without a queue", pytorchRes, kubeflowJob(t, "pytorchReplicaSpecs", "Worker", nil, gpuPodSpec(gpu, 1)), "this PyTorchJob requests GPUs"),
		alice.probe(t, "a GPU PyTorchJob on its team's queue", pytorchRes, kubeflowJob(t, "pytorchReplicaSpecs", "Worker", own, gpuPodSpec(gpu, 1))),
		alice.probe(t, "a GPU TFJob without a queue", tfRes, kubeflowJob(t, "tfReplicaSpecs", "Worker", nil, gpuPodSpec(gpu, 1)), "this TFJob requests GPUs"),
		alice.probe(t, "a GPU XGBoostJob without a queue", xgbRes, kubeflowJob(t, "xgbReplicaSpecs", "Worker", nil, gpuPodSpec(gpu, 1)), "this XGBoostJob requests GPUs"),
		alice.probe(t, "a GPU PaddleJob without a queue", paddleRes, kubeflowJob(t, "paddleReplicaSpecs", "Worker", nil, gpuPodSpec(gpu, 1)), "this PaddleJob requests GPUs"),
		alice.probe(t, "a GPU JAXJob without a queue", jaxRes, kubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, gpuPodSpec(gpu, 1)), "this JAXJob requests GPUs"),
		alice.probe(t, "a CPU-only JAXJob without a queue", jaxRes, kubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, cpuPodSpec())),
		alice.probe(t, "a GPU kubeflow.org/v1 MPIJob without a queue", mpiRes, kubeflowJob(t, "mpiReplicaSpecs", "Launcher", nil, gpuPodSpec(gpu, 1)), "this MPIJob requests GPUs"),
		alice.probe(t, "a RayJob with GPU workers without a queue", rayJobRes, custom(nil, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(gpuPodSpec(gpu, 1))}), "this RayJob requests GPUs"),
		alice.probe(t, "a RayJob with GPU workers on its queue", rayJobRes, custom(own, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(gpuPodSpec(gpu, 1))})),
		alice.probe(t, "a CPU-only RayCluster without a queue", rayCluRes, custom(nil, ray(cpuPodSpec()))),
		alice.probe(t, "a RayCluster with GPU workers without a queue", rayCluRes, custom(nil, ray(gpuPodSpec(gpu, 1))), "this RayCluster requests GPUs"),
		alice.probe(t, "a RayService with GPU workers without a queue", raySvcRes, custom(nil, map[string]any{"rayClusterConfig": ray(gpuPodSpec(gpu, 1))}), "this RayService requests GPUs"),
		alice.probe(t, "a GPU LeaderWorkerSet without a queue", lwsRes, custom(nil, map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": podTemplate(t, gpuAlways(1))}}), "this LeaderWorkerSet requests GPUs"),
		alice.probe(t, "a GPU LeaderWorkerSet on its team's queue", lwsRes, custom(own, map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": podTemplate(t, gpuAlways(1))}})),
	})

	// The real controllers: a GPU Job the team submits on its queue is
	// admitted by Kueue, and the Job controller (under its own service
	// account) creates its pods, with no queue label and an owner.
	j := alice.create(t, jobsRes, guardJob("training", "admitted", own, gpuPodSpec(gpu, 8)))
	jobObj := &batchv1.Job{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(j.Object, jobObj); err != nil {
		t.Fatal(err)
	}
	waitAdmitted(t, jobObj)
	waitPods(t, "the admitted Job's pod, made by the Job controller", "batch.kubernetes.io/job-name=admitted", 1)
	probesRun++
	finish(t, jobObj)

	// A GPU Deployment on the team's queue: the Deployment controller makes
	// its ReplicaSet and the ReplicaSet controller its pod.
	d := alice.create(t, deployRes, deploymentOf("gpu-service", own, nil, gpuAlways(1)))
	waitPods(t, "the Deployment's pod, made by the ReplicaSet controller", "app=gpu-service", 1)
	probesRun++
	if err := env.cp.Kube.AppsV1().Deployments("training").Delete(ctxFor(t), d.GetName(), deleteInBkg); err != nil {
		t.Fatal(err)
	}

	checkUpdates(t, objs, alice, probe)
}

// waitPods waits until n pods match selector in training.
func waitPods(t *testing.T, what, selector string, n int) {
	t.Helper()
	waitFor(t, what, func(ctx context.Context) (bool, string) {
		pods, err := env.cp.Kube.CoreV1().Pods("training").List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, err.Error()
		}
		return len(pods.Items) >= n, fmt.Sprintf("%d pods", len(pods.Items))
	})
	t.Logf("%s: let through", what)
}

// checkUpdates: a GPU pod that predates the guardrails (made while the
// binding was away) can still lose its finalizer, which is no field the
// policy reads; changing its labels is checked; so is moving a pod on its
// queue to another team's.
func checkUpdates(t *testing.T, objs []*unstructuredObj, alice *teamUser, probe attempt) {
	t.Helper()
	ctx := ctxFor(t)
	bindings := byKind(objs, "ValidatingAdmissionPolicyBinding")
	if len(bindings) != 1 {
		t.Fatalf("%d bindings in the render, want 1", len(bindings))
	}
	if err := env.cp.Dynamic.Resource(vapBindingGVR).Delete(ctx, bindings[0].GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	early := guardPod("training", "pre-guardrails", nil, gpuPodSpec(gpu, 1))
	early.Finalizers = []string{"tenancy.dev/e2e"}
	waitFor(t, "the binding gone from the API server's view", func(ctx context.Context) (bool, string) {
		_, err := alice.kube.CoreV1().Pods("training").Create(ctx, early, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err), fmt.Sprint(err)
	})
	t.Cleanup(func() {
		ctx := ctxFor(t)
		_, _ = env.cp.Kube.CoreV1().Pods("training").Patch(ctx, "pre-guardrails", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
		_ = env.cp.Kube.CoreV1().Pods("training").Delete(ctx, "pre-guardrails", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	})
	if _, err := env.cp.Applier.Apply(ctx, bindings, false); err != nil {
		t.Fatalf("re-apply the binding: %v", err)
	}
	waitPoliciesEnforced(t, objs, probe)
	onQueue := guardPod("training", "on-queue", map[string]string{queueKey: "training"}, gpuPodSpec(gpu, 1))
	if _, err := alice.kube.CoreV1().Pods("training").Create(ctx, onQueue, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a GPU pod on its queue: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().Pods("training").Delete(ctxFor(t), "on-queue", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	})
	patch := func(what, name, body string, want ...string) attempt {
		return attempt{what, func(ctx context.Context) error {
			_, err := alice.kube.CoreV1().Pods("training").Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}, want}
	}
	try(t, []attempt{
		patch("relabelling a GPU pod that predates the guardrails", "pre-guardrails", `{"metadata":{"labels":{"app":"x"}}}`, "add the label kueue.x-k8s.io/queue-name: training"),
		patch("removing the finalizer of a GPU pod that predates the guardrails", "pre-guardrails", `{"metadata":{"finalizers":null}}`),
		patch("moving a GPU pod to another team's queue", "on-queue", `{"metadata":{"labels":{"kueue.x-k8s.io/queue-name":"research"}}}`, "queue research is not this team's"),
		patch("annotating a GPU pod on its queue", "on-queue", `{"metadata":{"annotations":{"note":"x"}}}`),
	})
}

// Check: the multi-flavor agreement's MIG slices are GPUs to the policy.
func TestGuardrailsMIG(t *testing.T) {
	begin(t)
	ex := examples(t)
	path, ok := ex["multi-flavor"]
	if !ok {
		t.Fatal("no multi-flavor example")
	}
	objs := render(t, path)
	useAgreement(t, "multi-flavor", objs)
	u := newTeamUser(t, "notebooks", "alice")
	mig := guardPod("notebooks", "mig", nil, gpuPodSpec("nvidia.com/mig-1g.10gb", 1))
	waitPoliciesEnforced(t, objs, u.probe(t, "probe", podsRes, mig, "x"))
	waitParams(t, u.probe(t, "a MIG pod on its queue", podsRes, guardPod("notebooks", "mig-own", map[string]string{queueKey: "notebooks"}, gpuPodSpec("nvidia.com/mig-1g.10gb", 1))))
	try(t, []attempt{
		u.probe(t, "a MIG pod without a queue", podsRes, mig, "add the label kueue.x-k8s.io/queue-name: notebooks"),
		u.probe(t, "a MIG pod on its team's queue", podsRes, guardPod("notebooks", "mig-own", map[string]string{queueKey: "notebooks"}, gpuPodSpec("nvidia.com/mig-1g.10gb", 1))),
	})
}

// Check: with the reference agreement's KAI render (without the KAI
// scheduler: dry runs, and the Job controller's pods for real), a team's
// namespace admin cannot run GPU work outside the agreement in any way the
// Kueue check probes, nor by KAI's own ways: the default scheduler, no
// queue label or another team's on any covered kind (on the object or, as
// KAI reads it, on its pod templates; a CronJob's on its jobTemplate), KAI's
// project label, a preemptibility override, a PodGroup of its choosing by
// annotation or by creating one on another queue, a fractional GPU outside
// the queue, an owner it wrote (a controller's or not: KAI's podgrouper
// reads the queue of the top owner either way), a node, priority, GPU
// resource or DRA claim outside the agreement. The same work written as the
// agreement wants, CPU-only work without a queue, and the Job controller's
// pods are let through.
func TestGuardrailsKAI(t *testing.T) {
	begin(t)
	installKAICRDs(t)
	installWorkloadCRDs(t)
	objs := render(t, "--backend", "kai", "tenancy.toml")
	// The cluster no longer holds a Kueue agreement: the next check that
	// needs one starts from a clean slate, and the Kueue policy is back
	// in force before it runs (the API server picks policies up from an
	// informer, so a check right after would otherwise meet KAI's).
	currentFamily = ""
	// The render holds the team Namespaces, so the check runs alone too.
	if _, err := env.cp.Applier.Apply(ctxFor(t), objs, false); err != nil {
		t.Fatalf("apply the KAI render: %v", err)
	}
	alice := newTeamUser(t, "training", "alice")
	// A team's own account named like a kube-controller-manager controller.
	lookalike := newTeamUser(t, "training", "job-controller")
	t.Cleanup(func() {
		currentFamily = ""
		ref := reference(t)
		useAgreement(t, "reference", ref)
		kaiOK := gpuPodSpec(gpu, 1)
		kaiOK.SchedulerName = "kai-scheduler"
		waitPoliciesEnforced(t, ref, alice.probe(t, "probe", jobsRes, guardJob("", "probe", map[string]string{"kai.scheduler/queue": "training"}, kaiOK), "x"))
	})
	onKAI := func(s corev1.PodSpec) corev1.PodSpec { s.SchedulerName = "kai-scheduler"; return s }
	own := map[string]string{"kai.scheduler/queue": "training"}
	other := map[string]string{"kai.scheduler/queue": "research"}
	labelled := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	annotated := func(kv ...string) func(*corev1.Pod) {
		return func(p *corev1.Pod) { p.Annotations = labelled(kv...) }
	}
	podGroup := func(queue string) *unstructured.Unstructured {
		return custom(nil, map[string]any{"queue": queue, "minMember": int64(1)})
	}
	// The probe is refused by the KAI render's policy only.
	waitPoliciesEnforced(t, objs, alice.probe(t, "probe", podsRes, podWith(map[string]string{queueKey: "training"}, onKAI(gpuPodSpec(gpu, 1)), nil), "x"))
	refused := "add the label kai.scheduler/queue: training"
	// The builders of the Kueue check, with KAI's scheduler on every pod
	// template that asks for GPUs.
	kaiGPU := onKAI(gpuPodSpec(gpu, 1))
	kaiAlways := restartAlways(kaiGPU)
	withSpec := func(f func(*corev1.PodSpec)) corev1.PodSpec { return specWith(kaiGPU, f) }
	ray := func(worker corev1.PodSpec) map[string]any {
		return rayCluster(t, restartAlways(cpuPodSpec()), restartAlways(worker))
	}
	lws := func(worker corev1.PodSpec) map[string]any {
		return map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": podTemplate(t, worker)}}
	}
	jobSet := func(spec corev1.PodSpec, templateLabels map[string]string) map[string]any {
		tmpl := podTemplate(t, spec)
		if templateLabels != nil {
			tmpl["metadata"] = map[string]any{"labels": toAny(templateLabels)}
		}
		return map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "workers", "replicas": int64(1), "template": map[string]any{"spec": map[string]any{"template": tmpl}},
		}}}
	}
	trainJob := func(res map[string]any) map[string]any {
		s := map[string]any{"runtimeRef": map[string]any{"name": "torch-distributed"}}
		if res != nil {
			s["trainer"] = map[string]any{"resourcesPerNode": map[string]any{"limits": res}}
		}
		return s
	}
	appWrapper := map[string]any{"components": []any{map[string]any{"template": map[string]any{
		"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "wrapped"}, "spec": podTemplate(t, kaiGPU)["spec"],
	}}}}
	dra := specWith(onKAI(cpuPodSpec()), func(s *corev1.PodSpec) {
		s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("gpu")}}
		s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	})
	nvidiaClaim := map[string]any{"devices": map[string]any{"requests": []any{map[string]any{
		"name": "gpu", "exactly": map[string]any{"deviceClassName": "gpu.nvidia.com"},
	}}}}
	privileged := cpuPodSpec()
	privileged.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	initGPU := onKAI(cpuPodSpec())
	initGPU.InitContainers = gpuPodSpec(gpu, 1).Containers
	initGPU.InitContainers[0].Name = "setup"
	// An ownerReference that is no controller's: KAI's podgrouper follows
	// ownerReferences[0] all the same.
	plainOwner := func(p *corev1.Pod) *corev1.Pod {
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "queue-of-research", UID: "0a0a0a0a-0000-0000-0000-000000000001"}}
		return p
	}
	podWithTemplateLabels := func(j *batchv1.Job, l map[string]string) *batchv1.Job { j.Spec.Template.Labels = l; return j }
	ownedBy := "names an owner, but system:serviceaccount:training:alice is not a trusted controller"
	// An owned CPU-only Deployment the team may create (CPU work is not
	// guarded), owned by a ConfigMap of its own labelled with research's
	// queue: an update asking for GPUs is checked as a create would be.
	cm, err := alice.kube.CoreV1().ConfigMaps("training").Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "queue-of-research", Labels: other}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().ConfigMaps("training").Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	cpuOwned := deploymentOf("cpu-owned", own, nil, cpuAlways())
	cpuOwned.Spec.Replicas = ptr.To(int32(0))
	cpuOwned.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}}
	alice.create(t, deployRes, cpuOwned)
	t.Cleanup(func() {
		_ = env.cp.Kube.AppsV1().Deployments("training").Delete(context.Background(), "cpu-owned", metav1.DeleteOptions{})
	})
	patchDeployment := func(what, body string, want ...string) attempt {
		return attempt{what, func(ctx context.Context) error {
			_, err := alice.kube.AppsV1().Deployments("training").Patch(ctx, "cpu-owned", types.StrategicMergePatchType, []byte(body), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		}, want}
	}
	toGPU := `{"spec":{"template":{"spec":{"schedulerName":"kai-scheduler","containers":[{"name":"work","resources":{"limits":{"nvidia.com/gpu":"1"},"requests":{"nvidia.com/gpu":"1"}}}]}}}}`
	try(t, []attempt{
		patchDeployment("an owned CPU Deployment updated to ask for GPUs", toGPU, "this Deployment requests GPUs and names an owner"),
		patchDeployment("an owned CPU Deployment relabelled", `{"metadata":{"labels":{"app":"relabelled"}}}`),

		// Pods: the queue, the scheduler, KAI's labels and annotations.
		alice.probe(t, "a GPU pod on the default scheduler", podsRes, podWith(own, gpuPodSpec(gpu, 1), nil), "team training", "set spec.schedulerName: kai-scheduler"),
		alice.probe(t, "a GPU pod naming another team's queue", podsRes, podWith(other, kaiGPU, nil), "queue research is not this team's", "kai.scheduler/queue: training"),
		alice.probe(t, "a bare GPU pod without a queue label", podsRes, podWith(nil, kaiGPU, nil), "this Pod requests GPUs in namespace training of team training (tenancy agreement gpu-pool)", refused),
		alice.probe(t, "a GPU pod on kai-scheduler with its own queue label", podsRes, podWith(own, kaiGPU, nil)),
		alice.probe(t, "a CPU pod on the default scheduler", podsRes, podWith(nil, cpuPodSpec(), nil)),
		alice.probe(t, "a CPU pod on kai-scheduler without a queue", podsRes, podWith(nil, onKAI(cpuPodSpec()), nil)),
		alice.probe(t, "KAI's project label instead of the queue label", podsRes, podWith(labelled("project", "research"), kaiGPU, nil), refused),
		alice.probe(t, "KAI's project label beside its own queue label", podsRes, podWith(labelled("kai.scheduler/queue", "training", "project", "research"), kaiGPU, nil)),
		alice.probe(t, "a non-preemptible override", podsRes, podWith(labelled("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "non-preemptible"), kaiGPU, nil), "may only make GPU work preemptible"),
		alice.probe(t, "a preemptible override", podsRes, podWith(labelled("kai.scheduler/queue", "training", "kai.scheduler/preemptibility", "preemptible"), kaiGPU, nil)),
		alice.probe(t, "joining a PodGroup by annotation", podsRes, podWith(own, kaiGPU, annotated("pod-group-name", "pg-of-research")), "chooses its own PodGroup"),
		alice.probe(t, "skipping the podgrouper", podsRes, podWith(own, kaiGPU, annotated("kai.scheduler/skip-podgrouper", "true")), "chooses its own PodGroup"),
		alice.probe(t, "a fractional GPU without a queue label", podsRes, podWith(nil, onKAI(cpuPodSpec()), annotated("gpu-fraction", "0.5")), refused),
		alice.probe(t, "a fractional GPU on another team's queue", podsRes, podWith(other, onKAI(cpuPodSpec()), annotated("gpu-fraction", "0.5")), "queue research is not this team's"),
		alice.probe(t, "a gpu-memory pod on the default scheduler", podsRes, podWith(own, cpuPodSpec(), annotated("gpu-memory", "4000")), "set spec.schedulerName"),
		alice.probe(t, "a fractional GPU on its team's queue", podsRes, podWith(own, onKAI(cpuPodSpec()), annotated("gpu-fraction", "0.5"))),
		alice.probe(t, "spec.nodeName on a GPU pod", podsRes, podWith(own, withSpec(func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil), "sets spec.nodeName"),
		alice.probe(t, "spec.nodeName on a CPU pod", podsRes, podWith(nil, specWith(cpuPodSpec(), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil)),
		alice.probe(t, "GPUs in an init container", podsRes, podWith(nil, initGPU, nil), refused),
		alice.probe(t, "a pod asking for more GPUs than the pool has, on its queue", podsRes, podWith(own, onKAI(gpuPodSpec(gpu, 64)), nil)),

		// Owners: only a trusted controller makes owned GPU objects.
		alice.probe(t, "a GPU pod owned by a ConfigMap labelled with its queue", podsRes, withOwner(podWith(own, kaiGPU, nil), "ConfigMap"), ownedBy, "KAI's podgrouper reads the queue of the top owner"),
		alice.probe(t, "a GPU pod with a forged Job owner", podsRes, withOwner(podWith(nil, kaiGPU, nil), "Job"), ownedBy),
		alice.probe(t, "a GPU pod with a non-controller owner", podsRes, plainOwner(podWith(own, kaiGPU, nil)), ownedBy),
		alice.probe(t, "a CPU pod with a non-controller owner", podsRes, plainOwner(podWith(nil, cpuPodSpec(), nil))),
		lookalike.probe(t, "a GPU pod by the team's own account named job-controller", podsRes, withOwner(podWith(nil, kaiGPU, nil), "Job"), "system:serviceaccount:training:job-controller is not a trusted controller"),
		alice.probe(t, "a GPU Job on its queue with a forged JobSet owner", jobsRes, withOwner(guardJob("", "probe", own, kaiGPU), "JobSet"), "this Job requests GPUs and names an owner"),
		alice.probe(t, "a GPU Deployment on its queue with a forged owner", deployRes, withOwner(deploymentOf("probe", own, nil, kaiAlways), "ConfigMap"), "this Deployment requests GPUs and names an owner"),

		// GPUs the agreement does not share, DRA, priorities, Pod Security.
		alice.probe(t, "a MIG profile the agreement does not share", podsRes, podWith(own, onKAI(gpuPodSpec("nvidia.com/mig-1g.10gb", 1)), nil), "asks for an nvidia.com/ resource that the agreement does not share", "ask for one of nvidia.com/gpu"),
		alice.probe(t, "another nvidia.com/ resource", podsRes, podWith(own, onKAI(gpuPodSpec("nvidia.com/gpu.shared", 1)), nil), "does not share"),
		alice.probe(t, "a resource that is no GPU, without a queue", podsRes, podWith(nil, gpuPodSpec("example.com/fpga", 1), nil)),
		alice.probe(t, "a DRA claim without a queue", podsRes, podWith(nil, dra, nil), refused),
		alice.probe(t, "a DRA claim on the default scheduler", podsRes, podWith(own, specWith(dra, func(s *corev1.PodSpec) { s.SchedulerName = "" }), nil), "set spec.schedulerName"),
		alice.probe(t, "a DRA claim on its team's queue", podsRes, podWith(own, dra, nil)),
		alice.probe(t, "a ResourceClaim of NVIDIA's DRA GPU class", claimRes, custom(nil, nvidiaClaim), "exceeded quota: tenancy-gpus", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"),
		// A template claims nothing: the claims made from it meet the quota.
		alice.probe(t, "a ResourceClaimTemplate of NVIDIA's DRA GPU class", claimTRes, custom(nil, map[string]any{"spec": nvidiaClaim})),
		alice.probe(t, "priorityClassName system-node-critical on a GPU pod", podsRes, podWith(own, withSpec(func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil), "priority class system-node-critical is not a priority of the agreement gpu-pool"),
		alice.probe(t, "priorityClassName system-node-critical on a CPU pod", podsRes, podWith(nil, specWith(cpuPodSpec(), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil)),
		alice.probe(t, "priorityClassName of the agreement on a GPU pod", podsRes, podWith(own, withSpec(func(s *corev1.PodSpec) { s.PriorityClassName = "critical" }), nil)),
		alice.probe(t, "a priority label outside the agreement", jobsRes, guardJob("", "probe", labelled("kai.scheduler/queue", "training", "priorityClassName", "system-node-critical"), kaiGPU), "priority class system-node-critical is not a priority"),
		alice.probe(t, "a priority label of the agreement", jobsRes, guardJob("", "probe", labelled("kai.scheduler/queue", "training", "priorityClassName", "critical"), kaiGPU)),
		alice.probe(t, "Kueue's priority label is not KAI's", jobsRes, guardJob("", "probe", labelled("kai.scheduler/queue", "training", prioKey, "urgent"), kaiGPU)),
		alice.probe(t, "a privileged pod in a team namespace", podsRes, podWith(own, privileged, nil), `violates PodSecurity "baseline:latest"`, "privileged"),

		// Jobs.
		alice.probe(t, "a GPU Job without a queue label", jobsRes, guardJob("", "probe", nil, kaiGPU), "this Job requests GPUs", refused),
		alice.probe(t, "a GPU Job with its own queue label", jobsRes, guardJob("", "probe", own, kaiGPU)),
		alice.probe(t, "a GPU Job naming another team's queue", jobsRes, guardJob("", "probe", other, kaiGPU), "queue research is not this team's"),
		alice.probe(t, "a GPU Job on the default scheduler", jobsRes, guardJob("", "probe", own, gpuPodSpec(gpu, 1)), "set spec.schedulerName: kai-scheduler"),
		alice.probe(t, "a CPU-only Job without a queue", jobsRes, guardJob("", "probe", nil, cpuPodSpec())),
		alice.probe(t, "a GPU Job with the queue on its pod template only", jobsRes, podWithTemplateLabels(guardJob("", "probe", nil, kaiGPU), own)),
		alice.probe(t, "a GPU Job with another team's queue on its pod template", jobsRes, podWithTemplateLabels(guardJob("", "probe", nil, kaiGPU), other), "queue research is not this team's"),
		alice.probe(t, "a GPU Job whose template sets nodeName", jobsRes, guardJob("", "probe", own, withSpec(func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" })), "sets spec.nodeName"),
		alice.probe(t, "a GPU Job asking for an unshared MIG profile", jobsRes, guardJob("", "probe", own, onKAI(gpuPodSpec("nvidia.com/mig-3g.40gb", 1))), "does not share"),
		alice.probe(t, "a GPU Job whose template has a priority outside the agreement", jobsRes, guardJob("", "probe", own, withSpec(func(s *corev1.PodSpec) { s.PriorityClassName = "system-cluster-critical" })), "priority class system-cluster-critical is not a priority"),
		alice.probe(t, "a GPU Job whose pod template is non-preemptible", jobsRes, podWithTemplateLabels(guardJob("", "probe", own, kaiGPU), labelled("kai.scheduler/preemptibility", "non-preemptible")), "may only make GPU work preemptible"),

		// CronJobs: KAI takes their Jobs, which carry spec.jobTemplate's
		// labels, for the top owner.
		alice.probe(t, "a GPU CronJob without a queue", cronRes, cronJob(nil, nil, kaiGPU), "this CronJob requests GPUs", refused),
		alice.probe(t, "a GPU CronJob with the queue on itself, not its jobTemplate", cronRes, cronJob(own, nil, kaiGPU), refused),
		alice.probe(t, "a GPU CronJob with its jobTemplate on its queue", cronRes, cronJob(nil, own, kaiGPU)),
		alice.probe(t, "a GPU CronJob with another team's jobTemplate queue", cronRes, cronJob(own, other, kaiGPU), "queue research is not this team's"),
		alice.probe(t, "a GPU CronJob with a jobTemplate priority label outside the agreement", cronRes, cronJob(nil, labelled("kai.scheduler/queue", "training", "priorityClassName", "system-node-critical"), kaiGPU), "priority class system-node-critical is not a priority"),

		// Built-in kinds that make pods.
		alice.probe(t, "a GPU Deployment without a queue", deployRes, deploymentOf("probe", nil, nil, kaiAlways), "this Deployment requests GPUs", refused),
		alice.probe(t, "a GPU Deployment on its team's queue", deployRes, deploymentOf("probe", own, nil, kaiAlways)),
		alice.probe(t, "a GPU Deployment with the queue on its pod template only", deployRes, deploymentOf("probe", nil, own, kaiAlways)),
		alice.probe(t, "a GPU Deployment naming another team's queue", deployRes, deploymentOf("probe", other, nil, kaiAlways), "queue research is not this team's"),
		alice.probe(t, "a GPU Deployment with another team's queue on its template", deployRes, deploymentOf("probe", nil, other, kaiAlways), "queue research is not this team's"),
		alice.probe(t, "a GPU Deployment on the default scheduler", deployRes, deploymentOf("probe", own, nil, gpuAlways(1)), "set spec.schedulerName: kai-scheduler"),
		alice.probe(t, "a CPU-only Deployment without a queue", deployRes, deploymentOf("probe", nil, nil, cpuAlways())),
		alice.probe(t, "a GPU StatefulSet without a queue", stsRes, statefulSetOf(nil, kaiAlways), "this StatefulSet requests GPUs", refused),
		alice.probe(t, "a GPU StatefulSet on its team's queue", stsRes, statefulSetOf(own, kaiAlways)),
		alice.probe(t, "a GPU StatefulSet naming another team's queue", stsRes, statefulSetOf(other, kaiAlways), "queue research is not this team's"),
		alice.probe(t, "a GPU ReplicaSet on its team's queue", rsRes, replicaSetOf(own, kaiAlways)),
		alice.probe(t, "a GPU ReplicaSet without a queue", rsRes, replicaSetOf(nil, kaiAlways), "this ReplicaSet requests GPUs", refused),
		alice.probe(t, "a CPU-only ReplicaSet", rsRes, replicaSetOf(nil, cpuAlways())),
		alice.probe(t, "a GPU DaemonSet", dsRes, daemonSetOf(kaiAlways), "a DaemonSet that requests GPUs cannot wait in a queue"),
		alice.probe(t, "a CPU-only DaemonSet", dsRes, daemonSetOf(cpuAlways())),
		alice.probe(t, "a GPU ReplicationController", rcRes, replicationControllerOf(kaiAlways), "a ReplicationController that requests GPUs cannot wait in a queue"),
		alice.probe(t, "a CPU-only ReplicationController", rcRes, replicationControllerOf(cpuAlways())),

		// Kubeflow training-operator v1.
		alice.probe(t, "a GPU PyTorchJob without a queue", pytorchRes, kubeflowJob(t, "pytorchReplicaSpecs", "Worker", nil, kaiGPU), "this PyTorchJob requests GPUs", refused),
		alice.probe(t, "a GPU PyTorchJob on its team's queue", pytorchRes, kubeflowJob(t, "pytorchReplicaSpecs", "Worker", own, kaiGPU)),
		alice.probe(t, "a GPU PyTorchJob naming another team's queue", pytorchRes, kubeflowJob(t, "pytorchReplicaSpecs", "Worker", other, kaiGPU), "queue research is not this team's"),
		alice.probe(t, "a GPU PyTorchJob on the default scheduler", pytorchRes, kubeflowJob(t, "pytorchReplicaSpecs", "Worker", own, gpuPodSpec(gpu, 1)), "set spec.schedulerName: kai-scheduler"),
		alice.probe(t, "a GPU TFJob without a queue", tfRes, kubeflowJob(t, "tfReplicaSpecs", "Worker", nil, kaiGPU), "this TFJob requests GPUs"),
		alice.probe(t, "a GPU TFJob on its team's queue", tfRes, kubeflowJob(t, "tfReplicaSpecs", "Worker", own, kaiGPU)),
		alice.probe(t, "a GPU XGBoostJob without a queue", xgbRes, kubeflowJob(t, "xgbReplicaSpecs", "Worker", nil, kaiGPU), "this XGBoostJob requests GPUs"),
		alice.probe(t, "a GPU XGBoostJob on its team's queue", xgbRes, kubeflowJob(t, "xgbReplicaSpecs", "Worker", own, kaiGPU)),
		alice.probe(t, "a GPU PaddleJob without a queue", paddleRes, kubeflowJob(t, "paddleReplicaSpecs", "Worker", nil, kaiGPU), "this PaddleJob requests GPUs"),
		alice.probe(t, "a GPU PaddleJob naming another team's queue", paddleRes, kubeflowJob(t, "paddleReplicaSpecs", "Worker", other, kaiGPU), "queue research is not this team's"),
		alice.probe(t, "a GPU JAXJob without a queue", jaxRes, kubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, kaiGPU), "this JAXJob requests GPUs"),
		alice.probe(t, "a GPU JAXJob on its team's queue", jaxRes, kubeflowJob(t, "jaxReplicaSpecs", "Worker", own, kaiGPU)),
		alice.probe(t, "a CPU-only JAXJob without a queue", jaxRes, kubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, cpuPodSpec())),
		alice.probe(t, "a GPU kubeflow.org/v1 MPIJob without a queue", mpiRes, kubeflowJob(t, "mpiReplicaSpecs", "Launcher", nil, kaiGPU), "this MPIJob requests GPUs"),
		alice.probe(t, "a GPU kubeflow.org/v1 MPIJob on its team's queue", mpiRes, kubeflowJob(t, "mpiReplicaSpecs", "Launcher", own, kaiGPU)),

		// KubeRay, LeaderWorkerSet, JobSet, Trainer v2, AppWrapper.
		alice.probe(t, "a RayJob with GPU workers without a queue", rayJobRes, custom(nil, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(kaiGPU)}), "this RayJob requests GPUs", refused),
		alice.probe(t, "a RayJob with GPU workers on its queue", rayJobRes, custom(own, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(kaiGPU)})),
		alice.probe(t, "a RayJob naming another team's queue", rayJobRes, custom(other, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(kaiGPU)}), "queue research is not this team's"),
		alice.probe(t, "a CPU-only RayCluster without a queue", rayCluRes, custom(nil, ray(cpuPodSpec()))),
		alice.probe(t, "a RayCluster with GPU workers without a queue", rayCluRes, custom(nil, ray(kaiGPU)), "this RayCluster requests GPUs"),
		alice.probe(t, "a RayCluster with GPU workers on its queue", rayCluRes, custom(own, ray(kaiGPU))),
		alice.probe(t, "a RayCluster with GPU workers on the default scheduler", rayCluRes, custom(own, ray(gpuPodSpec(gpu, 1))), "set spec.schedulerName: kai-scheduler"),
		alice.probe(t, "a RayService with GPU workers without a queue", raySvcRes, custom(nil, map[string]any{"rayClusterConfig": ray(kaiGPU)}), "this RayService requests GPUs"),
		alice.probe(t, "a RayService with GPU workers on its queue", raySvcRes, custom(own, map[string]any{"rayClusterConfig": ray(kaiGPU)})),
		alice.probe(t, "a GPU LeaderWorkerSet without a queue", lwsRes, custom(nil, lws(kaiAlways)), "this LeaderWorkerSet requests GPUs"),
		alice.probe(t, "a GPU LeaderWorkerSet on its team's queue", lwsRes, custom(own, lws(kaiAlways))),
		alice.probe(t, "a GPU LeaderWorkerSet naming another team's queue", lwsRes, custom(other, lws(kaiAlways)), "queue research is not this team's"),
		alice.probe(t, "a GPU JobSet without a queue", jobSetRes, custom(nil, jobSet(kaiGPU, nil)), "this JobSet requests GPUs", refused),
		alice.probe(t, "a GPU JobSet on its team's queue", jobSetRes, custom(own, jobSet(kaiGPU, nil))),
		alice.probe(t, "a GPU JobSet with the queue on its pod template only", jobSetRes, custom(nil, jobSet(kaiGPU, own))),
		alice.probe(t, "a GPU JobSet naming another team's queue", jobSetRes, custom(other, jobSet(kaiGPU, nil)), "queue research is not this team's"),
		alice.probe(t, "a CPU-only JobSet without a queue", jobSetRes, custom(nil, jobSet(cpuPodSpec(), nil))),
		alice.probe(t, "a TrainJob leaving resources to its runtime, without a queue", trainRes, custom(nil, trainJob(nil)), "this TrainJob requests GPUs", refused),
		alice.probe(t, "a TrainJob with GPUs per node on its team's queue", trainRes, custom(own, trainJob(map[string]any{"nvidia.com/gpu": "1"}))),
		alice.probe(t, "a TrainJob naming another team's queue", trainRes, custom(other, trainJob(map[string]any{"nvidia.com/gpu": "1"})), "queue research is not this team's"),
		alice.probe(t, "a CPU-only TrainJob without a queue", trainRes, custom(nil, trainJob(map[string]any{"cpu": "4"}))),
		alice.probe(t, "an AppWrapper without a queue", awRes, custom(nil, appWrapper), "this AppWrapper requests GPUs", refused),
		alice.probe(t, "an AppWrapper on its team's queue", awRes, custom(own, appWrapper)),
		alice.probe(t, "an AppWrapper naming another team's queue", awRes, custom(other, appWrapper), "queue research is not this team's"),

		// PodGroups a team makes itself.
		alice.probe(t, "a PodGroup on another team's queue", podGrpRes, podGroup("research"), "PodGroup queue research is not this team's"),
		alice.probe(t, "a PodGroup on its team's queue", podGrpRes, podGroup("training")),
	})

	// The Job controller makes a KAI Job's pods: no queue label, an owner.
	j := alice.create(t, jobsRes, func() *batchv1.Job {
		j := guardJob("training", "kai-job", own, onKAI(gpuPodSpec(gpu, 1)))
		j.Spec.Suspend = ptr.To(false)
		return j
	}())
	waitPods(t, "the KAI Job's pod, made by the Job controller", "batch.kubernetes.io/job-name=kai-job", 1)
	probesRun++
	if err := env.cp.Kube.BatchV1().Jobs("training").Delete(ctxFor(t), j.GetName(), deleteInBkg); err != nil {
		t.Fatal(err)
	}
}

// installKAICRDs installs KAI's CRDs from ../shared/crds/kai.
func installKAICRDs(t *testing.T) {
	t.Helper()
	dir := filepath.Join(env.repoRoot, "..", "shared", "crds", "kai")
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("KAI's CRDs are expected in %s (shared/ beside the repository): %v", dir, err)
		}
		t.Fatalf("no KAI CRDs in %s", dir)
	}
	var crds []*unstructuredObj
	for _, f := range files {
		objs, err := controlplane.ReadManifestFile(f)
		if err != nil {
			t.Fatal(err)
		}
		crds = append(crds, byKind(objs, "CustomResourceDefinition")...)
	}
	ctx := ctxFor(t)
	if _, err := env.cp.Applier.Apply(ctx, crds, false); err != nil {
		t.Fatalf("install KAI CRDs: %v", err)
	}
	if err := env.cp.Applier.WaitCRDsEstablished(ctx, eventually); err != nil {
		t.Fatal(err)
	}
}
