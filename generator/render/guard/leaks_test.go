package guard_test

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tenancy-dev/tenancy/generator"
)

// withEnv gives c the environment variables kv (name, value, ...).
func withEnv(c corev1.Container, kv ...string) corev1.Container {
	for i := 0; i+1 < len(kv); i += 2 {
		c.Env = append(c.Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
	}
	return c
}

// twoContainers is a pod on the training queue (of either backend) with containers a and b.
func twoContainers(a, b corev1.Container) *corev1.Pod {
	p := pod(labels("kueue.x-k8s.io/queue-name", "training", "kai.scheduler/queue", "training"), a)
	b.Name = "side"
	p.Spec.Containers = append(p.Spec.Containers, b)
	return p
}

// parallel is a GPU Job on the training queue of parallelism n, with the
// annotations kv.
func parallel(n int32, c corev1.Container, kv ...string) *batchv1.Job {
	j := job(labels("kueue.x-k8s.io/queue-name", "training", "kai.scheduler/queue", "training"), c)
	j.Spec.Parallelism = &n
	j.Spec.Template.Spec.SchedulerName = "kai-scheduler"
	if len(kv) > 0 {
		j.Annotations = labels(kv...)
	}
	return j
}

// TestDeviceVariables: a container that chooses GPUs through the NVIDIA
// container toolkit's environment, without asking the device plugin for
// one, is refused in a team namespace whoever creates it; hiding GPUs is
// not, nor is a container the device plugin serves (the plugin sets the
// variable itself).
func TestDeviceVariables(t *testing.T) {
	r := renderGuard(t, reference, generator.Options{})
	own := labels("kueue.x-k8s.io/queue-name", "training")
	cpu := cpuContainer()
	gpu := gpuContainer("nvidia.com/gpu", 1)
	all := withEnv(cpu, "NVIDIA_VISIBLE_DEVICES", "all")
	req := func(obj runtime.Object) request { return request{gvr: podsGVR, obj: obj} }
	fromConfigMap := cpu
	fromConfigMap.Env = []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", ValueFrom: &corev1.EnvVarSource{
		ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "gpus"}, Key: "list"},
	}}}
	debugged := pod(nil, cpu)
	debugged.Spec.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
		Name: "debug", Image: "x", Env: []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", Value: "all"}},
	}}}
	preGuard := pod(nil, all) // a pod that predates the guardrails
	relabelled := pod(labels("app", "x"), all)
	zeroGPU := withEnv(gpuContainer("nvidia.com/gpu", 0), "NVIDIA_VISIBLE_DEVICES", "all")
	tests := map[string]policyCase{
		"a CPU pod seeing every GPU": {req(pod(nil, all)), []string{
			"in this Pod, container work sets NVIDIA_VISIBLE_DEVICES without requesting a GPU through the device plugin in namespace training of team training (tenancy agreement gpu-pool): the NVIDIA container toolkit reads it to choose the GPUs the container sees"}},
		"a device list":                            {req(pod(nil, withEnv(cpu, "NVIDIA_VISIBLE_DEVICES", "0,1"))), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"a value from a ConfigMap":                 {req(pod(nil, fromConfigMap)), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"MIG configuration devices":                {req(pod(nil, withEnv(cpu, "NVIDIA_MIG_CONFIG_DEVICES", "all"))), []string{"sets NVIDIA_MIG_CONFIG_DEVICES"}},
		"MIG monitoring devices":                   {req(pod(nil, withEnv(cpu, "NVIDIA_MIG_MONITOR_DEVICES", "all"))), []string{"sets NVIDIA_MIG_MONITOR_DEVICES"}},
		"IMEX channels":                            {req(pod(nil, withEnv(cpu, "NVIDIA_IMEX_CHANNELS", "0"))), []string{"sets NVIDIA_IMEX_CHANNELS"}},
		"void hides GPUs":                          {req(pod(nil, withEnv(cpu, "NVIDIA_VISIBLE_DEVICES", "void"))), nil},
		"none hides GPUs":                          {req(pod(nil, withEnv(cpu, "NVIDIA_VISIBLE_DEVICES", "none"))), nil},
		"empty hides GPUs":                         {req(pod(nil, withEnv(cpu, "NVIDIA_VISIBLE_DEVICES", ""))), nil},
		"CUDA_VISIBLE_DEVICES gives no device":     {req(pod(nil, withEnv(cpu, "CUDA_VISIBLE_DEVICES", "0,1"))), nil},
		"other NVIDIA variables":                   {req(pod(nil, withEnv(cpu, "NVIDIA_DRIVER_CAPABILITIES", "all"))), nil},
		"a GPU container the device plugin serves": {req(pod(own, withEnv(gpu, "NVIDIA_VISIBLE_DEVICES", "all"))), nil},
		"zero GPUs are no device plugin request":   {req(pod(own, zeroGPU)), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"a CPU sidecar beside a GPU container":     {req(twoContainers(gpu, all)), []string{"container side sets NVIDIA_VISIBLE_DEVICES"}},
		"an init container": {req(withSpec(pod(nil, cpu), func(s *corev1.PodSpec) {
			s.InitContainers = []corev1.Container{withEnv(cpu, "NVIDIA_VISIBLE_DEVICES", "all")}
		})), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"an ephemeral container added by kubectl debug":  {request{gvr: podsGVR, obj: debugged, old: pod(nil, cpu)}, []string{"container debug sets NVIDIA_VISIBLE_DEVICES"}},
		"a Deployment's template":                        {request{gvr: deployGVR, obj: deployment(nil, nil, spec(all))}, []string{"in this Deployment, container work sets NVIDIA_VISIBLE_DEVICES"}},
		"a CronJob's template":                           {request{gvr: cronJobsGVR, obj: cronJob(nil, all)}, []string{"in this CronJob"}},
		"a pod by the Job controller":                    {request{gvr: podsGVR, obj: owned(pod(nil, all), "Job"), user: jobController}, []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"a pod that predates the guardrails, relabelled": {request{gvr: podsGVR, obj: relabelled, old: preGuard}, nil},
	}
	runCases(t, r, tests)
	kai := renderGuard(t, reference, generator.Options{Backend: generator.KAI})
	// A fractional pod as KAI's admission webhook hands it on: its
	// NVIDIA_VISIBLE_DEVICES read from the ConfigMap the webhook named
	// (<annotation>-<container index>), which KAI's binder fills.
	fromKAI := func(annotation, configMap string, kv ...string) *corev1.Pod {
		c := cpu
		c.Env = []corev1.EnvVar{{Name: "NVIDIA_VISIBLE_DEVICES", ValueFrom: &corev1.EnvVarSource{
			ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: configMap}, Key: "NVIDIA_VISIBLE_DEVICES"},
		}}}
		p := pod(labels("kai.scheduler/queue", "training"), c)
		p.Spec.SchedulerName = "kai-scheduler"
		return withAnnotations(p, append([]string{"runai/shared-gpu-configmap", annotation}, kv...)...)
	}
	// The reference's h100 shares by fraction here, so the sharing rule
	// lets the fractions through and only the device rule is seen.
	sharing := renderGuard(t, reference+"[kai]\ngpu_sharing = \"fraction\"\n", generator.Options{Backend: generator.KAI})
	runCases(t, kai, map[string]policyCase{
		"under KAI, a CPU pod seeing every GPU": {req(pod(nil, all)), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
	})
	runCases(t, sharing, map[string]policyCase{
		"under KAI, a fraction as KAI's admission wires it":  {req(fromKAI("p-abc1234-shared-gpu", "p-abc1234-shared-gpu-0", "gpu-fraction", "0.5")), nil},
		"under KAI, gpu-memory as KAI's admission wires it":  {req(fromKAI("p-abc1234-shared-gpu", "p-abc1234-shared-gpu-0", "gpu-memory", "4000")), nil},
		"under KAI, the ConfigMap wiring without a fraction": {req(fromKAI("p-abc1234-shared-gpu", "p-abc1234-shared-gpu-0")), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"under KAI, a fraction reading another ConfigMap":    {req(fromKAI("p-abc1234-shared-gpu", "gpus", "gpu-fraction", "0.5")), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
		"under KAI, a fraction with a value of its own":      {req(withAnnotations(withSpec(pod(labels("kai.scheduler/queue", "training"), all), func(s *corev1.PodSpec) { s.SchedulerName = "kai-scheduler" }), "gpu-fraction", "0.5", "runai/shared-gpu-configmap", "x")), []string{"sets NVIDIA_VISIBLE_DEVICES"}},
	})
}

// TestLargerThanTheTeam: a workload that needs more GPUs at once than its
// team can ever use (training: 16 guaranteed + 8 borrow = 24) is refused,
// with the team's most; a pod is the unit under both schedulers, and
// Kueue admits a Job's pods together.
func TestLargerThanTheTeam(t *testing.T) {
	kueue := renderGuard(t, reference, generator.Options{})
	kai := renderGuard(t, reference, generator.Options{Backend: generator.KAI})
	own := labels("kueue.x-k8s.io/queue-name", "training", "kai.scheduler/queue", "training")
	onKAI := func(p *corev1.Pod) *corev1.Pod { p.Spec.SchedulerName = "kai-scheduler"; return p }
	gpus := func(n int64) corev1.Container { return gpuContainer("nvidia.com/gpu", n) }
	podReq := func(p *corev1.Pod) request { return request{gvr: podsGVR, obj: onKAI(p)} }
	withInit := func(c, init corev1.Container, sidecar bool) *corev1.Pod {
		p := pod(own, c)
		init.Name = "init"
		if sidecar {
			always := corev1.ContainerRestartPolicyAlways
			init.RestartPolicy = &always
		}
		p.Spec.InitContainers = []corev1.Container{init}
		return p
	}
	completions := parallel(4, gpus(8))
	three := int32(3)
	completions.Spec.Completions = &three
	relabelled := pod(labels("kueue.x-k8s.io/queue-name", "training", "kai.scheduler/queue", "training", "app", "x"), gpus(25))
	both := map[string]policyCase{
		"a pod of 25 GPUs": {podReq(pod(own, gpus(25))), []string{
			"this Pod needs 25 nvidia.com/gpu at once, but team training can use at most 24 (guaranteed + borrow, in any lending window too) in namespace training of team training (tenancy agreement gpu-pool): it would wait in the queue forever; ask for at most 24"}},
		"a pod of 24 GPUs":                               {podReq(pod(own, gpus(24))), nil},
		"two containers together":                        {podReq(twoContainers(gpus(12), gpus(13))), []string{"needs 25 nvidia.com/gpu"}},
		"a GPU quantity in limits only":                  {podReq(pod(own, corev1.Container{Name: "w", Image: "x", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("30")}}})), []string{"needs 30 nvidia.com/gpu"}},
		"the largest init container":                     {podReq(withInit(gpus(1), gpus(25), false)), []string{"needs 25 nvidia.com/gpu"}},
		"an init container that ends first":              {podReq(withInit(gpus(4), gpus(20), false)), nil},
		"a sidecar runs beside the containers":           {podReq(withInit(gpus(12), gpus(13), true)), []string{"needs 25 nvidia.com/gpu"}},
		"a Deployment's pods, one at a time":             {request{gvr: deployGVR, obj: deployment(own, nil, onKAI(pod(nil, gpus(8))).Spec)}, nil},
		"a Deployment whose one pod cannot fit":          {request{gvr: deployGVR, obj: deployment(own, nil, onKAI(pod(nil, gpus(32))).Spec)}, []string{"this Deployment needs 32 nvidia.com/gpu"}},
		"a pod by the Job controller":                    {request{gvr: podsGVR, obj: owned(onKAI(pod(nil, gpus(25))), "Job"), user: jobController}, []string{"needs 25"}},
		"a pod that predates the guardrails, relabelled": {request{gvr: podsGVR, obj: onKAI(relabelled), old: onKAI(pod(own, gpus(25)))}, nil},
	}
	runCases(t, kueue, both)
	runCases(t, kai, both)
	runCases(t, kueue, map[string]policyCase{
		"a Job of 4 pods of 8 GPUs":        {request{gvr: jobsGVR, obj: parallel(4, gpus(8))}, []string{"this Job needs 32 nvidia.com/gpu at once, but team training can use at most 24"}},
		"3 completions of 8 GPUs":          {request{gvr: jobsGVR, obj: completions}, nil},
		"partial admission down to 3 pods": {request{gvr: jobsGVR, obj: parallel(4, gpus(8), "kueue.x-k8s.io/job-min-parallelism", "3")}, nil},
		"a Job of 3 pods of 8 GPUs":        {request{gvr: jobsGVR, obj: parallel(3, gpus(8))}, nil},
		"a CronJob's Jobs of 4 pods of 8 GPUs": {request{gvr: cronJobsGVR, obj: func() runtime.Object {
			c := cronJob(own, gpus(8))
			four := int32(4)
			c.Spec.JobTemplate.Spec.Parallelism = &four
			return c
		}()}, []string{"this CronJob needs 32 nvidia.com/gpu"}},
	})
	// KAI may start a Job's pods one by one.
	runCases(t, kai, map[string]policyCase{
		"a Job of 4 pods of 8 GPUs": {request{gvr: jobsGVR, obj: parallel(4, gpus(8))}, nil},
	})
	// A window's borrow raises the most: the policy cannot change by the hour.
	windowed := renderGuard(t, reference+"[[teams.training.windows]]\nfrom = \"20:00\"\nto = \"22:00\"\nborrow = 16\n", generator.Options{})
	runCases(t, windowed, map[string]policyCase{
		"25 GPUs, which a window allows": {podReq(pod(own, gpus(25))), nil},
		"33 GPUs":                        {podReq(pod(own, gpus(33))), []string{"needs 33 nvidia.com/gpu at once, but team training can use at most 32"}},
	})
}
