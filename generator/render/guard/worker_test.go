package guard_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"

	"github.com/tenancy-dev/tenancy/generator"
)

// multiKueue is the user the manager's MultiKueue acts as in a worker by
// default (agreement.DefaultDispatcher).
const multiKueue = "system:serviceaccount:kueue-system:multikueue-sa"

// fleetAgreement is examples/fleet's agreement: hub manages east and west,
// training's guarantee of 16 sits in east.
func fleetAgreement(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "examples", "fleet", "tenancy.toml"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestWorkerTakesWorkFromTheManager: on a worker, GPU work in a team
// namespace comes from the manager's MultiKueue (the dispatcher) and the
// trusted controllers that make pods from its copies; a namespace admin
// submitting to the worker's own LocalQueue, which would bypass the
// fleet-wide quotas, is told to submit on the manager. The dispatcher's
// copies still pass every other rule (a queue of the team, what the team
// can use in this worker).
func TestWorkerTakesWorkFromTheManager(t *testing.T) {
	src := fleetAgreement(t)
	r := renderGuard(t, src, generator.Options{Cluster: "east"})
	gpu := gpuContainer("nvidia.com/gpu", 8)
	own := labels("kueue.x-k8s.io/queue-name", "training")
	other := labels("kueue.x-k8s.io/queue-name", "research")
	by := func(user string, obj *batchv1.Job) request { return request{gvr: jobsGVR, obj: obj, user: user} }
	gang := func(pods int32) *batchv1.Job {
		j := job(own, gpu)
		j.Spec.Parallelism, j.Spec.Completions = &pods, &pods
		return j
	}
	started := job(own, gpu)
	started.Labels = labels("kueue.x-k8s.io/queue-name", "training", "kueue.x-k8s.io/multikueue-origin", "hub")
	grown := gang(2)
	tests := map[string]policyCase{
		"a namespace admin's GPU Job on its own queue": {by("alice", job(own, gpu)), []string{
			"this Job requests GPUs in namespace training of team training (tenancy agreement gpu-pool), on cluster east, a worker of the fleet: " +
				"GPU work comes from the manager hub, whose MultiKueue admits it against the fleet-wide quotas and dispatches it here as " + multiKueue +
				"; submit it on hub to LocalQueue training instead",
		}},
		"a namespace admin's GPU Deployment on its own queue": {request{gvr: deployGVR, obj: deployment(own, own, spec(gpu))}, []string{"on cluster east, a worker of the fleet"}},
		"a namespace admin's bare GPU Pod on its own queue":   {request{gvr: podsGVR, obj: pod(own, gpu)}, []string{"this Pod requests GPUs in namespace training of team training (tenancy agreement gpu-pool), on cluster east"}},
		"a namespace admin's GPU Job without a queue":         {by("alice", job(nil, gpu)), []string{"a worker of the fleet", "add the label"}},
		"a namespace admin's CPU Job":                         {by("alice", job(nil, cpuContainer())), nil},
		"MultiKueue's copy":                                   {by(multiKueue, job(own, gpu)), nil},
		"MultiKueue's copy, another team's queue":             {by(multiKueue, job(other, gpu)), []string{"queue research is not this team's"}},
		"MultiKueue's copy, beyond the team's share here":     {by(multiKueue, gang(4)), []string{"needs 32 nvidia.com/gpu at once, but team training can use at most 16"}},
		"the copy's pods, by the Job controller":              {request{gvr: podsGVR, obj: owned(pod(nil, gpu), "Job"), user: jobController}, nil},
		"a JobSet's Job, by its controller":                   {by("system:serviceaccount:jobset-system:jobset-controller-manager", jobSetJob(own)), nil},
		"an update that keeps what the copy asks for":         {request{gvr: jobsGVR, obj: started, old: job(own, gpu), user: "alice"}, nil},
		"an update that asks for more":                        {request{gvr: jobsGVR, obj: grown, old: job(own, gpu), user: "alice"}, []string{"a worker of the fleet"}},
		"an update that makes a CPU Job ask for GPUs":         {request{gvr: jobsGVR, obj: job(own, gpu), old: job(own, cpuContainer()), user: "alice"}, []string{"a worker of the fleet"}},
	}
	runCases(t, r, tests)

	// Elsewhere the rule is not rendered: the manager admits against the
	// fleet-wide quotas, and a KAI worker is a cluster of its own (KAI has
	// no dispatch). Their policies are those of an agreement of one
	// cluster.
	single := renderGuard(t, reference, generator.Options{}).policies[0]
	singleKAI := renderGuard(t, reference, generator.Options{Backend: generator.KAI}).policies[0]
	for name, c := range map[string]struct {
		opts generator.Options
		want bool
	}{
		"the manager":  {generator.Options{Cluster: "hub"}, true},
		"a KAI worker": {generator.Options{Cluster: "west", Backend: generator.KAI}, true},
		"a worker":     {generator.Options{Cluster: "west"}, false},
	} {
		p := renderGuard(t, src, c.opts).policies[0]
		base := single
		if c.opts.Backend == generator.KAI {
			base = singleKAI
		}
		if got := equalSpecs(p, base); got != c.want {
			t.Errorf("%s: policy as an agreement of one cluster's = %v, want %v", name, got, c.want)
		}
	}
	if got := renderGuard(t, src, generator.Options{Cluster: "hub"}).admit(t, by("alice", job(own, gpu)), "training", "training"); len(got) != 0 {
		t.Errorf("the manager refuses a namespace admin's Job on its own queue: %q", got)
	}
}

// TestDispatcherKey: a worker's dispatcher key names the one user, besides
// the trusted controllers, that its guardrails let create GPU work; the
// default is then refused like anyone else.
func TestDispatcherKey(t *testing.T) {
	custom := "system:serviceaccount:kueue-system:east-dispatcher"
	secret := "kubeconfig_secret = \"east\""
	withKey := strings.Replace(fleetAgreement(t), secret, secret+"\ndispatcher = \""+custom+"\"", 1)
	if !strings.Contains(withKey, custom) {
		t.Fatalf("examples/fleet/tenancy.toml no longer writes %s", secret)
	}
	r := renderGuard(t, withKey, generator.Options{Cluster: "east"})
	gpuJob := job(labels("kueue.x-k8s.io/queue-name", "training"), gpuContainer("nvidia.com/gpu", 1))
	for user, want := range map[string][]string{
		custom:     nil,
		multiKueue: {"dispatches it here as " + custom},
	} {
		t.Run(user, func(t *testing.T) {
			wantRefusals(t, r.admit(t, request{gvr: jobsGVR, obj: gpuJob, user: user}, "training", "training"), want)
		})
	}
}

// jobSetJob is a GPU Job on queue l that a JobSet owns, as its controller
// makes it.
func jobSetJob(l map[string]string) *batchv1.Job {
	j := job(l, gpuContainer("nvidia.com/gpu", 1))
	j.OwnerReferences = owned(pod(nil, cpuContainer()), "JobSet").OwnerReferences
	return j
}
