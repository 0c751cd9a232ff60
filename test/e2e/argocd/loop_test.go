package argocd

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
)

// The checks run in file order (health_test.go's first), each from the
// reference agreement synced; TestRemoveTeam stays last, as it leaves the
// removed team's Namespace behind.

// TestSyncedAndHealthy: the reference agreement syncs to Synced/Healthy,
// every Kueue object shows the health tenancy's Lua checks give it, and the
// Application stays Synced over normal and hard refreshes without syncing
// again (no phantom OutOfSync in Argo CD's own diff).
func TestSyncedAndHealthy(t *testing.T) {
	begin(t)
	syncReference(t)
	_, s, err := getApp(ctxFor(t))
	if err != nil {
		t.Fatal(err)
	}
	started := ""
	if s.OperationState != nil {
		started = s.OperationState.StartedAt
	}

	// Each kind with a health check shows Healthy with the check's message;
	// Argo CD has no health of its own for these groups, so a health at all
	// proves argocd-cm's Lua ran.
	for kind, want := range map[string]string{
		"ClusterQueue":   "Healthy",
		"LocalQueue":     "Healthy",
		"Cohort":         "Healthy",
		"ResourceFlavor": "Healthy",
	} {
		rs := resourcesOf(s, kind)
		if len(rs) == 0 {
			t.Errorf("the Application manages no %s:\n%s", kind, s.summary())
		}
		for _, r := range rs {
			if r.Health == nil || r.Health.Status != want || r.Health.Message == "" {
				t.Errorf("%s: want health %s with a message from the Lua check", r, want)
			}
		}
	}
	if t.Failed() {
		return
	}
	for i, kind := range []string{"normal", "normal", "hard"} {
		s := refresh(t, kind)
		if s.Sync.Status != "Synced" {
			t.Fatalf("refresh %d (%s): sync status %s, want Synced:\n%s", i+1, kind, s.Sync.Status, s.summary())
		}
		for _, r := range s.Resources {
			if r.Status != "Synced" {
				t.Errorf("refresh %d (%s): %s", i+1, kind, r)
			}
		}
		if s.OperationState == nil || s.OperationState.StartedAt != started {
			t.Errorf("refresh %d (%s): a new sync ran; the diff saw a change that is not one", i+1, kind)
		}
	}
}

// TestGuaranteeChange: a commit raising inference's guarantee from 8 to 12
// GPUs (training's drops from 16 to 12, so the pool still adds up) is
// synced, and Kueue then admits a 10-GPU Job inference's old quota kept
// waiting (inference never borrows).
func TestGuaranteeChange(t *testing.T) {
	begin(t)
	syncReference(t)
	ctx := ctxFor(t)
	j := submitJob(t, "inference", "inference-10", 10)
	t.Cleanup(func() { deleteJob(t, j) })
	// Kueue decides within a second; 3 s of staying suspended is "waiting".
	time.Sleep(3 * time.Second)
	if got := jobSuspended(ctx, t, j); !got {
		t.Fatalf("a 10-GPU Job in inference (guaranteed 8, no borrowing) was admitted before the change")
	}

	changed := strings.NewReplacer(
		"[teams.training]\nguaranteed = 16", "[teams.training]\nguaranteed = 12",
		"[teams.inference]\nguaranteed = 8", "[teams.inference]\nguaranteed = 12",
	).Replace(string(readAgreement(t, "tenancy.toml")))
	if !strings.Contains(changed, "[teams.inference]\nguaranteed = 12") || !strings.Contains(changed, "[teams.training]\nguaranteed = 12") {
		t.Fatal("the reference tenancy.toml no longer has the lines this check edits")
	}
	sha := commitAgreement(t, "inference: 12 GPUs guaranteed", []byte(changed))
	waitApp(t, "synced and healthy at the guarantee change", 2*time.Minute, didSyncTo(sha))
	if got := nominalGPUs(ctx, t, "inference"); got != 12 {
		t.Errorf("ClusterQueue inference nominalQuota %d, want 12", got)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		return !jobSuspended(ctx, t, j), nil
	})
	if err != nil {
		t.Fatalf("Kueue did not admit the 10-GPU Job after the sync raised inference to 12: %v", err)
	}
}

// TestBrokenAgreement: a commit whose agreement is invalid fails the sync;
// the Application's condition carries the file, line and field, and
// nothing in the cluster is pruned or changed.
func TestBrokenAgreement(t *testing.T) {
	begin(t)
	syncReference(t)
	ctx := ctxFor(t)
	before := snapshot(ctx, t)

	ref := string(readAgreement(t, "tenancy.toml"))
	broken := strings.Replace(ref, "[teams.training]\nguaranteed = 16\nlendable = 8", "[teams.training]\nguaranteed = 16\nlendable = 20", 1)
	if broken == ref {
		t.Fatal("the reference tenancy.toml no longer has the lines this check edits")
	}
	line := 1 + strings.Count(broken[:strings.Index(broken, "lendable = 20")], "\n")
	wantMsg := regexp.MustCompile(fmt.Sprintf(`tenancy\.toml:%d:\d+: teams\.training\.lendable: `, line))

	commitAgreement(t, "training lends more than it has", []byte(broken))
	s := waitApp(t, "a ComparisonError naming tenancy.toml's line and field", 2*time.Minute, func(s *appStatus) bool {
		for _, c := range s.Conditions {
			if c.Type == "ComparisonError" && wantMsg.MatchString(c.Message) {
				return true
			}
		}
		return false
	})
	t.Logf("the Application says: %s", s.summary())
	// One more comparison cycle: the error must not turn into a sync.
	refresh(t, "normal")
	if diff := cmp.Diff(before, snapshot(ctx, t)); diff != "" {
		t.Errorf("the cluster changed after a broken commit (-before,+after):\n%s", diff)
	}
}

// TestBackendKAI: setting the plugin's backend parameter to kai renders KAI
// Queues; Argo CD syncs them (healthy by the Queue's Lua check) and prunes
// the Kueue objects, and back.
func TestBackendKAI(t *testing.T) {
	begin(t)
	sha := syncReference(t)
	setBackend(t, "kai")
	t.Cleanup(func() { setBackend(t, "") })
	refresh(t, "normal")
	s := waitApp(t, "synced to KAI Queues", 2*time.Minute, func(s *appStatus) bool {
		return syncedAt(sha)(s) && len(resourcesOf(s, "Queue")) > 0 && len(resourcesOf(s, "ClusterQueue")) == 0
	})
	for _, r := range resourcesOf(s, "Queue") {
		if r.Group != "scheduling.run.ai" || r.Health == nil || r.Health.Status != "Healthy" {
			t.Errorf("%s: want a scheduling.run.ai Queue, Healthy by the Lua check", r)
		}
	}
	if n := countKueue(ctxFor(t), t, "clusterqueues"); n != 0 {
		t.Errorf("%d ClusterQueues left in the cluster after switching to kai; prune should have removed them", n)
	}

	setBackend(t, "")
	refresh(t, "normal")
	waitApp(t, "back on Kueue", 2*time.Minute, func(s *appStatus) bool {
		return syncedAt(sha)(s) && len(resourcesOf(s, "Queue")) == 0 && len(resourcesOf(s, "ClusterQueue")) > 0
	})
}

// TestNothingRendered: with automated prune, no commit can make the
// Application render nothing and prune everything: an agreement without
// teams or flavors (the plugin refuses), a directory without tenancy.toml
// and no directory at all (Argo CD refuses) all fail the comparison and
// leave the cluster as it was.
func TestNothingRendered(t *testing.T) {
	begin(t)
	syncReference(t)
	ctx := ctxFor(t)
	before := snapshot(ctx, t)
	agreement := appPath + "/tenancy.toml"
	readme := appPath + "/README.md"
	for _, c := range []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"an agreement with no teams", map[string][]byte{agreement: []byte("version = 1\nname = \"gpu-pool\"\n")}, `tenancy\.toml:1:1: teams: `},
		// The repo-server checks the plugin's discovery rule (fileName:
		// tenancy.toml) even when the Application names the plugin, so
		// the plugin is not even run (v2.14 words it "couldn't").
		{"no tenancy.toml", map[string][]byte{agreement: nil, readme: []byte("GPU queues\n")}, `(could not|couldn't) find cmp-server plugin with name "tenancy" supporting the given repository`},
		{"no directory", map[string][]byte{agreement: nil, readme: nil}, `clusters/gpu: app path does not exist`},
	} {
		if _, err := env.repo.commit(ctx, c.name, c.files); err != nil {
			t.Fatal(err)
		}
		refresh(t, "normal")
		want := regexp.MustCompile(c.want)
		s := waitApp(t, c.name+": a ComparisonError", 2*time.Minute, func(s *appStatus) bool {
			for _, cond := range s.Conditions {
				if cond.Type == "ComparisonError" && want.MatchString(cond.Message) {
					return true
				}
			}
			return false
		})
		t.Logf("%s: sync status %s", c.name, s.Sync.Status)
		refresh(t, "normal")
		if diff := cmp.Diff(before, snapshot(ctx, t)); diff != "" {
			t.Errorf("%s: the cluster changed (-before,+after):\n%s", c.name, diff)
		}
	}
}

// TestRemoveTeam: removing a team prunes its ClusterQueue, LocalQueue and
// the guardrails in its Namespace; the Namespace itself, rendered with
// argocd.argoproj.io/sync-options: Prune=false,Delete=false, is kept, and
// Argo CD reports the Application OutOfSync with the Namespace requiring
// pruning, as its documentation says of Prune=false. Runs last: the
// Namespace stays behind.
func TestRemoveTeam(t *testing.T) {
	begin(t)
	syncReference(t)
	ctx := ctxFor(t)
	ns, err := env.cp.Kube.CoreV1().Namespaces().Get(ctx, "inference", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The guardrails render every team Namespace with this annotation, and
	// Argo CD applied it: a pruned object's sync options are read from the
	// live object, as there is no desired one any more.
	const syncOptions = "argocd.argoproj.io/sync-options"
	if got := ns.Annotations[syncOptions]; !strings.Contains(got, "Prune=false") {
		t.Fatalf("live Namespace inference has %s %q; the guardrails promise Prune=false", syncOptions, got)
	}
	ref := string(readAgreement(t, "tenancy.toml"))
	i := strings.Index(ref, "# Inference serves")
	if i < 0 {
		t.Fatal("the reference tenancy.toml no longer has the inference team this check removes")
	}
	sha := commitAgreement(t, "remove the inference team", []byte(ref[:i]))
	// Everything of the team is pruned: its ClusterQueue, and whatever
	// lives in its Namespace (LocalQueue, ResourceQuota, NetworkPolicy).
	s := waitApp(t, "the inference team's objects pruned", 2*time.Minute, func(s *appStatus) bool {
		if s.OperationState == nil || s.OperationState.SyncResult == nil || s.OperationState.SyncResult.Revision != sha || s.OperationState.Phase != "Succeeded" {
			return false
		}
		for _, r := range s.Resources {
			if r.Namespace == "inference" || (r.Kind == "ClusterQueue" && r.Name == "inference") {
				return false
			}
		}
		return true
	})
	t.Logf("after removing the team: %s", s.summary())
	live, err := env.cp.Kube.CoreV1().Namespaces().Get(ctx, "inference", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("Namespace inference: %v (Prune=false should have kept it)", err)
	}
	if live.DeletionTimestamp != nil {
		t.Fatalf("Namespace inference is being deleted despite Prune=false")
	}
	var nsRes *appResource
	for _, r := range s.Resources {
		if r.Kind == "Namespace" && r.Name == "inference" {
			nsRes = &r
		}
	}
	if nsRes == nil || !nsRes.RequiresPruning || nsRes.Status != "OutOfSync" || s.Sync.Status != "OutOfSync" {
		t.Errorf("want the Namespace listed OutOfSync with requiresPruning and the Application OutOfSync (Argo CD's documented Prune=false behaviour); got %v, app %s", nsRes, s.Sync.Status)
	}
}

// --- cluster helpers ---

const queueLabel = "kueue.x-k8s.io/queue-name"

func submitJob(t *testing.T, ns, name string, gpus int64) *batchv1.Job {
	t.Helper()
	gpu := corev1.ResourceName("nvidia.com/gpu")
	q := *resource.NewQuantity(gpus, resource.DecimalSI)
	obj := &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{queueLabel: ns}},
		Spec: batchv1.JobSpec{
			Suspend: ptr.To(true),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyNever,
				Containers: []corev1.Container{{
					Name:  "work",
					Image: "registry.invalid/tenancy-e2e:never-pulled",
					// No kubelet runs: Kueue admits by quota and no Pod starts.
					Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{gpu: q}, Limits: corev1.ResourceList{gpu: q}},
				}},
			}},
		},
	}
	got, err := env.cp.Kube.BatchV1().Jobs(ns).Create(ctxFor(t), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create Job %s/%s: %v", ns, name, err)
	}
	return got
}

func deleteJob(t *testing.T, j *batchv1.Job) {
	bg := metav1.DeletePropagationBackground
	_ = env.cp.Kube.BatchV1().Jobs(j.Namespace).Delete(context.Background(), j.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
	// Kueue keeps a ClusterQueue that still has workloads; wait until the
	// Workload is gone so later checks can prune it.
	_ = wait.PollUntilContextTimeout(context.Background(), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := env.cp.Dynamic.Resource(kueueGVR("workloads")).Namespace(j.Namespace).List(ctx, metav1.ListOptions{})
		return err == nil && len(l.Items) == 0, nil
	})
}

func jobSuspended(ctx context.Context, t *testing.T, j *batchv1.Job) bool {
	t.Helper()
	got, err := env.cp.Kube.BatchV1().Jobs(j.Namespace).Get(ctx, j.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get Job: %v", err)
	}
	return got.Spec.Suspend != nil && *got.Spec.Suspend
}

func kueueGVR(r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: r}
}

func nominalGPUs(ctx context.Context, t *testing.T, cq string) int64 {
	t.Helper()
	o, err := env.cp.Dynamic.Resource(kueueGVR("clusterqueues")).Get(ctx, cq, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get ClusterQueue %s: %v", cq, err)
	}
	var spec struct {
		ResourceGroups []struct {
			Flavors []struct {
				Resources []struct {
					Name         string            `json:"name"`
					NominalQuota resource.Quantity `json:"nominalQuota"`
				} `json:"resources"`
			} `json:"flavors"`
		} `json:"resourceGroups"`
	}
	raw, _ := json.Marshal(o.Object["spec"])
	if err := json.Unmarshal(raw, &spec); err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, g := range spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				if r.Name == "nvidia.com/gpu" {
					n += r.NominalQuota.Value()
				}
			}
		}
	}
	return n
}

func countKueue(ctx context.Context, t *testing.T, res string) int {
	t.Helper()
	l, err := env.cp.Dynamic.Resource(kueueGVR(res)).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range l.Items {
		if o.GetDeletionTimestamp() == nil {
			n++
		}
	}
	return n
}

// snapshot is what an agreement controls in the cluster: every Kueue and
// KAI object's and every Namespace's labels, annotations and spec, by
// kind/namespace/name, and whether it is being deleted. Status (which Kueue
// updates as it likes) is left out.
func snapshot(ctx context.Context, t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, gvr := range []schema.GroupVersionResource{
		kueueGVR("clusterqueues"), kueueGVR("localqueues"), kueueGVR("cohorts"),
		kueueGVR("resourceflavors"), kueueGVR("workloadpriorityclasses"),
		{Group: "scheduling.run.ai", Version: "v2", Resource: "queues"},
		{Version: "v1", Resource: "namespaces"},
	} {
		l, err := env.cp.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatalf("list %s: %v", gvr.Resource, err)
		}
		for _, o := range l.Items {
			var b bytes.Buffer
			labels, _ := json.Marshal(o.GetLabels())
			ann, _ := json.Marshal(o.GetAnnotations())
			spec, _ := json.Marshal(o.Object["spec"])
			fmt.Fprintf(&b, "labels=%s annotations=%s spec=%s deleting=%v", labels, ann, spec, o.GetDeletionTimestamp() != nil)
			out[fmt.Sprintf("%s %s/%s", o.GetKind(), o.GetNamespace(), o.GetName())] = b.String()
		}
	}
	return out
}
