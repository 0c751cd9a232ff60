// Package workload builds the objects of the guardrails' probes: pods and
// pod templates asking for GPUs or not, every workload kind the guardrails
// cover (built-in and the CRD kinds Kueue and KAI integrate), their
// resources, and the CRDs of those kinds from their Go modules. The
// control-plane suite and the KAI suite probe with the same objects.
package workload

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// GPU is the whole-GPU resource of NVIDIA's device plugin.
const GPU = corev1.ResourceName("nvidia.com/gpu")

// GPUPodSpec is a pod spec asking for n of res, with cpu and memory.
func GPUPodSpec(res corev1.ResourceName, n int64) corev1.PodSpec {
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

func CPUPodSpec() corev1.PodSpec {
	return corev1.PodSpec{
		RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{
			Name: "work", Image: "registry.invalid/tenancy-e2e:never-pulled",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}},
	}
}

// GPUAlways is a pod spec for a template that restarts (Deployments and the
// like).
func GPUAlways(n int64) corev1.PodSpec {
	s := GPUPodSpec(GPU, n)
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}

func CPUAlways() corev1.PodSpec {
	s := CPUPodSpec()
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}

func JobOf(ns, name string, labels map[string]string, spec corev1.PodSpec) *batchv1.Job {
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true), Parallelism: ptr.To(int32(1)), Completions: ptr.To(int32(1)),
			Template: corev1.PodTemplateSpec{Spec: spec},
		},
	}
}

func PodOf(ns, name string, labels map[string]string, spec corev1.PodSpec) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}, Spec: spec}
}

// typeMeta maps each resource the probes create to its apiVersion and kind.
var typeMeta = map[schema.GroupVersionResource][2]string{
	Pods:                   {"v1", "Pod"},
	Jobs:                   {"batch/v1", "Job"},
	CronJobs:               {"batch/v1", "CronJob"},
	Deployments:            {"apps/v1", "Deployment"},
	StatefulSets:           {"apps/v1", "StatefulSet"},
	ReplicaSets:            {"apps/v1", "ReplicaSet"},
	DaemonSets:             {"apps/v1", "DaemonSet"},
	ReplicationControllers: {"v1", "ReplicationController"},
	ResourceClaims:         {"resource.k8s.io/v1", "ResourceClaim"},
	ResourceClaimTemplates: {"resource.k8s.io/v1", "ResourceClaimTemplate"},
	JobSets:                {"jobset.x-k8s.io/v1alpha2", "JobSet"},
	TrainJobs:              {"trainer.kubeflow.org/v1alpha1", "TrainJob"},
	AppWrappers:            {"workload.codeflare.dev/v1beta2", "AppWrapper"},
	PodGroups:              {"scheduling.run.ai/v2alpha2", "PodGroup"},
	PyTorchJobs:            {"kubeflow.org/v1", "PyTorchJob"},
	TFJobs:                 {"kubeflow.org/v1", "TFJob"},
	XGBoostJobs:            {"kubeflow.org/v1", "XGBoostJob"},
	PaddleJobs:             {"kubeflow.org/v1", "PaddleJob"},
	JAXJobs:                {"kubeflow.org/v1", "JAXJob"},
	MPIJobs:                {"kubeflow.org/v1", "MPIJob"},
	MPIJobsV2:              {"kubeflow.org/v2beta1", "MPIJob"},
	RayJobs:                {"ray.io/v1", "RayJob"},
	RayClusters:            {"ray.io/v1", "RayCluster"},
	RayServices:            {"ray.io/v1", "RayService"},
	LeaderWorkerSets:       {"leaderworkerset.x-k8s.io/v1", "LeaderWorkerSet"},
}

var (
	Pods                   = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	Jobs                   = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	CronJobs               = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "cronjobs"}
	Deployments            = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	StatefulSets           = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "statefulsets"}
	ReplicaSets            = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "replicasets"}
	DaemonSets             = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "daemonsets"}
	ReplicationControllers = schema.GroupVersionResource{Version: "v1", Resource: "replicationcontrollers"}
	ResourceClaims         = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaims"}
	ResourceClaimTemplates = schema.GroupVersionResource{Group: "resource.k8s.io", Version: "v1", Resource: "resourceclaimtemplates"}
	JobSets                = schema.GroupVersionResource{Group: "jobset.x-k8s.io", Version: "v1alpha2", Resource: "jobsets"}
	TrainJobs              = schema.GroupVersionResource{Group: "trainer.kubeflow.org", Version: "v1alpha1", Resource: "trainjobs"}
	AppWrappers            = schema.GroupVersionResource{Group: "workload.codeflare.dev", Version: "v1beta2", Resource: "appwrappers"}
	PodGroups              = schema.GroupVersionResource{Group: "scheduling.run.ai", Version: "v2alpha2", Resource: "podgroups"}
	PyTorchJobs            = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "pytorchjobs"}
	TFJobs                 = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "tfjobs"}
	XGBoostJobs            = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "xgboostjobs"}
	PaddleJobs             = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "paddlejobs"}
	JAXJobs                = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "jaxjobs"}
	MPIJobs                = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v1", Resource: "mpijobs"}
	MPIJobsV2              = schema.GroupVersionResource{Group: "kubeflow.org", Version: "v2beta1", Resource: "mpijobs"}
	RayJobs                = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayjobs"}
	RayClusters            = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayclusters"}
	RayServices            = schema.GroupVersionResource{Group: "ray.io", Version: "v1", Resource: "rayservices"}
	LeaderWorkerSets       = schema.GroupVersionResource{Group: "leaderworkerset.x-k8s.io", Version: "v1", Resource: "leaderworkersets"}
)

// ToUnstructured converts a typed object (or passes an unstructured one)
// and sets the apiVersion and kind of its resource.
func ToUnstructured(tb testing.TB, gvr schema.GroupVersionResource, obj any) *unstructured.Unstructured {
	tb.Helper()
	var u *unstructured.Unstructured
	if uo, ok := obj.(*unstructured.Unstructured); ok {
		u = uo.DeepCopy()
	} else {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
		if err != nil {
			tb.Fatal(err)
		}
		u = &unstructured.Unstructured{Object: m}
	}
	tm, ok := typeMeta[gvr]
	if !ok {
		tb.Fatalf("no kind for %s", gvr)
	}
	u.SetAPIVersion(tm[0])
	u.SetKind(tm[1])
	unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
	unstructured.RemoveNestedField(u.Object, "status")
	return u
}

func WithOwner[T metav1.Object](o T, kind string) T {
	o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: kind, Name: "forged", UID: "0a0a0a0a-0000-0000-0000-000000000000", Controller: ptr.To(true)}})
	return o
}

func PodWith(labels map[string]string, spec corev1.PodSpec, f func(*corev1.Pod)) *corev1.Pod {
	p := PodOf("", "probe", labels, spec)
	if f != nil {
		f(p)
	}
	return p
}

func SpecWith(s corev1.PodSpec, f func(*corev1.PodSpec)) corev1.PodSpec { f(&s); return s }

// WithEnv sets the environment variable name=value on every container of s.
func WithEnv(s corev1.PodSpec, name, value string) corev1.PodSpec {
	s.Containers = slices.Clone(s.Containers)
	for i := range s.Containers {
		s.Containers[i].Env = append(slices.Clone(s.Containers[i].Env), corev1.EnvVar{Name: name, Value: value})
	}
	return s
}

func CronJobOf(ownLabels, jobLabels map[string]string, spec corev1.PodSpec) *batchv1.CronJob {
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

func DeploymentOf(name string, labels, templateLabels map[string]string, spec corev1.PodSpec) *appsv1.Deployment {
	sel, l := selectorFor(name)
	for k, v := range templateLabels {
		l[k] = v
	}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec:       appsv1.DeploymentSpec{Replicas: ptr.To(int32(1)), Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func StatefulSetOf(labels map[string]string, spec corev1.PodSpec) *appsv1.StatefulSet {
	sel, l := selectorFor("probe")
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: labels},
		Spec:       appsv1.StatefulSetSpec{Selector: sel, ServiceName: "probe", Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func ReplicaSetOf(labels map[string]string, spec corev1.PodSpec) *appsv1.ReplicaSet {
	sel, l := selectorFor("probe")
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe", Labels: labels},
		Spec:       appsv1.ReplicaSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func DaemonSetOf(spec corev1.PodSpec) *appsv1.DaemonSet {
	sel, l := selectorFor("probe")
	return &appsv1.DaemonSet{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec:       appsv1.DaemonSetSpec{Selector: sel, Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

func ReplicationControllerOf(spec corev1.PodSpec) *corev1.ReplicationController {
	_, l := selectorFor("probe")
	return &corev1.ReplicationController{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec:       corev1.ReplicationControllerSpec{Selector: l, Template: &corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: spec}},
	}
}

// PodTemplate is a pod template as a CRD holds it.
func PodTemplate(tb testing.TB, spec corev1.PodSpec) map[string]any {
	tb.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{Spec: spec})
	if err != nil {
		tb.Fatal(err)
	}
	delete(m["metadata"].(map[string]any), "creationTimestamp")
	return m
}

// ToAny is a label map as unstructured objects hold it.
func ToAny(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func Custom(labels map[string]string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "probe"}, "spec": spec}}
	u.SetLabels(labels)
	return u
}

// KubeflowJob is a Kubeflow training-operator v1 job with one Worker
// replica type (MPIJob: a Launcher).
func KubeflowJob(tb testing.TB, field, replica string, labels map[string]string, spec corev1.PodSpec) *unstructured.Unstructured {
	return Custom(labels, map[string]any{field: map[string]any{replica: map[string]any{"replicas": int64(1), "template": PodTemplate(tb, spec)}}})
}

func RayCluster(tb testing.TB, head, worker corev1.PodSpec) map[string]any {
	return map[string]any{
		"headGroupSpec":    map[string]any{"rayStartParams": map[string]any{}, "template": PodTemplate(tb, head)},
		"workerGroupSpecs": []any{map[string]any{"groupName": "gpu", "replicas": int64(1), "minReplicas": int64(0), "maxReplicas": int64(1), "rayStartParams": map[string]any{}, "template": PodTemplate(tb, worker)}},
	}
}

func RestartAlways(s corev1.PodSpec) corev1.PodSpec {
	s.RestartPolicy = corev1.RestartPolicyAlways
	return s
}

// installWorkloadCRDs installs the CRDs of the covered kinds that Go modules
// ship: Kubeflow training-operator v1 (PyTorchJob, TFJob, XGBoostJob,
// PaddleJob, JAXJob, MPIJob v1), KubeRay (RayJob, RayCluster, RayService),

// AdminRole aggregates the covered CRD kinds into the built-in
// admin ClusterRole, as their operators' installs do.
func AdminRole() *rbacv1.ClusterRole {
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

// CRDSources are the Go modules (at the versions Kueue v0.17.0's go.mod
// names, where it names them) and directories that hold the CRDs of the
// covered kinds: Kubeflow training-operator v1 (PyTorchJob, TFJob,
// XGBoostJob, PaddleJob, JAXJob, MPIJob v1), KubeRay (RayJob, RayCluster,
// RayService), LeaderWorkerSet, JobSet, Kubeflow Trainer v2 (TrainJob and
// its runtimes), AppWrapper, and the MPI operator (MPIJob v2beta1).
var CRDSources = []struct{ Module, Dir string }{
	{"github.com/kubeflow/training-operator@v1.9.3", "manifests/base/crds"},
	{"github.com/ray-project/kuberay/ray-operator@v1.5.1", "config/crd/bases"},
	{"sigs.k8s.io/lws@v0.7.0", "config/crd/bases"},
	{"sigs.k8s.io/jobset@v0.11.1", "config/components/crd/bases"},
	{"github.com/kubeflow/trainer/v2@v2.2.0", "manifests/base/crds"},
	{"github.com/project-codeflare/appwrapper@v1.2.0", "config/crd/bases"},
	{"github.com/kubeflow/mpi-operator@v0.8.0", "manifests/base"},
}

// CRDs returns the CustomResourceDefinitions of CRDSources, fetched through
// the Go module proxy. Two operators name their MPIJob CRD
// mpijobs.kubeflow.org (training-operator's v1, the MPI operator's
// v2beta1), so a cluster has one or the other; here one CRD serves both
// versions (v1 stored, no conversion: the probes only create), so that
// the guardrails meet each version's objects.
func CRDs(tb testing.TB) []*unstructured.Unstructured {
	tb.Helper()
	var crds []*unstructured.Unstructured
	byName := map[string]*unstructured.Unstructured{}
	add := func(o *unstructured.Unstructured) {
		first, ok := byName[o.GetName()]
		if !ok {
			byName[o.GetName()] = o
			crds = append(crds, o)
			return
		}
		have, _, _ := unstructured.NestedSlice(first.Object, "spec", "versions")
		more, _, _ := unstructured.NestedSlice(o.Object, "spec", "versions")
		for _, v := range more {
			v.(map[string]any)["storage"] = false
			have = append(have, v)
		}
		if err := unstructured.SetNestedSlice(first.Object, have, "spec", "versions"); err != nil {
			tb.Fatal(err)
		}
	}
	for _, s := range CRDSources {
		out, err := exec.Command("go", "mod", "download", "-json", s.Module).Output()
		if err != nil {
			tb.Fatalf("the CRDs of %s come from its Go module: go mod download: %v", s.Module, err)
		}
		var mod struct{ Dir string }
		if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
			tb.Fatalf("go mod download %s: no module directory in %s", s.Module, out)
		}
		files, _ := filepath.Glob(filepath.Join(mod.Dir, s.Dir, "*.yaml"))
		for _, f := range files {
			objs, err := controlplane.ReadManifestFile(f)
			if err != nil {
				tb.Fatal(err)
			}
			for _, o := range objs {
				if o.GetKind() == "CustomResourceDefinition" {
					add(o)
				}
			}
		}
	}
	if len(crds) < 15 {
		tb.Fatalf("found %d workload CRDs, want the 15 of training-operator, KubeRay, LWS, JobSet, Trainer, AppWrapper and the MPI operator", len(crds))
	}
	if v, _, _ := unstructured.NestedSlice(byName["mpijobs.kubeflow.org"].Object, "spec", "versions"); len(v) != 2 {
		tb.Fatalf("mpijobs.kubeflow.org serves %d versions, want v1 and v2beta1", len(v))
	}
	return crds
}

// InstallCRDs installs CRDs (the covered kinds' CRDs) server-side with a and
// waits until they are established.
func InstallCRDs(tb testing.TB, ctx context.Context, a *controlplane.Applier) {
	tb.Helper()
	crds := CRDs(tb)
	// A loaded API server can time out on these large CRDs: try again.
	var err error
	for range 3 {
		if _, err = a.Apply(ctx, crds, false); err == nil {
			break
		}
		tb.Logf("install workload CRDs, again: %v", err)
	}
	if err != nil {
		tb.Fatalf("install workload CRDs: %v", err)
	}
	// KubeRay's CRDs are large (every pod template field, several times):
	// on a loaded machine they take longer than the usual deadline.
	if err := a.WaitCRDsEstablished(ctx, 110*time.Second); err != nil {
		tb.Fatal(err)
	}
}
