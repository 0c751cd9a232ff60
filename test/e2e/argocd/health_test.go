package argocd

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// probeApp is a second Application, a plain directory of YAML, holding
// objects in states tenancy's own render never produces: the health checks
// in argocd/install/argocd-cm-health.yaml are run by Argo CD's application
// controller (its Lua engine) on these objects as Kueue reports them.
const (
	probeApp  = "health-probes"
	probePath = "probes"
)

// probes are the objects and the health Argo CD must give each, with a
// word its message must hold (Kueue's reason, or the check's own words).
var probes = []struct {
	kind, ns, name string
	health, says   string
	yaml           string
}{
	{"ClusterQueue", "", "probe-missing-flavor", "Degraded", "FlavorNotFound", `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: probe-missing-flavor
spec:
  namespaceSelector: {}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors:
        - name: no-such-flavor
          resources:
            - name: nvidia.com/gpu
              nominalQuota: 1
`},
	{"LocalQueue", "inference", "probe-orphan", "Degraded", "ClusterQueue", `
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  name: probe-orphan
  namespace: inference
spec:
  clusterQueue: no-such-clusterqueue
`},
	{"Workload", "inference", "probe-admitted", "Healthy", "Admitted", workloadYAML("probe-admitted", "inference", "1")},
	{"Workload", "inference", "probe-waiting", "Suspended", "Waiting for quota", workloadYAML("probe-waiting", "inference", "100")},
	{"Workload", "inference", "probe-no-queue", "Degraded", "Inadmissible", workloadYAML("probe-no-queue", "no-such-localqueue", "1")},
}

func workloadYAML(name, queue, gpus string) string {
	return `
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata:
  name: ` + name + `
  namespace: inference
spec:
  queueName: ` + queue + `
  podSets:
    - name: main
      count: 1
      template:
        spec:
          restartPolicy: Never
          containers:
            - name: work
              image: registry.invalid/tenancy-e2e:never-pulled
              resources:
                requests:
                  nvidia.com/gpu: "` + gpus + `"
                limits:
                  nvidia.com/gpu: "` + gpus + `"
`
}

// TestHealthChecks: Argo CD shows each probe with the health the Lua
// checks give it: a ClusterQueue naming a missing flavor is Degraded with
// Kueue's reason, a LocalQueue without its ClusterQueue is Degraded, an
// admitted Workload Healthy, one waiting for quota Suspended, one with no
// LocalQueue Degraded (Kueue's Inadmissible).
func TestHealthChecks(t *testing.T) {
	begin(t)
	syncReference(t)
	var docs []string
	for _, p := range probes {
		docs = append(docs, p.yaml)
	}
	if _, err := env.repo.commit(ctxFor(t), "health probes", map[string][]byte{probePath + "/probes.yaml": []byte(strings.Join(docs, "---"))}); err != nil {
		t.Fatal(err)
	}
	app := application(env.repo.URL)
	app.SetName(probeApp)
	// Deleting the Application then deletes its objects (Argo CD's
	// cascading delete), before the controller could self-heal them back.
	app.SetFinalizers([]string{"resources-finalizer.argocd.argoproj.io"})
	unstructured.RemoveNestedField(app.Object, "spec", "source", "plugin")
	if err := unstructured.SetNestedField(app.Object, probePath, "spec", "source", "path"); err != nil {
		t.Fatal(err)
	}
	apps := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace)
	if _, err := apps.Create(ctxFor(t), app, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create Application %s: %v", probeApp, err)
	}
	t.Cleanup(func() { removeProbes(t) })

	var last []appResource
	ctx := ctxFor(t)
	deadline := time.Now().Add(90 * time.Second)
	for {
		u, err := apps.Get(ctx, probeApp, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		last = decodeResources(t, u)
		if mismatches(last) == "" || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	if m := mismatches(last); m != "" {
		t.Errorf("health of the probes, as Argo CD reports them:\n%s", m)
	}
	for _, r := range last {
		t.Logf("%s", r)
	}
}

func decodeResources(t *testing.T, u *unstructured.Unstructured) []appResource {
	t.Helper()
	var s appStatus
	if err := decodeInto(u.Object["status"], &s); err != nil {
		t.Fatal(err)
	}
	return s.Resources
}

// mismatches lists the probes whose health is not the expected one.
func mismatches(rs []appResource) string {
	var b strings.Builder
	for _, p := range probes {
		var got *appResource
		for i, r := range rs {
			if r.Kind == p.kind && r.Namespace == p.ns && r.Name == p.name {
				got = &rs[i]
			}
		}
		switch {
		case got == nil:
			b.WriteString("  " + p.kind + " " + p.name + ": not in the Application yet\n")
		case got.Health == nil || got.Health.Status != p.health || !strings.Contains(got.Health.Message, p.says):
			b.WriteString("  " + got.String() + ": want " + p.health + " saying " + p.says + "\n")
		}
	}
	return b.String()
}

// removeProbes deletes the probe Application with its objects (the
// cascade its finalizer asks for), so the checks after it see only the
// agreement's, and the probes from Git.
func removeProbes(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	apps := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace)
	if err := apps.Delete(ctx, probeApp, metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete Application %s: %v", probeApp, err)
	}
	err := wait.PollUntilContextCancel(ctx, 250*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		_, err := apps.Get(ctx, probeApp, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("Application %s (cascading delete of the probes) not gone: %v", probeApp, err)
	}
	for _, p := range probes {
		gvr := schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: strings.ToLower(p.kind) + "s"}
		var err error
		if p.ns == "" {
			_, err = env.cp.Dynamic.Resource(gvr).Get(ctx, p.name, metav1.GetOptions{})
		} else {
			_, err = env.cp.Dynamic.Resource(gvr).Namespace(p.ns).Get(ctx, p.name, metav1.GetOptions{})
		}
		if !apierrors.IsNotFound(err) {
			t.Errorf("probe %s %s left behind by the cascading delete (get: %v)", p.kind, p.name, err)
		}
	}
	if _, err := env.repo.commit(ctx, "remove health probes", map[string][]byte{probePath + "/probes.yaml": nil}); err != nil {
		t.Errorf("remove probes from git: %v", err)
	}
}
