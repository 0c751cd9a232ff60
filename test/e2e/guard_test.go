package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/probe"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// The guardrails' checks: the rendered ValidatingAdmissionPolicy, Pod
// Security labels and GPU ResourceQuotas, in the real kube-apiserver, with
// kube-controller-manager's controllers making pods under their own service
// accounts, refuse what escapes the agreement and let through what it
// wants. Every probe is made by a team's namespace admin: a ServiceAccount
// of the team's namespace bound to the built-in admin ClusterRole there,
// with a token, as clusters give teams rights. The reference check's table
// is made for real, so the workload controllers act on what it lets
// through; the waits that poll, and the smaller checks, are server-side dry
// runs.

var dryRun = metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}

func jobAttempt(what string, j *batchv1.Job, want ...string) probe.Attempt {
	return probe.Attempt{What: what, Create: func(ctx context.Context) error {
		_, err := env.cp.Kube.BatchV1().Jobs(j.Namespace).Create(ctx, j, dryRun)
		return err
	}, Want: want}
}

func podAttempt(what string, p *corev1.Pod, want ...string) probe.Attempt {
	return probe.Attempt{What: what, Create: func(ctx context.Context) error {
		_, err := env.cp.Kube.CoreV1().Pods(p.Namespace).Create(ctx, p, dryRun)
		return err
	}, Want: want}
}

// probesRun counts the probes of the guardrails' checks, for the log.
var probesRun int

// try runs the attempts and reports each outcome that is not the expected
// one; every refusal's message is logged, for the report.
func try(t *testing.T, attempts []probe.Attempt) {
	t.Helper()
	for _, a := range attempts {
		probesRun++
		probe.Judge(t, a.What, a.Create(ctxFor(t)), a.Want)
	}
	t.Logf("%d probes in this check, %d in the guardrails' checks so far", len(attempts), probesRun)
}

// newTeamUser is the namespace admin sa of a team's namespace ns, once
// the API server authorizes it to create Jobs and PyTorchJobs; its probes
// are dry runs.
func newTeamUser(t *testing.T, ns, sa string) *probe.TeamAdmin {
	t.Helper()
	u, err := probe.NewTeamAdmin(ctxFor(t), env.cp.Kube, env.cp.Config, ns, sa,
		authorizationv1.ResourceAttributes{Group: "batch", Resource: "jobs"},
		authorizationv1.ResourceAttributes{Group: "kubeflow.org", Resource: "pytorchjobs"})
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// waitMadePods waits until the controller of each Deployment,
// StatefulSet, ReplicaSet and ReplicationController that u's real probes
// created has made a pod (admitted, since it exists), and checks there are
// want of them.
func waitMadePods(t *testing.T, u *probe.TeamAdmin, want int) {
	t.Helper()
	n := 0
	for _, m := range u.Made {
		if !m.MadeByController() {
			continue
		}
		n++
		waitFor(t, m.What+": a pod made by its controller", func(ctx context.Context) (bool, string) {
			pods, err := env.cp.Kube.CoreV1().Pods(u.NS).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err.Error()
			}
			for _, p := range pods.Items {
				if strings.HasPrefix(p.Name, m.Name+"-") {
					t.Logf("%s: its controller made pod %s", m.What, p.Name)
					return true, ""
				}
			}
			return false, "no pod " + m.Name + "-*"
		})
	}
	if n != want {
		t.Errorf("%d objects of the pod-making built-in kinds let through, want the %d the table expects", n, want)
	}
}

// deleteMade deletes what alice's real probes created and waits until
// their pods are gone, so the next check finds the Nodes' GPUs free.
func deleteMade(t *testing.T, u *probe.TeamAdmin) {
	ctx := ctxFor(t)
	if err := u.DeleteMade(ctx, env.cp.Dynamic); err != nil {
		t.Error(err)
	}
	waitFor(t, "the probes' pods gone", func(ctx context.Context) (bool, string) {
		pods, err := env.cp.Kube.CoreV1().Pods(u.NS).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		var left []string
		for _, p := range pods.Items {
			if strings.HasPrefix(p.Name, "probe-") {
				left = append(left, p.Name)
				_ = env.cp.Kube.CoreV1().Pods(u.NS).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
			}
		}
		return len(left) == 0, fmt.Sprintf("left: %v", left)
	})
}

// waitPoliciesEnforced waits until the API server enforces the rendered
// policies (its admission plugin picks them up from an informer), and has
// the policy type checker's verdict on each read when the check ends
// (probe.TypeCheckAtEnd).
func waitPoliciesEnforced(t *testing.T, objs []*unstructuredObj, p probe.Attempt) {
	t.Helper()
	policies := byKind(objs, "ValidatingAdmissionPolicy")
	if len(policies) == 0 {
		t.Fatal("the render has no ValidatingAdmissionPolicy")
	}
	waitFor(t, "the queue policies enforced", func(ctx context.Context) (bool, string) {
		err := p.Create(ctx)
		return err != nil, fmt.Sprintf("%s still let through", p.What)
	})
	var names []string
	for _, pol := range policies {
		names = append(names, pol.GetName())
	}
	probe.TypeCheckAtEnd(t, env.cp, waits, names)
}

// waitParams waits until the API server answers a as the agreement's data
// in the policy says (refused with a.Want[0], or let through): the
// admission plugin reads policies through an informer, so a changed
// agreement is in force a moment after it is applied.
func waitParams(t *testing.T, a probe.Attempt) {
	t.Helper()
	waitFor(t, "the agreement's data in force ("+a.What+")", func(ctx context.Context) (bool, string) {
		err := a.Create(ctx)
		if a.Want == nil {
			return err == nil, fmt.Sprint(err)
		}
		return err != nil && strings.Contains(err.Error(), a.Want[0]), fmt.Sprint(err)
	})
}

// Check: with the reference agreement's Kueue render, a team's namespace
// admin cannot run GPU work outside the agreement by any of the ways the
// guardrails know (no queue or another team's, an owner they wrote, a kind
// no queue holds, a node or priority of their choice, a GPU resource or DRA
// claim the agreement does not share, every covered kind), and the same
// work written as the agreement wants, CPU-only work without a queue and
// the pods the real controllers make of it (each Deployment, StatefulSet,
// ReplicaSet and ReplicationController let through gets its pods) are let
// through; updates of fields the policy does not read are never checked.
func TestGuardrailsKueue(t *testing.T) {
	begin(t)
	workload.InstallCRDs(t, ctxFor(t), env.cp.Applier)
	objs := reference(t)
	useAgreement(t, "reference", objs)
	alice := newTeamUser(t, "training", "alice")
	// A team's own account named like a kube-controller-manager controller.
	lookalike := newTeamUser(t, "training", "job-controller")
	own := map[string]string{queueKey: "training"}
	other := map[string]string{queueKey: "research"}
	// The probe is refused by the Kueue render's policy only, not by the
	// KAI render's that an earlier check may have left behind.
	kaiOK := workload.GPUPodSpec(gpu, 1)
	kaiOK.SchedulerName = "kai-scheduler"
	enforced := alice.Probe(t, "probe", workload.Jobs, workload.JobOf("", "probe", map[string]string{"kai.scheduler/queue": "training"}, kaiOK), "x")
	waitPoliciesEnforced(t, objs, enforced)
	// The API server reads the parameters through an informer too: wait
	// until the reference's GPU resources are the ones in force.
	waitParams(t, alice.Probe(t, "an unshared MIG profile on its queue", workload.Pods, workload.PodWith(own, workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1), nil), "does not share"))

	privileged := workload.CPUPodSpec()
	privileged.Containers[0].SecurityContext = &corev1.SecurityContext{Privileged: ptr.To(true)}
	initGPU := workload.CPUPodSpec()
	initGPU.InitContainers = workload.GPUPodSpec(gpu, 1).Containers
	initGPU.InitContainers[0].Name = "setup"
	dra := workload.SpecWith(workload.CPUPodSpec(), func(s *corev1.PodSpec) {
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
		return workload.RayCluster(t, workload.RestartAlways(workload.CPUPodSpec()), workload.RestartAlways(worker))
	}
	refused := "add the label kueue.x-k8s.io/queue-name: training"
	// The table's requests are made for real, so the workload controllers
	// act on what is let through; the waits above stay dry runs.
	alice.Real, lookalike.Real = true, true
	t.Cleanup(func() { deleteMade(t, alice) })
	try(t, []probe.Attempt{
		// Pods.
		alice.Probe(t, "a bare GPU Pod without a queue", workload.Pods, workload.PodWith(nil, workload.GPUPodSpec(gpu, 1), nil), "this Pod requests GPUs in namespace training of team training (tenancy agreement gpu-pool)", refused),
		alice.Probe(t, "a GPU Pod naming another team's queue", workload.Pods, workload.PodWith(other, workload.GPUPodSpec(gpu, 1), nil), "queue research is not this team's", "set the label kueue.x-k8s.io/queue-name: training"),
		alice.Probe(t, "a GPU Pod on its team's queue", workload.Pods, workload.PodWith(own, workload.GPUPodSpec(gpu, 1), nil)),
		alice.Probe(t, "a CPU-only Pod without a queue", workload.Pods, workload.PodWith(nil, workload.CPUPodSpec(), nil)),
		alice.Probe(t, "a GPU Pod with a forged Job owner", workload.Pods, workload.WithOwner(workload.PodWith(nil, workload.GPUPodSpec(gpu, 1), nil), "Job"), "names a controller owner, but system:serviceaccount:training:alice is not a trusted controller"),
		alice.Probe(t, "a GPU Pod on its queue owned by a ConfigMap", workload.Pods, workload.WithOwner(workload.PodWith(own, workload.GPUPodSpec(gpu, 1), nil), "ConfigMap"), "names a controller owner"),
		lookalike.Probe(t, "a GPU Pod by the team's own account named job-controller", workload.Pods, workload.WithOwner(workload.PodWith(nil, workload.GPUPodSpec(gpu, 1), nil), "Job"), "system:serviceaccount:training:job-controller is not a trusted controller"),
		alice.Probe(t, "GPUs in an init container", workload.Pods, workload.PodWith(nil, initGPU, nil), refused),
		alice.Probe(t, "priorityClassName system-node-critical on a GPU pod", workload.Pods, workload.PodWith(own, workload.SpecWith(workload.GPUPodSpec(gpu, 1), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil), "priority class system-node-critical is not a priority of the agreement gpu-pool"),
		alice.Probe(t, "priorityClassName system-node-critical on a CPU pod", workload.Pods, workload.PodWith(nil, workload.SpecWith(workload.CPUPodSpec(), func(s *corev1.PodSpec) { s.PriorityClassName = "system-node-critical" }), nil)),
		alice.Probe(t, "spec.nodeName on a GPU pod", workload.Pods, workload.PodWith(own, workload.SpecWith(workload.GPUPodSpec(gpu, 1), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil), "sets spec.nodeName"),
		alice.Probe(t, "spec.nodeName on a CPU pod", workload.Pods, workload.PodWith(nil, workload.SpecWith(workload.CPUPodSpec(), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" }), nil)),
		alice.Probe(t, "a MIG profile the agreement does not share", workload.Pods, workload.PodWith(own, workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1), nil), "asks for an nvidia.com/ resource that the agreement does not share", "ask for one of nvidia.com/gpu"),
		alice.Probe(t, "another nvidia.com/ resource", workload.Pods, workload.PodWith(own, workload.GPUPodSpec("nvidia.com/gpu.shared", 1), nil), "does not share"),
		alice.Probe(t, "a resource that is no GPU, without a queue", workload.Pods, workload.PodWith(nil, workload.GPUPodSpec("example.com/fpga", 1), nil)),
		alice.Probe(t, "KAI's gpu-fraction annotation without a queue", workload.Pods, workload.PodWith(nil, workload.CPUPodSpec(), func(p *corev1.Pod) { p.Annotations = map[string]string{"gpu-fraction": "0.5"} }), refused),
		alice.Probe(t, "a DRA claim without a queue", workload.Pods, workload.PodWith(nil, dra, nil), refused),
		alice.Probe(t, "a DRA claim on its team's queue", workload.Pods, workload.PodWith(own, dra, nil)),
		alice.Probe(t, "a ResourceClaim of NVIDIA's DRA GPU class", workload.ResourceClaims, claim, "exceeded quota: tenancy-gpus", "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"),
		alice.Probe(t, "a privileged pod in a team namespace", workload.Pods, workload.PodWith(own, privileged, nil), `violates PodSecurity "baseline:latest"`, "privileged"),
		alice.Probe(t, "a GPU Pod with a priority the agreement does not have", workload.Pods, workload.PodWith(prio("urgent"), workload.GPUPodSpec(gpu, 1), nil), "priority urgent is not a priority of the agreement gpu-pool"),
		alice.Probe(t, "a GPU Pod with a priority of the agreement", workload.Pods, workload.PodWith(prio("critical"), workload.GPUPodSpec(gpu, 1), nil)),
		alice.Probe(t, "a pod asking for more GPUs than the pool has, on its queue", workload.Pods, workload.PodWith(own, workload.GPUPodSpec(gpu, 64), nil), "this Pod needs 64 nvidia.com/gpu at once, but team training can use at most 24"),
		alice.Probe(t, "a pod asking for one GPU more than its team can ever use", workload.Pods, workload.PodWith(own, workload.GPUPodSpec(gpu, 25), nil),
			"this Pod needs 25 nvidia.com/gpu at once, but team training can use at most 24 (guaranteed + borrow, in any lending window too)", "it would wait in the queue forever; ask for at most 24"),

		// NVIDIA's device variables: the toolkit would hand the node's GPUs
		// to a container the device plugin gave none.
		alice.Probe(t, "a CPU pod setting NVIDIA_VISIBLE_DEVICES=all", workload.Pods, workload.PodWith(nil, workload.WithEnv(workload.CPUPodSpec(), "NVIDIA_VISIBLE_DEVICES", "all"), nil),
			"in this Pod, container", "sets NVIDIA_VISIBLE_DEVICES without requesting a GPU through the device plugin", "the NVIDIA container toolkit reads it"),
		alice.Probe(t, "a CPU pod setting a MIG configuration device list", workload.Pods, workload.PodWith(nil, workload.WithEnv(workload.CPUPodSpec(), "NVIDIA_MIG_CONFIG_DEVICES", "0"), nil), "sets NVIDIA_MIG_CONFIG_DEVICES"),
		alice.Probe(t, "a CPU pod hiding GPUs with NVIDIA_VISIBLE_DEVICES=void", workload.Pods, workload.PodWith(nil, workload.WithEnv(workload.CPUPodSpec(), "NVIDIA_VISIBLE_DEVICES", "void"), nil)),
		alice.Probe(t, "a CPU pod setting CUDA_VISIBLE_DEVICES", workload.Pods, workload.PodWith(nil, workload.WithEnv(workload.CPUPodSpec(), "CUDA_VISIBLE_DEVICES", "0"), nil)),
		alice.Probe(t, "a GPU pod the device plugin serves, setting NVIDIA_VISIBLE_DEVICES", workload.Pods, workload.PodWith(own, workload.WithEnv(workload.GPUPodSpec(gpu, 1), "NVIDIA_VISIBLE_DEVICES", "all"), nil)),
		alice.Probe(t, "a CPU Deployment setting NVIDIA_VISIBLE_DEVICES", workload.Deployments, workload.DeploymentOf("probe", nil, nil, workload.WithEnv(workload.CPUAlways(), "NVIDIA_VISIBLE_DEVICES", "all")), "in this Deployment", "sets NVIDIA_VISIBLE_DEVICES"),

		// Jobs.
		alice.Probe(t, "a GPU Job without a queue", workload.Jobs, workload.JobOf("", "probe", nil, workload.GPUPodSpec(gpu, 8)), "this Job requests GPUs", refused),
		alice.Probe(t, "a GPU Job naming another team's queue", workload.Jobs, workload.JobOf("", "probe", other, workload.GPUPodSpec(gpu, 8)), "queue research is not this team's"),
		alice.Probe(t, "a GPU Job on its team's queue", workload.Jobs, workload.JobOf("", "probe", own, workload.GPUPodSpec(gpu, 8))),
		alice.Probe(t, "a CPU-only Job without a queue", workload.Jobs, workload.JobOf("", "probe", nil, workload.CPUPodSpec())),
		alice.Probe(t, "a GPU Job with a priority the agreement does not have", workload.Jobs, workload.JobOf("", "probe", prio("urgent"), workload.GPUPodSpec(gpu, 1)), "priority urgent is not a priority"),
		alice.Probe(t, "a GPU Job with a priority of the agreement", workload.Jobs, workload.JobOf("", "probe", prio("standard"), workload.GPUPodSpec(gpu, 1))),
		alice.Probe(t, "a GPU Job on its queue with a forged JobSet owner", workload.Jobs, workload.WithOwner(workload.JobOf("", "probe", own, workload.GPUPodSpec(gpu, 1)), "JobSet"), "names a controller owner"),
		alice.Probe(t, "a GPU Job whose template sets nodeName", workload.Jobs, workload.JobOf("", "probe", own, workload.SpecWith(workload.GPUPodSpec(gpu, 1), func(s *corev1.PodSpec) { s.NodeName = "kwok-node-0" })), "sets spec.nodeName"),
		jobAttempt("a GPU Job of 4 pods of 8 GPUs, which Kueue admits whole", parallel(workload.JobOf("training", "probe", own, workload.GPUPodSpec(gpu, 8)), 4), "this Job needs 32 nvidia.com/gpu at once, but team training can use at most 24"),
		jobAttempt("a GPU Job of 3 pods of 8 GPUs (a dry run: the table's Jobs are few)", parallel(workload.JobOf("training", "probe", own, workload.GPUPodSpec(gpu, 8)), 3)),
		alice.Probe(t, "a GPU Job asking for an unshared MIG profile", workload.Jobs, workload.JobOf("", "probe", own, workload.GPUPodSpec("nvidia.com/mig-3g.40gb", 1)), "does not share"),

		// CronJobs: their Jobs carry spec.jobTemplate's labels.
		alice.Probe(t, "a GPU CronJob without a queue", workload.CronJobs, workload.CronJobOf(nil, nil, workload.GPUPodSpec(gpu, 1)), "this CronJob requests GPUs", refused),
		alice.Probe(t, "a GPU CronJob with the queue on itself, not its jobTemplate", workload.CronJobs, workload.CronJobOf(own, nil, workload.GPUPodSpec(gpu, 1)),
			"carries the label kueue.x-k8s.io/queue-name on its own metadata only", "Kueue reads the queue of the Jobs the CronJob makes", "put the label kueue.x-k8s.io/queue-name: training on spec.jobTemplate.metadata.labels"),
		alice.Probe(t, "a GPU CronJob with its jobTemplate on its queue", workload.CronJobs, workload.CronJobOf(nil, own, workload.GPUPodSpec(gpu, 1))),
		alice.Probe(t, "a GPU CronJob with another team's jobTemplate queue", workload.CronJobs, workload.CronJobOf(nil, other, workload.GPUPodSpec(gpu, 1)), "queue research is not this team's"),
		alice.Probe(t, "a GPU CronJob with an unknown jobTemplate priority", workload.CronJobs, workload.CronJobOf(nil, prio("urgent"), workload.GPUPodSpec(gpu, 1)), "priority urgent is not a priority"),

		// Built-in kinds that make pods.
		alice.Probe(t, "a GPU Deployment without a queue", workload.Deployments, workload.DeploymentOf("probe", nil, nil, workload.GPUAlways(1)), "this Deployment requests GPUs", refused),
		alice.Probe(t, "a GPU Deployment on its team's queue", workload.Deployments, workload.DeploymentOf("probe", own, nil, workload.GPUAlways(1))),
		alice.Probe(t, "a GPU Deployment naming another team's queue", workload.Deployments, workload.DeploymentOf("probe", other, nil, workload.GPUAlways(1)), "queue research is not this team's"),
		alice.Probe(t, "a CPU-only Deployment without a queue", workload.Deployments, workload.DeploymentOf("probe", nil, nil, workload.CPUAlways())),
		alice.Probe(t, "a GPU StatefulSet without a queue", workload.StatefulSets, workload.StatefulSetOf(nil, workload.GPUAlways(1)), "this StatefulSet requests GPUs"),
		alice.Probe(t, "a GPU StatefulSet on its team's queue", workload.StatefulSets, workload.StatefulSetOf(own, workload.GPUAlways(1))),
		alice.Probe(t, "a GPU ReplicaSet made by hand", workload.ReplicaSets, workload.ReplicaSetOf(own, workload.GPUAlways(1)), "a ReplicaSet that requests GPUs cannot wait in a queue"),
		alice.Probe(t, "a CPU-only ReplicaSet", workload.ReplicaSets, workload.ReplicaSetOf(nil, workload.CPUAlways())),
		alice.Probe(t, "a GPU DaemonSet", workload.DaemonSets, workload.DaemonSetOf(workload.GPUAlways(1)), "a DaemonSet that requests GPUs cannot wait in a queue"),
		alice.Probe(t, "a CPU-only DaemonSet", workload.DaemonSets, workload.DaemonSetOf(workload.CPUAlways())),
		alice.Probe(t, "a GPU ReplicationController", workload.ReplicationControllers, workload.ReplicationControllerOf(workload.GPUAlways(1)), "a ReplicationController that requests GPUs cannot wait in a queue"),
		alice.Probe(t, "a CPU-only ReplicationController", workload.ReplicationControllers, workload.ReplicationControllerOf(workload.CPUAlways())),

		// Kinds of the operators Kueue integrates.
		alice.Probe(t, "a GPU PyTorchJob without a queue", workload.PyTorchJobs, workload.KubeflowJob(t, "pytorchReplicaSpecs", "Worker", nil, workload.GPUPodSpec(gpu, 1)), "this PyTorchJob requests GPUs"),
		alice.Probe(t, "a GPU PyTorchJob on its team's queue", workload.PyTorchJobs, workload.KubeflowJob(t, "pytorchReplicaSpecs", "Worker", own, workload.GPUPodSpec(gpu, 1))),
		alice.Probe(t, "a GPU TFJob without a queue", workload.TFJobs, workload.KubeflowJob(t, "tfReplicaSpecs", "Worker", nil, workload.GPUPodSpec(gpu, 1)), "this TFJob requests GPUs"),
		alice.Probe(t, "a GPU XGBoostJob without a queue", workload.XGBoostJobs, workload.KubeflowJob(t, "xgbReplicaSpecs", "Worker", nil, workload.GPUPodSpec(gpu, 1)), "this XGBoostJob requests GPUs"),
		alice.Probe(t, "a GPU PaddleJob without a queue", workload.PaddleJobs, workload.KubeflowJob(t, "paddleReplicaSpecs", "Worker", nil, workload.GPUPodSpec(gpu, 1)), "this PaddleJob requests GPUs"),
		alice.Probe(t, "a GPU JAXJob without a queue", workload.JAXJobs, workload.KubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, workload.GPUPodSpec(gpu, 1)), "this JAXJob requests GPUs"),
		alice.Probe(t, "a CPU-only JAXJob without a queue", workload.JAXJobs, workload.KubeflowJob(t, "jaxReplicaSpecs", "Worker", nil, workload.CPUPodSpec())),
		alice.Probe(t, "a GPU kubeflow.org/v1 MPIJob without a queue", workload.MPIJobs, workload.KubeflowJob(t, "mpiReplicaSpecs", "Launcher", nil, workload.GPUPodSpec(gpu, 1)), "this MPIJob requests GPUs"),
		alice.Probe(t, "a GPU MPI operator v2beta1 MPIJob without a queue", workload.MPIJobsV2, workload.KubeflowJob(t, "mpiReplicaSpecs", "Worker", nil, workload.GPUPodSpec(gpu, 1)), "this MPIJob requests GPUs"),
		alice.Probe(t, "a GPU MPI operator v2beta1 MPIJob on its queue", workload.MPIJobsV2, workload.KubeflowJob(t, "mpiReplicaSpecs", "Worker", own, workload.GPUPodSpec(gpu, 1))),
		alice.Probe(t, "a GPU MPI operator v2beta1 MPIJob naming another team's queue", workload.MPIJobsV2, workload.KubeflowJob(t, "mpiReplicaSpecs", "Worker", other, workload.GPUPodSpec(gpu, 1)), "queue research is not this team's"),
		alice.Probe(t, "a RayJob with GPU workers without a queue", workload.RayJobs, workload.Custom(nil, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(workload.GPUPodSpec(gpu, 1))}), "this RayJob requests GPUs"),
		alice.Probe(t, "a RayJob with GPU workers on its queue", workload.RayJobs, workload.Custom(own, map[string]any{"entrypoint": "python x.py", "rayClusterSpec": ray(workload.GPUPodSpec(gpu, 1))})),
		alice.Probe(t, "a CPU-only RayCluster without a queue", workload.RayClusters, workload.Custom(nil, ray(workload.CPUPodSpec()))),
		alice.Probe(t, "a RayCluster with GPU workers without a queue", workload.RayClusters, workload.Custom(nil, ray(workload.GPUPodSpec(gpu, 1))), "this RayCluster requests GPUs"),
		alice.Probe(t, "a RayService with GPU workers without a queue", workload.RayServices, workload.Custom(nil, map[string]any{"rayClusterConfig": ray(workload.GPUPodSpec(gpu, 1))}), "this RayService requests GPUs"),
		alice.Probe(t, "a GPU LeaderWorkerSet without a queue", workload.LeaderWorkerSets, workload.Custom(nil, map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": workload.PodTemplate(t, workload.GPUAlways(1))}}), "this LeaderWorkerSet requests GPUs"),
		alice.Probe(t, "a GPU LeaderWorkerSet on its team's queue", workload.LeaderWorkerSets, workload.Custom(own, map[string]any{"leaderWorkerTemplate": map[string]any{"workerTemplate": workload.PodTemplate(t, workload.GPUAlways(1))}})),
	})
	alice.Real = false
	waitMadePods(t, alice, 5)

	// kubectl debug: an ephemeral container, added through the Pod's
	// ephemeralcontainers subresource, may not choose GPUs either. The
	// built-in admin role does not grant that subresource, so the cluster's
	// admin asks (whom the policy does not trust either).
	debugged, err := alice.Kube.CoreV1().Pods("training").Create(ctxFor(t), workload.PodOf("training", "debugged", nil, workload.CPUPodSpec()), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().Pods("training").Delete(context.Background(), debugged.Name, metav1.DeleteOptions{})
	})
	debug := func(what, value string, want ...string) probe.Attempt {
		return probe.Attempt{What: what, Create: func(ctx context.Context) error {
			// The node's status updates race the update: retry conflicts.
			return retry.RetryOnConflict(retry.DefaultRetry, func() error {
				p, err := env.cp.Kube.CoreV1().Pods("training").Get(ctx, debugged.Name, metav1.GetOptions{})
				if err != nil {
					return err
				}
				p.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
					Name: "debug", Image: "registry.invalid/debug", Env: []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: value}},
				}}}
				_, err = env.cp.Kube.CoreV1().Pods("training").UpdateEphemeralContainers(ctx, p.Name, p, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
				return err
			})
		}, Want: want}
	}
	try(t, []probe.Attempt{
		debug("an ephemeral container setting NVIDIA_VISIBLE_DEVICES=all", "all", "container debug sets NVIDIA_VISIBLE_DEVICES without requesting a GPU through the device plugin"),
		debug("an ephemeral container hiding GPUs", "void"),
	})

	// The real controllers: a GPU Job the team submits on its queue is
	// admitted by Kueue, and the Job controller (under its own service
	// account) creates its pods, with no queue label and an owner.
	j := alice.Create(t, ctxFor(t), workload.Jobs, workload.JobOf("training", "admitted", own, workload.GPUPodSpec(gpu, 8)))
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
	d := alice.Create(t, ctxFor(t), workload.Deployments, workload.DeploymentOf("gpu-service", own, nil, workload.GPUAlways(1)))
	waitPods(t, "the Deployment's pod, made by the ReplicaSet controller", "app=gpu-service", 1)
	probesRun++
	if err := env.cp.Kube.AppsV1().Deployments("training").Delete(ctxFor(t), d.GetName(), deleteInBkg); err != nil {
		t.Fatal(err)
	}

	checkUpdates(t, objs, alice, enforced)
}

// parallel makes j a Job of n pods at once (parallelism and completions).
func parallel(j *batchv1.Job, n int32) *batchv1.Job {
	j.Spec.Parallelism, j.Spec.Completions = &n, &n
	return j
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
func checkUpdates(t *testing.T, objs []*unstructuredObj, alice *probe.TeamAdmin, enforced probe.Attempt) {
	t.Helper()
	ctx := ctxFor(t)
	bindings := byKind(objs, "ValidatingAdmissionPolicyBinding")
	if len(bindings) != 1 {
		t.Fatalf("%d bindings in the render, want 1", len(bindings))
	}
	if err := env.cp.Dynamic.Resource(vapBindingGVR).Delete(ctx, bindings[0].GetName(), metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	early := workload.PodOf("training", "pre-guardrails", nil, workload.GPUPodSpec(gpu, 1))
	early.Finalizers = []string{"tenancy.dev/e2e"}
	waitFor(t, "the binding gone from the API server's view", func(ctx context.Context) (bool, string) {
		_, err := alice.Kube.CoreV1().Pods("training").Create(ctx, early, metav1.CreateOptions{})
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
	waitPoliciesEnforced(t, objs, enforced)
	onQueue := workload.PodOf("training", "on-queue", map[string]string{queueKey: "training"}, workload.GPUPodSpec(gpu, 1))
	if _, err := alice.Kube.CoreV1().Pods("training").Create(ctx, onQueue, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a GPU pod on its queue: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().Pods("training").Delete(ctxFor(t), "on-queue", metav1.DeleteOptions{GracePeriodSeconds: ptr.To(int64(0))})
	})
	patch := func(what, name, body string, want ...string) probe.Attempt {
		return probe.Attempt{What: what, Create: func(ctx context.Context) error {
			_, err := alice.Kube.CoreV1().Pods("training").Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}, Want: want}
	}
	try(t, []probe.Attempt{
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
	mig := workload.PodOf("notebooks", "mig", nil, workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1))
	waitPoliciesEnforced(t, objs, u.Probe(t, "probe", workload.Pods, mig, "x"))
	waitParams(t, u.Probe(t, "a MIG pod on its queue", workload.Pods, workload.PodOf("notebooks", "mig-own", map[string]string{queueKey: "notebooks"}, workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1))))
	try(t, []probe.Attempt{
		u.Probe(t, "a MIG pod without a queue", workload.Pods, mig, "add the label kueue.x-k8s.io/queue-name: notebooks"),
		u.Probe(t, "a MIG pod on its team's queue", workload.Pods, workload.PodOf("notebooks", "mig-own", map[string]string{queueKey: "notebooks"}, workload.GPUPodSpec("nvidia.com/mig-1g.10gb", 1))),
	})
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
	// The SchedulingShard CRD (a KAI node pool per flavor) is not among
	// shared/crds/kai's: read it from KAI's source, which the KAI suite
	// builds from.
	src, err := binaries.KAISource(env.repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	data, err := binaries.KAISourceFile(src, "deployments/kai-scheduler/crds/kai.scheduler_schedulingshards.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := controlplane.ParseManifests(data)
	if err != nil {
		t.Fatal(err)
	}
	crds = append(crds, byKind(objs, "CustomResourceDefinition")...)
	ctx := ctxFor(t)
	if _, err := env.cp.Applier.Apply(ctx, crds, false); err != nil {
		t.Fatalf("install KAI CRDs: %v", err)
	}
	if err := env.cp.Applier.WaitCRDsEstablished(ctx, eventually); err != nil {
		t.Fatal(err)
	}
}
