package kaipools

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/await"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/kaiwork"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

type obj = unstructured.Unstructured

const (
	poolKey  = controlplane.KAINodePoolLabel
	queueKey = "kai.scheduler/queue"
	// agreementFile is the suite's agreement, relative to the repository.
	agreementFile = "test/e2e/testdata/kai-pools.toml"
)

// namespaces are the teams' namespaces (each team's own name).
var namespaces = []string{"training", "research", "inference"}

// poolNodes are the suite's Nodes: two of 8 GPUs per pool, each labelled
// with its pool as the GPU operator's or NFD's labels would be mapped to
// the pool label (docs/kai.md), and with the product label.
var poolNodes = map[string]struct{ pool, product string }{
	"h100-0": {"h100", "NVIDIA-H100-80GB-HBM3"}, "h100-1": {"h100", "NVIDIA-H100-80GB-HBM3"},
	"a100-0": {"a100", "NVIDIA-A100-SXM4-80GB"}, "a100-1": {"a100", "NVIDIA-A100-SXM4-80GB"},
}

var setup struct {
	once sync.Once
	done bool
	objs []*obj
}

// agreement applies the suite's agreement and makes its Nodes, once for
// all checks (the first caller does it; a failure there fails every later
// check, naming the first). Checks clear their own pool's work, so the two
// pools' checks can share it at once.
func agreement(t *testing.T) []*obj {
	t.Helper()
	setup.once.Do(func() {
		ctx := kaiwork.Ctx(t)
		objs := env.Render(t, agreementFile)
		if _, err := env.CP.Applier.Apply(ctx, objs, false); err != nil {
			t.Fatalf("apply the agreement: %v", err)
		}
		for name, n := range poolNodes {
			node := kaiwork.Node{Name: name, Res: workload.GPU, Count: 8, Labels: map[string]string{poolKey: n.pool, "nvidia.com/gpu.product": n.product}}.Object()
			if _, err := env.CP.Kube.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create Node %s: %v", name, err)
			}
		}
		waits.Until(t, kaiwork.Ctx(t), "the Nodes Ready and the Queues there", func(ctx context.Context) (bool, string) {
			var missing []string
			for name := range poolNodes {
				n, err := env.CP.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err != nil || len(n.Spec.Taints) > 0 || !ready(n) {
					missing = append(missing, "Node "+name)
				}
			}
			for _, o := range objs {
				if o.GetKind() == "Queue" {
					if _, err := env.CP.Dynamic.Resource(kaiwork.QueueGVR).Get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
						missing = append(missing, "Queue "+o.GetName())
					}
				}
			}
			sort.Strings(missing)
			return len(missing) == 0, fmt.Sprintf("not yet: %v", missing)
		})
		setup.objs, setup.done = objs, true
	})
	if !setup.done {
		t.Fatalf("the agreement and Nodes were not set up (see the first check that asked for them)")
	}
	return setup.objs
}

func ready(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// work is a team's 1-GPU pods for one pool: the pool label and the team's
// queue in that pool, at the agreement's priority.
type work struct{ team, pool string }

func (w work) queue() string { return w.team + "-" + w.pool }

func (w work) labels() map[string]string {
	return map[string]string{queueKey: w.queue(), poolKey: w.pool}
}

func (w work) spec() corev1.PodSpec {
	return workload.SpecWith(workload.GPUPodSpec(workload.GPU, 1), func(s *corev1.PodSpec) {
		s.SchedulerName = controlplane.KAISchedulerName
		s.PriorityClassName = "standard"
		s.TerminationGracePeriodSeconds = ptr.To[int64](0)
	})
}

// name is a pod's name: its pool first, so that names never collide
// between the two pools' checks running at once.
func (w work) name(prefix string, i int) string { return fmt.Sprintf("%s-%s-%d", w.pool, prefix, i) }

// submit creates n pods of w.
func submit(t *testing.T, w work, prefix string, n int) {
	t.Helper()
	ctx := kaiwork.Ctx(t)
	for i := range n {
		p := workload.PodOf(w.team, w.name(prefix, i), w.labels(), w.spec())
		if _, err := env.CP.Kube.CoreV1().Pods(w.team).Create(ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create pod %s/%s: %v", w.team, p.Name, err)
		}
	}
}

// tally is what w's pods of one prefix are doing, and any bound to a Node
// outside w's pool.
type tally struct {
	bound, pending int
	stray          []string
}

func (c tally) String() string {
	s := fmt.Sprintf("%d bound, %d pending", c.bound, c.pending)
	if len(c.stray) > 0 {
		s += fmt.Sprintf(", on another pool's Node: %v", c.stray)
	}
	return s
}

func count(ctx context.Context, w work, prefix string) (tally, error) {
	list, err := env.CP.Kube.CoreV1().Pods(w.team).List(ctx, metav1.ListOptions{LabelSelector: poolKey + "=" + w.pool})
	if err != nil {
		return tally{}, err
	}
	var c tally
	for _, p := range list.Items {
		if p.DeletionTimestamp != nil || !strings.HasPrefix(p.Name, w.pool+"-"+prefix+"-") {
			continue
		}
		switch node := p.Spec.NodeName; {
		case node == "":
			c.pending++
		case poolNodes[node].pool != w.pool:
			c.stray = append(c.stray, p.Name+" on "+node)
		default:
			c.bound++
		}
	}
	return c, nil
}

// bound is how many of a team's pods of one pool are to be bound.
type bound struct {
	w work
	n int
}

// waitBound waits until exactly n of each w's pods of prefix are bound,
// each on a Node of w's pool, then watches for settle (once for all) that
// none of those counts changes and no pod lands outside its pool.
func waitBound(t *testing.T, prefix string, want ...bound) {
	t.Helper()
	var whats []string
	for _, b := range want {
		whats = append(whats, fmt.Sprintf("%d of %s's %s pods", b.n, b.w.team, b.w.pool))
	}
	what := strings.Join(whats, ", ") + " (" + prefix + ") bound, each in its pool"
	// held reports whether every count is as wanted, or a pod strayed
	// (which ends the wait at once: Never then says so).
	held := func(ctx context.Context) (ok, stray bool, saw string) {
		ok = true
		var sb []string
		for _, b := range want {
			c, err := count(ctx, b.w, prefix)
			if err != nil {
				return false, false, err.Error()
			}
			ok = ok && c.bound == b.n
			stray = stray || len(c.stray) > 0
			sb = append(sb, fmt.Sprintf("%s/%s: %s", b.w.team, b.w.pool, c))
		}
		return ok, stray, strings.Join(sb, "; ")
	}
	waits.Until(t, kaiwork.Ctx(t), what, func(ctx context.Context) (bool, string) {
		ok, stray, saw := held(ctx)
		return ok || stray, saw
	})
	waits.Never(t, kaiwork.Ctx(t), "other than "+what, func(ctx context.Context) (bool, string) {
		ok, stray, saw := held(ctx)
		return !ok || stray, saw
	})
}

// clearPool deletes every Job and pod of a pool in the teams' namespaces
// and waits until none is left; the other pool's work is not touched.
func clearPool(t *testing.T, pool string) {
	t.Helper()
	ctx := kaiwork.Ctx(t)
	sel := metav1.ListOptions{LabelSelector: poolKey + "=" + pool}
	for _, ns := range namespaces {
		_ = env.CP.Kube.BatchV1().Jobs(ns).DeleteCollection(ctx, metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}, sel)
		_ = env.CP.Kube.CoreV1().Pods(ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)}, sel)
	}
	waits.Until(t, kaiwork.Ctx(t), "pool "+pool+"'s pods to be gone", func(ctx context.Context) (bool, string) {
		left := 0
		for _, ns := range namespaces {
			list, err := env.CP.Kube.CoreV1().Pods(ns).List(ctx, sel)
			if err != nil {
				return false, err.Error()
			}
			left += len(list.Items)
		}
		return left == 0, fmt.Sprintf("%d left", left)
	})
}

// fresh starts a check on the agreement with the named pools' work cleared.
func fresh(t *testing.T, pools ...string) {
	t.Helper()
	agreement(t)
	for _, p := range pools {
		clearPool(t, p)
	}
}

var waits = await.Waits{Timeout: 60 * time.Second, Interval: 200 * time.Millisecond, Settle: 3 * time.Second, State: clusterState}

// clusterState is, for a failure message, each team's pods per pool
// (Queues have no status here: no podgroup controller).
func clusterState(ctx context.Context) string {
	var b strings.Builder
	b.WriteString("cluster state:")
	for _, ns := range namespaces {
		for _, pool := range poolValues {
			list, err := env.CP.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: poolKey + "=" + pool})
			if err != nil || len(list.Items) == 0 {
				continue
			}
			bound := 0
			for _, p := range list.Items {
				if p.Spec.NodeName != "" {
					bound++
				}
			}
			fmt.Fprintf(&b, " %s/%s: %d bound of %d;", ns, pool, bound, len(list.Items))
		}
	}
	return b.String()
}
