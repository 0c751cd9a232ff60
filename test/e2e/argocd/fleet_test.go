package argocd

// The fleet (issue 29) in the Argo CD loop: examples/fleet's ApplicationSet,
// run by Argo CD's own applicationset controller, gives each cluster of the
// fleet agreement its Application with the plugin's cluster parameter, and
// one commit to tenancy.toml reaches the manager and every worker.
//
// The manager is the suite's control plane (Argo CD's in-cluster, with
// Kueue); each worker is an API server of its own, started here with
// Kueue's CRDs only (nothing in this check needs a worker's Kueue to run:
// it checks what Argo CD applies, and TestFleet... in make e2e checks what
// Kueue does with it) and registered with Argo CD as a cluster Secret under
// the name the ApplicationSet's element gives as its destination.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

// The example's files, and Argo CD's name for the cluster it runs in.
const (
	fleetAppSetFile    = "examples/fleet/applicationset.yaml"
	fleetAgreementFile = "examples/fleet/tenancy.toml"
	inCluster          = "in-cluster"
	// kueueNamespace is where the manager's Kueue reads the workers'
	// kubeconfig Secrets.
	kueueNamespace = "kueue-system"
)

var appSetGVR = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applicationsets"}

// fleetElement is one element of the ApplicationSet's list generator: the
// part of the agreement (the plugin's cluster parameter) and the Argo CD
// cluster it goes to.
type fleetElement struct {
	Cluster     string `json:"cluster"`
	Destination string `json:"destination"`
}

// fleetCluster is where one part is synced to: a dynamic client for its
// API server.
type fleetCluster struct {
	part   string
	client dynamic.Interface
}

// TestApplicationSetFleet: the ApplicationSet of examples/fleet creates one
// Application per cluster, each rendering its own part (the manager's
// ClusterQueues hold the fleet's totals, each worker's its shares, all as
// `tenancy render --cluster` prints them), and a commit raising a team's
// guarantee changes the ClusterQueues in the manager and both workers.
func TestApplicationSetFleet(t *testing.T) {
	begin(t)
	appSet := readAppSet(t)
	elements := appSetElements(t, appSet)
	// The loop's own Application renders the reference agreement, whose
	// teams, flavor and cohort have the fleet's names; an object belongs to
	// one Application, so that one goes, with what it synced.
	deleteAppCascade(t, appName)

	clusters := startWorkers(t, elements)
	agreement := readAgreement(t, fleetAgreementFile)
	path := appSetPath(t, appSet)
	sha := commitFile(t, "the fleet's agreement", path, agreement)

	// The file as users apply it, pointed at the loop's repository.
	if err := unstructured.SetNestedField(appSet.Object, env.repo.URL, "spec", "template", "spec", "source", "repoURL"); err != nil {
		t.Fatal(err)
	}
	ctx := ctxFor(t)
	if _, err := env.cp.Dynamic.Resource(appSetGVR).Namespace(argoNamespace).Create(ctx, appSet, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create the ApplicationSet: %v", err)
	}
	t.Cleanup(func() { deleteAppSet(t, appSet.GetName()) })

	apps := waitFleetApps(t, appSet.GetName(), elements)
	before := map[string]map[string]string{}
	for _, el := range elements {
		waitAppNamed(t, apps[el.Cluster], "synced at the fleet's agreement", 3*time.Minute, synced(el, sha))
		before[el.Cluster] = checkQueues(t, clusters[el.Cluster], agreement)
	}

	raised := raiseGuarantee(t, agreement)
	sha = commitFile(t, "a team's guarantee raised across the fleet", path, raised)
	for _, el := range elements {
		refreshApp(t, apps[el.Cluster], "normal")
	}
	for _, el := range elements {
		waitAppNamed(t, apps[el.Cluster], "synced at the raised guarantee", 3*time.Minute, synced(el, sha))
		after := checkQueues(t, clusters[el.Cluster], raised)
		if maps.Equal(before[el.Cluster], after) {
			t.Errorf("cluster %s: the ClusterQueues' quotas did not change with the raised guarantee: %v", el.Cluster, after)
		} else {
			t.Logf("cluster %s: ClusterQueue quotas %v -> %v", el.Cluster, before[el.Cluster], after)
		}
	}
}

// synced is what the Application of el shows once revision is applied:
// the manager's is Healthy too (its Kueue activates the ClusterQueues once
// MultiKueue reaches the workers); a worker's queues have no Kueue to give
// them a status.
func synced(el fleetElement, revision string) func(*appStatus) bool {
	if el.Destination == inCluster {
		return didSyncTo(revision)
	}
	return appliedAt(revision)
}

// readAppSet reads examples/fleet/applicationset.yaml.
func readAppSet(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal(readAgreement(t, fleetAppSetFile), &obj); err != nil {
		t.Fatalf("%s: %v", fleetAppSetFile, err)
	}
	u := &unstructured.Unstructured{Object: obj}
	if u.GetKind() != "ApplicationSet" || u.GetNamespace() != argoNamespace {
		t.Fatalf("%s holds a %s in namespace %q, want an ApplicationSet in %s", fleetAppSetFile, u.GetKind(), u.GetNamespace(), argoNamespace)
	}
	return u
}

// appSetElements are the list generator's elements: one per part, the
// manager's going to in-cluster (the suite's control plane, with Kueue).
func appSetElements(t *testing.T, appSet *unstructured.Unstructured) []fleetElement {
	t.Helper()
	gens, _, _ := unstructured.NestedSlice(appSet.Object, "spec", "generators")
	if len(gens) != 1 {
		t.Fatalf("%s has %d generators, want one list generator", fleetAppSetFile, len(gens))
	}
	var g struct {
		List struct {
			Elements []fleetElement `json:"elements"`
		} `json:"list"`
	}
	if err := decodeInto(gens[0], &g); err != nil {
		t.Fatal(err)
	}
	els := g.List.Elements
	managers := 0
	for _, el := range els {
		if el.Cluster == "" || el.Destination == "" {
			t.Fatalf("%s: element %+v lacks cluster or destination", fleetAppSetFile, el)
		}
		if el.Destination == inCluster {
			managers++
		}
	}
	if len(els) < 3 || managers != 1 {
		t.Fatalf("%s: elements %+v: want the manager on %s and at least two workers", fleetAppSetFile, els, inCluster)
	}
	return els
}

// appSetPath is the source path the ApplicationSet's Applications render.
func appSetPath(t *testing.T, appSet *unstructured.Unstructured) string {
	t.Helper()
	path, _, _ := unstructured.NestedString(appSet.Object, "spec", "template", "spec", "source", "path")
	if path == "" || path == appPath {
		t.Fatalf("%s: source path %q: want a directory of its own", fleetAppSetFile, path)
	}
	return path
}

// startWorkers starts an API server with Kueue's CRDs for each element not
// on in-cluster and registers it with Argo CD under its destination name,
// as `argocd cluster add` would: a cluster Secret with its server and
// credentials. It returns each part's cluster.
func startWorkers(t *testing.T, elements []fleetElement) map[string]fleetCluster {
	t.Helper()
	ctx := ctxFor(t)
	crds, err := controlplane.KueueCRDs(env.kueueDir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]fleetCluster{}
	for _, el := range elements {
		if el.Destination == inCluster {
			out[el.Cluster] = fleetCluster{el.Cluster, env.cp.Dynamic}
			continue
		}
		dir := filepath.Join(env.cp.Dir, "fleet-"+el.Destination)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cp, err := controlplane.StartAPIServer(ctx, controlplane.Options{
			Binaries:  env.binaries,
			Dir:       dir,
			ExtraCRDs: crds,
			Log:       os.Stderr,
		})
		if err != nil {
			t.Fatalf("start worker %s: %v", el.Destination, err)
		}
		t.Cleanup(cp.Stop)
		config, err := json.Marshal(map[string]any{"tlsClientConfig": map[string]any{
			"caData":   base64.StdEncoding.EncodeToString(cp.Config.CAData),
			"certData": base64.StdEncoding.EncodeToString(cp.Config.CertData),
			"keyData":  base64.StdEncoding.EncodeToString(cp.Config.KeyData),
		}})
		if err != nil {
			t.Fatal(err)
		}
		secret := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{
				Name:      "cluster-" + el.Destination,
				Namespace: argoNamespace,
				Labels:    map[string]string{"argocd.argoproj.io/secret-type": "cluster"},
			},
			StringData: map[string]string{"name": el.Destination, "server": cp.Config.Host, "config": string(config)},
		}
		if _, err := env.cp.Kube.CoreV1().Secrets(argoNamespace).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatalf("register worker %s with Argo CD: %v", el.Destination, err)
		}
		// And with the manager's Kueue, as the docs tell users: the
		// Secret its MultiKueueCluster names (the agreement's
		// kubeconfig_secret, by default the cluster's name; here the
		// destination's, which the example keeps equal), holding a
		// kubeconfig for the worker.
		kubeconfig, err := os.ReadFile(cp.Kubeconfig)
		if err != nil {
			t.Fatal(err)
		}
		mk := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: el.Destination, Namespace: kueueNamespace},
			Data:       map[string][]byte{"kubeconfig": kubeconfig},
		}
		if _, err := env.cp.Kube.CoreV1().Secrets(kueueNamespace).Create(ctx, mk, metav1.CreateOptions{}); err != nil {
			t.Fatalf("the manager's kubeconfig Secret for %s: %v", el.Destination, err)
		}
		// Removed before the worker stops (cleanups run last first), so
		// neither Argo CD nor Kueue keeps a dead cluster in its cache.
		t.Cleanup(func() {
			_ = env.cp.Kube.CoreV1().Secrets(argoNamespace).Delete(context.Background(), secret.Name, metav1.DeleteOptions{})
			_ = env.cp.Kube.CoreV1().Secrets(kueueNamespace).Delete(context.Background(), mk.Name, metav1.DeleteOptions{})
		})
		out[el.Cluster] = fleetCluster{el.Cluster, cp.Dynamic}
	}
	return out
}

// commitFile commits content as dir/tenancy.toml and pushes.
func commitFile(t *testing.T, msg, dir string, content []byte) string {
	t.Helper()
	sha, err := env.repo.commit(ctxFor(t), msg, map[string][]byte{filepath.Join(dir, "tenancy.toml"): content})
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	return sha
}

// waitFleetApps waits until the applicationset controller has created one
// Application per element, owned by the ApplicationSet, with that
// element's cluster parameter and destination, and returns their names by
// part.
func waitFleetApps(t *testing.T, appSet string, elements []fleetElement) map[string]string {
	t.Helper()
	want := map[string]string{}
	for _, el := range elements {
		want[el.Cluster] = el.Destination
	}
	var got map[string]string
	names := map[string]string{}
	err := wait.PollUntilContextTimeout(ctxFor(t), 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		l, err := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		got = map[string]string{}
		for _, app := range l.Items {
			if !ownedBy(app, appSet) {
				continue
			}
			var spec struct {
				Source struct {
					Plugin struct {
						Name       string `json:"name"`
						Parameters []struct {
							Name   string `json:"name"`
							String string `json:"string"`
						} `json:"parameters"`
					} `json:"plugin"`
				} `json:"source"`
				Destination struct {
					Name string `json:"name"`
				} `json:"destination"`
			}
			if err := decodeInto(app.Object["spec"], &spec); err != nil {
				return false, err
			}
			for _, p := range spec.Source.Plugin.Parameters {
				if p.Name == "cluster" && spec.Source.Plugin.Name == "tenancy" {
					got[p.String] = spec.Destination.Name
					names[p.String] = app.GetName()
				}
			}
		}
		return len(got) == len(want), nil
	})
	if err != nil {
		t.Fatalf("the applicationset controller made Applications for %v (part: destination), want %v: %v", got, want, err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("Applications by part (part: destination) %v, want %v", got, want)
	}
	return names
}

func ownedBy(o unstructured.Unstructured, appSet string) bool {
	for _, ref := range o.GetOwnerReferences() {
		if ref.Kind == "ApplicationSet" && ref.Name == appSet {
			return true
		}
	}
	return false
}

// checkQueues compares the ClusterQueues live in c with what `tenancy
// render --cluster PART` prints for agreement, by their quotas, and
// returns them.
func checkQueues(t *testing.T, c fleetCluster, agreement []byte) map[string]string {
	t.Helper()
	want := renderedQueues(t, c.part, agreement)
	l, err := c.client.Resource(kueueGVR("clusterqueues")).List(ctxFor(t), metav1.ListOptions{})
	if err != nil {
		t.Fatalf("cluster %s: list ClusterQueues: %v", c.part, err)
	}
	got := map[string]string{}
	for _, o := range l.Items {
		got[o.GetName()] = quotas(t, o.Object)
	}
	if !maps.Equal(want, got) {
		t.Errorf("cluster %s: live ClusterQueues differ from tenancy render --cluster %s:\n got  %v\n want %v", c.part, c.part, got, want)
	}
	return got
}

// renderedQueues renders part of agreement with the binary the plugin runs
// and returns its ClusterQueues' quotas by name.
func renderedQueues(t *testing.T, part string, agreement []byte) map[string]string {
	t.Helper()
	cmd := exec.Command(env.tenancy, "render", "--cluster", part, "-")
	cmd.Stdin = bytes.NewReader(agreement)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tenancy render --cluster %s: %v\n%s", part, err, stderr.String())
	}
	want := map[string]string{}
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(doc), &o); err != nil {
			t.Fatalf("tenancy render --cluster %s: %v", part, err)
		}
		if o["kind"] == "ClusterQueue" {
			name, _, _ := unstructured.NestedString(o, "metadata", "name")
			want[name] = quotas(t, o)
		}
	}
	if len(want) == 0 {
		t.Fatalf("tenancy render --cluster %s printed no ClusterQueue", part)
	}
	return want
}

// quotas writes a ClusterQueue's quotas as one comparable line: each
// flavor's resources with nominal quota, borrowing and lending limits, in
// canonical quantities (the API server may spell 16 as "16" or 16).
func quotas(t *testing.T, cq map[string]any) string {
	t.Helper()
	var spec struct {
		ResourceGroups []struct {
			Flavors []struct {
				Name      string `json:"name"`
				Resources []struct {
					Name           string             `json:"name"`
					NominalQuota   resource.Quantity  `json:"nominalQuota"`
					BorrowingLimit *resource.Quantity `json:"borrowingLimit"`
					LendingLimit   *resource.Quantity `json:"lendingLimit"`
				} `json:"resources"`
			} `json:"flavors"`
		} `json:"resourceGroups"`
	}
	if err := decodeInto(cq["spec"], &spec); err != nil {
		t.Fatal(err)
	}
	var parts []string
	limit := func(q *resource.Quantity) string {
		if q == nil {
			return "-"
		}
		return q.String()
	}
	for _, g := range spec.ResourceGroups {
		for _, f := range g.Flavors {
			for _, r := range f.Resources {
				parts = append(parts, fmt.Sprintf("%s/%s=%s/%s/%s", f.Name, r.Name, r.NominalQuota.String(), limit(r.BorrowingLimit), limit(r.LendingLimit)))
			}
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// raiseGuarantee returns the fleet agreement with research's guarantee
// raised from 8 to 12 GPUs, the 4 new ones in east, where training gives
// them up (16 to 12): every cluster is full, so the fleet still adds up.
// The manager's ClusterQueues change (research 12, training 12), east's
// (research's share 4, training's 12) and west's (research lends 5 there
// now, its lendable following its guarantee's split 8:4).
func raiseGuarantee(t *testing.T, agreement []byte) []byte {
	t.Helper()
	edits := [][2]string{
		{"[teams.training]\nguaranteed = 16", "[teams.training]\nguaranteed = 12"},
		{"clusters = { east = 16 }", "clusters = { east = 12 }"},
		{"[teams.research]\nguaranteed = 8", "[teams.research]\nguaranteed = 12"},
		{"clusters = { west = 8 }", "clusters = { west = 8, east = 4 }"},
	}
	out := string(agreement)
	for _, e := range edits {
		if strings.Count(out, e[0]) != 1 {
			t.Fatalf("%s no longer has the line %q this check edits", fleetAgreementFile, e[0])
		}
		out = strings.Replace(out, e[0], e[1], 1)
	}
	return []byte(out)
}

// deleteAppCascade deletes the Application name, if it exists, and what it
// manages (except what it renders with Delete=false), as `argocd app delete
// --cascade --propagation-policy background` does: Argo CD's resources
// finalizer makes the controller prune before the Application goes.
func deleteAppCascade(t *testing.T, name string) {
	t.Helper()
	ctx := ctxFor(t)
	apps := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace)
	// The background variant: a worker runs no garbage collector to
	// finish a foreground deletion.
	patch := `{"metadata":{"finalizers":["resources-finalizer.argocd.argoproj.io/background"]}}`
	if _, err := apps.Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); apierrors.IsNotFound(err) {
		return
	} else if err != nil {
		t.Fatalf("add the resources finalizer to %s: %v", name, err)
	}
	if err := apps.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("delete Application %s: %v", name, err)
	}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := apps.Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("Application %s was not deleted with its resources: %v", name, err)
	}
}

// deleteAppSet deletes the ApplicationSet, leaving its Applications (an
// orphaning delete: the applicationset controller would otherwise put
// their finalizers back to the template's), then each of them with what
// it synced, so the checks after this one start from the reference
// agreement alone.
func deleteAppSet(t *testing.T, name string) {
	t.Helper()
	ctx := ctxFor(t)
	apps := env.cp.Dynamic.Resource(appGVR).Namespace(argoNamespace)
	l, err := apps.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("list Applications: %v", err)
		return
	}
	var owned []string
	for _, app := range l.Items {
		if ownedBy(app, name) {
			owned = append(owned, app.GetName())
		}
	}
	orphan := metav1.DeletePropagationOrphan
	if err := env.cp.Dynamic.Resource(appSetGVR).Namespace(argoNamespace).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &orphan}); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("delete the ApplicationSet: %v", err)
		return
	}
	// The garbage collector removes the owner references before the
	// ApplicationSet goes.
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.cp.Dynamic.Resource(appSetGVR).Namespace(argoNamespace).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the ApplicationSet %s was not deleted: %v", name, err)
		return
	}
	for _, app := range owned {
		deleteAppCascade(t, app)
	}
}
