package multikueue

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
	"github.com/tenancy-dev/tenancy/test/e2e/internal/controlplane"
)

type unstructuredObj = unstructured.Unstructured

// cluster is one control plane of the fleet and the render applied to it.
type cluster struct {
	name string
	cp   *controlplane.ControlPlane
	objs []*unstructuredObj
	// kubeconfig (workers only) is what the manager's Kueue connects with:
	// a token of the MultiKueue service account, the API server's CA inline.
	kubeconfig []byte

	mu      sync.Mutex
	stopped bool
}

// stop stops the cluster's control plane, each component given its grace
// period; kill ends it at once (SIGKILL), as a lost machine would. A
// stopped cluster stays stopped.
func (c *cluster) stop() { c.end((*controlplane.ControlPlane).Stop) }
func (c *cluster) kill() { c.end((*controlplane.ControlPlane).Kill) }

func (c *cluster) end(how func(*controlplane.ControlPlane)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cp != nil && !c.stopped {
		how(c.cp)
	}
	c.stopped = true
}

func (c *cluster) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

func (c *cluster) isManager() bool { return c == fleet.manager }

// running lists the manager and the workers not stopped.
func running() []*cluster {
	var out []*cluster
	for _, c := range all() {
		if !c.isStopped() {
			out = append(out, c)
		}
	}
	return out
}

// worker returns the worker named name.
func worker(name string) *cluster {
	for _, w := range fleet.workers {
		if w.name == name {
			return w
		}
	}
	return nil
}

var (
	cqGVR  = kueueRes("clusterqueues")
	wlGVR  = kueueRes("workloads")
	lqGVR  = kueueRes("localqueues")
	acGVR  = kueueRes("admissionchecks")
	mkcGVR = kueueRes("multikueueclusters")
)

func kueueRes(r string) schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: "kueue.x-k8s.io", Version: "v1beta2", Resource: r}
}

// Kueue's names, from sigs.k8s.io/kueue v0.17.0 (apis/kueue/v1beta2 and
// pkg/controller/constants): the controller of MultiKueue's AdmissionCheck
// and of the Jobs it dispatches, the key of the kubeconfig in a worker's
// Secret, and the labels on the copies it makes in a worker.
const (
	multiKueueController = "kueue.x-k8s.io/multikueue"
	kubeconfigKey        = "kubeconfig"
	prebuiltWorkload     = "kueue.x-k8s.io/prebuilt-workload-name"
	originLabel          = "kueue.x-k8s.io/multikueue-origin"
	kueueNamespace       = "kueue-system"
)

// multiKueueSA is the identity the manager's Kueue has in each worker: the
// service account, namespace and rules of Kueue's own setup script
// (site/static/examples/multikueue/create-multikueue-kubeconfig.sh), with
// batch/Job the only kind this fleet runs.
const multiKueueSA = "multikueue-sa"

var multiKueueRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"create", "delete", "get", "list", "watch"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs/status"}, Verbs: []string{"get"}},
	{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads"}, Verbs: []string{"create", "delete", "get", "list", "watch"}},
	{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads/status"}, Verbs: []string{"get", "patch", "update"}},
}

// managerKueueConfig is what the manager's Kueue adds to the suite's Kueue
// configuration: MultiKueue itself is on by default in Kueue 0.17 (and
// batch/Job's managedBy support is GA there); only the worker-lost timeout
// is shortened.
func managerKueueConfig() string {
	return fmt.Sprintf("multiKueue:\n  workerLostTimeout: %s\n", workerLostTimeout)
}

// startCluster starts one control plane in dir and applies its render; a
// worker also gets the MultiKueue service account and the kubeconfig the
// manager will reach it with.
func startCluster(ctx context.Context, part, dir string, bins *binaries.Set, objs []*unstructuredObj) (*cluster, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	opts := controlplane.Options{
		Binaries: bins.Paths,
		KueueDir: bins.KueueDir,
		Dir:      dir,
		Log:      &prefixWriter{prefix: part + ": ", w: os.Stderr},
	}
	if part == managerPart {
		opts.KueueConfig = managerKueueConfig()
	}
	cp, err := controlplane.Start(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", part, err)
	}
	c := &cluster{name: part, cp: cp, objs: objs}
	if _, err := cp.Applier.Apply(ctx, objs, false); err != nil {
		return c, fmt.Errorf("apply the render of %s: %w", part, err)
	}
	if part == managerPart {
		return c, nil
	}
	if c.kubeconfig, err = multiKueueKubeconfig(ctx, cp); err != nil {
		return c, fmt.Errorf("%s: %w", part, err)
	}
	return c, waitQueuesActive(ctx, c)
}

// multiKueueKubeconfig creates MultiKueue's service account and role in a
// worker, as Kueue's setup script does, and returns a kubeconfig with a
// token for it.
func multiKueueKubeconfig(ctx context.Context, cp *controlplane.ControlPlane) ([]byte, error) {
	kube := cp.Kube
	if _, err := kube.CoreV1().ServiceAccounts(kueueNamespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: multiKueueSA}}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create ServiceAccount %s: %w", multiKueueSA, err)
	}
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: multiKueueSA + "-role"}, Rules: multiKueueRules}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create ClusterRole: %w", err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: multiKueueSA + "-crb"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: multiKueueSA + "-role"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: multiKueueSA, Namespace: kueueNamespace}},
	}, metav1.CreateOptions{}); err != nil {
		return nil, fmt.Errorf("create ClusterRoleBinding: %w", err)
	}
	tok, err := kube.CoreV1().ServiceAccounts(kueueNamespace).CreateToken(ctx, multiKueueSA, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](24 * 3600)},
	}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for %s: %w", multiKueueSA, err)
	}
	return cp.TokenKubeconfig(multiKueueSA, tok.Status.Token), nil
}

// connect gives the manager's Kueue each worker's kubeconfig, in the Secret
// the render's MultiKueueCluster names, and waits until MultiKueue reports
// every worker connected and the AdmissionCheck and ClusterQueues active.
func connect(ctx context.Context) error {
	m := fleet.manager
	clusters := byKind(m.objs, "MultiKueueCluster")
	if len(clusters) != len(fleet.workers) {
		return fmt.Errorf("the manager's render has %d MultiKueueClusters, want one per worker (%v)", len(clusters), workerParts)
	}
	for _, mkc := range clusters {
		w := worker(mkc.GetName())
		if w == nil {
			return fmt.Errorf("the manager's render has MultiKueueCluster %s, which is no worker of the fleet (%v)", mkc.GetName(), workerParts)
		}
		loc, _, _ := unstructured.NestedString(mkc.Object, "spec", "clusterSource", "kubeConfig", "location")
		typ, _, _ := unstructured.NestedString(mkc.Object, "spec", "clusterSource", "kubeConfig", "locationType")
		if loc == "" || typ != "Secret" {
			return fmt.Errorf("MultiKueueCluster %s: kubeConfig location %q of type %q, want a Secret", mkc.GetName(), loc, typ)
		}
		if _, err := m.cp.Kube.CoreV1().Secrets(kueueNamespace).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: loc},
			Data:       map[string][]byte{kubeconfigKey: w.kubeconfig},
		}, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create Secret %s/%s: %w", kueueNamespace, loc, err)
		}
	}
	for _, mkc := range clusters {
		if err := waitCondition(ctx, m, mkcGVR, "", mkc.GetName(), "Active"); err != nil {
			return err
		}
	}
	for _, ac := range byKind(m.objs, "AdmissionCheck") {
		if err := waitCondition(ctx, m, acGVR, "", ac.GetName(), "Active"); err != nil {
			return err
		}
	}
	return waitQueuesActive(ctx, m)
}

// waitQueuesActive waits until Kueue reports every ClusterQueue of c's
// render active for its current generation.
func waitQueuesActive(ctx context.Context, c *cluster) error {
	for _, cq := range byKind(c.objs, "ClusterQueue") {
		if err := waitCondition(ctx, c, cqGVR, "", cq.GetName(), "Active"); err != nil {
			return err
		}
	}
	return nil
}

// waitCondition waits until the object's condition typ is True.
func waitCondition(ctx context.Context, c *cluster, gvr schema.GroupVersionResource, ns, name, typ string) error {
	var last string
	err := wait.PollUntilContextTimeout(ctx, poll, eventually, true, func(ctx context.Context) (bool, error) {
		o, err := c.cp.Dynamic.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		last = controlplane.ConditionSummary(o)
		return controlplane.HasCondition(o, typ, "True"), nil
	})
	if err != nil {
		return fmt.Errorf("%s: %s %s not %s (%s): %w", c.name, gvr.Resource, name, typ, last, err)
	}
	return nil
}

// byKind returns the objects of one kind.
func byKind(objs []*unstructuredObj, kind string) []*unstructuredObj {
	return slices.DeleteFunc(slices.Clone(objs), func(o *unstructuredObj) bool { return o.GetKind() != kind })
}

// prefixWriter starts every line with prefix, so the three control planes'
// start-up lines can be told apart on one stderr.
type prefixWriter struct {
	prefix string
	w      io.Writer
	mu     sync.Mutex
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	lines := strings.SplitAfter(string(b), "\n")
	var out strings.Builder
	for _, l := range lines {
		if l != "" {
			out.WriteString(p.prefix + l)
		}
	}
	if _, err := io.WriteString(p.w, out.String()); err != nil {
		return 0, err
	}
	return len(b), nil
}

// fleetState summarizes, for failure messages, every running cluster's
// ClusterQueue usage and Workloads.
func fleetState(ctx context.Context) string {
	var b strings.Builder
	for _, c := range running() {
		fmt.Fprintf(&b, "%s:\n", c.name)
		cqs, err := c.cp.Dynamic.Resource(cqGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			fmt.Fprintf(&b, "  %v\n", err)
			continue
		}
		for i := range cqs.Items {
			cq := &cqs.Items[i]
			u := usageIn(cq)
			fmt.Fprintf(&b, "  ClusterQueue %s: %d GPUs, %d borrowed\n", cq.GetName(), u.total, u.borrowed)
		}
		wls, err := c.cp.Dynamic.Resource(wlGVR).List(ctx, metav1.ListOptions{})
		if err != nil {
			continue
		}
		var lines []string
		for i := range wls.Items {
			w := &wls.Items[i]
			s := stateOf(w)
			lines = append(lines, fmt.Sprintf("  Workload %s/%s: %s", w.GetNamespace(), w.GetName(), s))
		}
		sort.Strings(lines)
		b.WriteString(strings.Join(lines, "\n"))
		b.WriteString("\n")
	}
	return b.String()
}
