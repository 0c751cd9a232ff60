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

// The checks run in file order (fleet_test.go's first, then
// health_test.go's), each from the reference agreement synced;
// TestApplicationSetFleet deletes the loop's Application and leaves only
// Namespaces behind, which the next check's Application takes over;
// TestRemoveTeam stays last, as it leaves the removed team's Namespace
// behind.

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
// synced. Before it, the guardrails refuse a 10-GPU Job in inference at
// admission (inference never borrows, so at most 8 ever run: the Job would
// wait forever); after it, the synced policy takes the Job and Kueue admits
// it.
func TestGuaranteeChange(t *testing.T) {
	begin(t)
	syncReference(t)
	ctx := ctxFor(t)
	_, err := env.cp.Kube.BatchV1().Jobs("inference").Create(ctx, jobFor("inference", "inference-10", 10), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "can use at most 8") {
		t.Fatalf("a 10-GPU Job in inference (guaranteed 8, no borrowing) before the change: %v; want a refusal naming its most, 8", err)
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
	// The API server puts a changed ValidatingAdmissionPolicy in force a
	// moment after it is written: the Job is retried until it is.
	var j *batchv1.Job
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		j, err = env.cp.Kube.BatchV1().Jobs("inference").Create(ctx, jobFor("inference", "inference-10", 10), metav1.CreateOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("the 10-GPU Job is still refused after the sync raised inference to 12: %v", err)
	}
	t.Cleanup(func() { deleteJob(t, j) })
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
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

// TestWindowSync: issue 21's proof in the Argo CD loop. A commit gives
// inference a lending window; the Application carries the ignoreDifferences
// (managedFieldsManagers: [tenancy-windows]) and RespectIgnoreDifferences
// docs/argocd.md tells users to add (application()). With the window open,
// the real controller (`tenancy windows`, the plugin image's binary, out of
// cluster) applies lendingLimit 6 to inference's ClusterQueue; then
//   - normal and hard refreshes show the Application and the queue Synced,
//     and self-heal starts no sync;
//   - a sync at the same revision (as `argocd app sync`) and the automated
//     sync of a new commit both succeed and apply the queue, and leave its
//     spec untouched (lendingLimit 6, generation unchanged, still owned by
//     tenancy-windows), the Application Synced;
//   - the inverses: without the ignoreDifferences, the Application shows
//     the queue OutOfSync and self-heal writes the rendered 0 back; with
//     them but a sync without RespectIgnoreDifferences, the sync writes
//     the rendered 0 back. So the Synced above is the ignoreDifferences',
//     and the syncs did write the queue and kept the value by the option.
func TestWindowSync(t *testing.T) {
	begin(t)
	syncReference(t)
	ctx := ctxFor(t)
	// Registered before the controller's cleanup, so it runs after the
	// controller is stopped.
	t.Cleanup(func() { restoreReference(t) })

	agreement := windowAgreement(t)
	sha := commitAgreement(t, "inference lends 6 in the daytime", agreement)
	s := waitApp(t, "synced with the windows controller's objects", 2*time.Minute, func(s *appStatus) bool {
		return s.Sync.Status == "Synced" && s.Sync.Revision == sha && sha == syncedRevision(s) && len(resourcesOf(s, "Deployment")) == 1
	})
	// No kubelet runs the rendered Deployment's pods: its health, and so
	// the Application's, stays Progressing, which is not what this checks.
	t.Logf("with the controller's objects: %s", s.summary())
	if q := inferenceQueue(ctx, t); q.lendingLimit != 0 || q.windowOwns {
		t.Fatalf("inference's ClusterQueue before the controller runs: %s; want the rendered lendingLimit 0 (outside every window)", q)
	}
	lastSync := s.OperationState.StartedAt

	w := startWindowsController(t, agreement, windowStart, "e2e")
	var applied queueState
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		applied = inferenceQueue(ctx, t)
		return applied.lendingLimit == 6 && applied.windowOwns, nil
	})
	if err != nil {
		t.Fatalf("the controller did not apply the window's lendingLimit 6: %s\n%s", applied, w.Log())
	}
	// keeps asserts the window's value is live exactly as the controller
	// applied it, and the Application Synced with it.
	keeps := func(t *testing.T, what string) {
		t.Helper()
		s := refresh(t, "normal")
		if s.Sync.Status != "Synced" || !syncedQueue(s) {
			t.Errorf("%s: want the Application and inference's ClusterQueue Synced: %s", what, s.summary())
		}
		if q := inferenceQueue(ctx, t); q.lendingLimit != 6 || !q.windowOwns || q.generation != applied.generation {
			t.Errorf("%s: inference's ClusterQueue %s; want it as the controller applied it: %s", what, q, applied)
		}
	}

	t.Run("refreshes-show-synced", func(t *testing.T) {
		for _, kind := range []string{"normal", "hard"} {
			s := refresh(t, kind)
			if s.Sync.Status != "Synced" || !syncedQueue(s) {
				t.Errorf("%s refresh: want the Application and inference's ClusterQueue Synced: %s", kind, s.summary())
			}
		}
		// Self-heal acts a second after a comparison finds a difference
		// (--self-heal-timeout-seconds 1); 3 s is long past it.
		time.Sleep(3 * time.Second)
		_, s, err := getApp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if s.OperationState == nil || s.OperationState.StartedAt != lastSync {
			t.Errorf("a sync started after the controller's apply (self-heal saw a difference): %s", s.summary())
		}
		keeps(t, "after the refreshes")
	})

	revision := sha
	for _, c := range []struct {
		name string
		sync func(t *testing.T) *appStatus
	}{
		{"argocd-app-sync", func(t *testing.T) *appStatus {
			// The API server gives the operation the Application's sync
			// options when the request names none.
			return syncNow(t, revision, "e2e-sync-in-window", []string{respectIgnoreDifferences})
		}},
		{"automated-sync-of-a-commit", func(t *testing.T) *appStatus {
			// A comment changes the controller's ConfigMap and its pod
			// template's checksum, so the commit needs a sync.
			revision = commitAgreement(t, "a commit during the window", []byte(string(agreement)+"# Reviewed during the window.\n"))
			return waitApp(t, "the automated sync of the commit", 2*time.Minute, func(s *appStatus) bool {
				return s.Sync.Status == "Synced" && s.Sync.Revision == revision && syncedRevision(s) == revision && s.OperationState.Operation.InitiatedBy.Automated
			})
		}},
	} {
		t.Run(c.name+"-keeps-the-window", func(t *testing.T) {
			s := c.sync(t)
			msg, ok := appliedQueue(s)
			if !ok {
				t.Errorf("the sync did not apply inference's ClusterQueue: %s", s.summary())
			}
			t.Logf("the sync applied inference's ClusterQueue: %q", msg)
			// Anything the sync set off (self-heal) has had its chance.
			time.Sleep(3 * time.Second)
			keeps(t, "after the sync")
		})
	}

	// The inverses: each addition is what keeps the window's value. The
	// controller applies once per hour (startWindowsController), so what a
	// sync writes stays.
	t.Run("without-ignoreDifferences-OutOfSync-and-self-heal-reverts", func(t *testing.T) {
		_, before, err := getApp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		setIgnoreDifferences(t, false)
		t.Cleanup(func() { setIgnoreDifferences(t, true) })
		if s := refresh(t, "normal"); s.Sync.Status != "OutOfSync" || syncedQueue(s) {
			t.Errorf("without ignoreDifferences: want the Application and inference's ClusterQueue OutOfSync: %s", s.summary())
		}
		waitApp(t, "self-heal", time.Minute, func(s *appStatus) bool {
			return s.Sync.Status == "Synced" && syncedRevision(s) == revision && s.OperationState.StartedAt != before.OperationState.StartedAt && s.OperationState.Operation.InitiatedBy.Automated
		})
		if q := inferenceQueue(ctx, t); q.lendingLimit != 0 || q.windowOwns {
			t.Errorf("after self-heal without ignoreDifferences: inference's ClusterQueue %s; want the rendered lendingLimit 0", q)
		}
	})

	t.Run("without-RespectIgnoreDifferences-a-sync-reverts", func(t *testing.T) {
		w.Stop()
		w = startWindowsController(t, agreement, windowStart, "e2e-again")
		err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
			applied = inferenceQueue(ctx, t)
			return applied.lendingLimit == 6 && applied.windowOwns, nil
		})
		if err != nil {
			t.Fatalf("the restarted controller did not apply the window's lendingLimit 6: %s\n%s", applied, w.Log())
		}
		keeps(t, "after the restart")
		// As `argocd app sync` of an Application without the option, or
		// one naming other options.
		syncNow(t, revision, "e2e-sync-without-respect", nil)
		if q := inferenceQueue(ctx, t); q.lendingLimit != 0 || q.windowOwns {
			t.Errorf("after a sync without %s: inference's ClusterQueue %s; want the rendered lendingLimit 0 written over the window's", respectIgnoreDifferences, q)
		}
	})
}

// syncedRevision is the revision the last sync applied when it succeeded
// and nothing runs, else "".
func syncedRevision(s *appStatus) string {
	o := s.OperationState
	if o == nil || o.Phase != "Succeeded" || o.SyncResult == nil {
		return ""
	}
	return o.SyncResult.Revision
}

// restoreReference puts the reference agreement back after
// TestWindowSync, pruning the controller's objects. If the controller's
// value is still in inference's ClusterQueue (the check failed before its
// last step), a sync without RespectIgnoreDifferences writes the rendered
// one, as that step does: with RespectIgnoreDifferences no sync ever would.
func restoreReference(t *testing.T) {
	t.Helper()
	sha := syncReference(t)
	if q := inferenceQueue(ctxFor(t), t); q.lendingLimit != 0 || q.windowOwns {
		syncNow(t, sha, "e2e-restore-reference", nil)
		if q := inferenceQueue(ctxFor(t), t); q.lendingLimit != 0 || q.windowOwns {
			t.Errorf("inference's ClusterQueue after restoring the reference agreement: %s", q)
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

// jobFor is a suspended Job in ns, on the team's LocalQueue, of one pod
// asking for gpus GPUs.
func jobFor(ns, name string, gpus int64) *batchv1.Job {
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
	return obj
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
