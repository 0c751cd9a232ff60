package multikueue

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// Check: a worker is lost. Training's two 4-GPU Jobs run in the workers;
// the worker of the first is killed (its etcd, API server and controllers,
// SIGKILL, as a machine that loses power). MultiKueue reports that worker
// disconnected and keeps its Jobs admitted on the manager until the
// worker-lost timeout has passed since they were dispatched, then puts
// them back in the queue, and the manager dispatches them to the worker
// that is left, where they run; a Job that ran there already is not
// touched.
//
// It stops a worker for good, so it runs last (the file's name sorts after
// the others, and go test runs files in that order).
func TestFleetWorkerLost(t *testing.T) {
	begin(t)
	m := fleet.manager
	jobs := submitAll(t, job{ns: training, name: "lost", pods: 1, gpus: 4}, 2)
	states := waitAllDispatched(t, jobs)
	lost := worker(states[0].cluster)
	left := otherWorker(lost.name)
	var moving []int
	keep := states[0].checkSince.Add(workerLostTimeout)
	for i, s := range states {
		if s.cluster == lost.name {
			moving = append(moving, i)
			if k := s.checkSince.Add(workerLostTimeout); k.Before(keep) {
				keep = k
			}
		}
	}
	t.Logf("killing %s, which runs %d of the 2 Jobs", lost.name, len(moving))
	killed := time.Now()
	lost.kill()

	waitFor(t, "manager: MultiKueueCluster "+lost.name+" disconnected", func(ctx context.Context) (bool, string) {
		o, err := m.cp.Dynamic.Resource(mkcGVR).Get(ctx, lost.name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return controlplane.HasCondition(o, "Active", "False"), controlplane.ConditionSummary(o)
	})
	t.Logf("%s reported disconnected %s after the kill", lost.name, time.Since(killed).Round(100*time.Millisecond))

	// Until the timeout (a second short of it: the check's time is kept to
	// the second), the lost worker's Jobs stay admitted there.
	watched := 0
	for ctx := ctxFor(t); time.Now().Before(keep.Add(-time.Second)); time.Sleep(poll) {
		for _, i := range moving {
			s, err := state(ctx, jobs[i])
			if err != nil {
				t.Fatal(err)
			}
			if !s.admitted || s.cluster != lost.name {
				t.Fatalf("%s left %s %s after the kill, before the worker-lost timeout (%s after its dispatch): %s",
					jobs[i].Name, lost.name, time.Since(killed).Round(100*time.Millisecond), workerLostTimeout, s)
			}
		}
		watched++
	}
	t.Logf("the lost worker's Jobs stayed admitted on the manager until the timeout (%d polls)", watched)

	for _, i := range moving {
		j := jobs[i]
		waitFor(t, j.Name+" dispatched again, to "+left.name, func(ctx context.Context) (bool, string) {
			s, err := state(ctx, j)
			if err != nil {
				return false, err.Error()
			}
			return s.admitted && s.cluster == left.name, s.String()
		})
		t.Logf("%s admitted in %s %s after %s was killed", j.Name, left.name, time.Since(killed).Round(100*time.Millisecond), lost.name)
	}
	waitNoStrayCopies(t, jobs)
	waitFor(t, left.name+": training's ClusterQueue holding both Jobs", func(ctx context.Context) (bool, string) {
		u, err := cqUsage(ctx, left, training)
		return err == nil && u.total == 8, fmt.Sprintf("%d GPUs %v", u.total, err)
	})
	for i, s := range states {
		if s.cluster != left.name {
			continue
		}
		now, err := state(ctxFor(t), jobs[i])
		if err != nil {
			t.Fatal(err)
		}
		if !now.admitted || now.cluster != left.name || now.evicted {
			t.Errorf("%s ran in %s, which stayed up, and was disturbed: %s", jobs[i].Name, left.name, now)
		}
	}
}
