package kai

import (
	"context"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/probe"
)

// teamAdmin is a team's namespace admin as clusters give teams rights: a
// ServiceAccount of the namespace bound to the built-in admin ClusterRole
// there, with a token (the main suite's newTeamUser, cut to what this
// suite needs).
type teamAdmin struct {
	name, ns string
	kube     kubernetes.Interface
	dyn      dynamic.Interface
}

func newTeamAdmin(t *testing.T, ns, sa string) *teamAdmin {
	t.Helper()
	ctx := ctxFor(t)
	kube := env.cp.Kube
	must := func(what string, err error) {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// KAI's PodGroups aggregated into admin, as an install that lets teams
	// make their own would.
	_, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "tenancy-e2e-kai-admin", Labels: map[string]string{"rbac.authorization.k8s.io/aggregate-to-admin": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"scheduling.run.ai"}, Resources: []string{"podgroups"}, Verbs: []string{"*"}}},
	}, metav1.CreateOptions{})
	must("create the aggregated PodGroup role", err)
	_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	must("create ServiceAccount "+ns+"/"+sa, err)
	_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenancy-e2e-" + sa + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{})
	must("bind admin", err)
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", ns, sa, err)
	}
	cfg := rest.CopyConfig(env.cp.Config)
	cfg.CertData, cfg.KeyData, cfg.BearerToken = nil, nil, tok.Status.Token
	u := &teamAdmin{name: "system:serviceaccount:" + ns + ":" + sa, ns: ns}
	if u.kube, err = kubernetes.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	if u.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		t.Fatal(err)
	}
	ra := authorizationv1.ResourceAttributes{Namespace: ns, Verb: "create", Group: "scheduling.run.ai", Resource: "podgroups"}
	waitFor(t, u.name+" may create PodGroups", func(ctx context.Context) (bool, string) {
		r, err := u.kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, metav1.CreateOptions{})
		if err != nil {
			return false, err.Error()
		}
		return r.Status.Allowed, r.Status.Reason
	})
	return u
}

// bypass is one real request of a check: refused with every want in the
// message, or let through (want nil).
type bypass struct {
	what   string
	create func(ctx context.Context) error
	want   []string
}

// tryBypasses makes each request and reports each outcome that is not the
// expected one; every refusal's message is logged.
func tryBypasses(t *testing.T, bs []bypass) {
	t.Helper()
	for _, b := range bs {
		probe.Judge(t, b.what, b.create(ctxFor(t)), b.want)
	}
}

// Check: with the reference agreement's KAI render (guardrails on), the
// ways around a team's queue that KAI's own components open are closed to
// training's namespace admin, each refused on a real create: KAI's project
// label; an owner labelled with research's queue, a controller's reference
// or not (KAI's podgrouper reads the top owner's queue label first: for a
// CPU pod so owned it asks for a PodGroup on research's queue, which the
// policy refuses it); joining that PodGroup by the pod-group-name
// annotation, or skipping the podgrouper; a PodGroup naming
// research's queue; a fractional GPU without a queue or on research's. What
// the agreement wants runs: a Deployment with the queue label on its pod
// template only and a labelled Job are admitted, their controllers' pods
// too, KAI's podgrouper puts them on training's queue and they bind; so do
// a GPU pod on its queue and a CPU pod without one. Once grouped, a
// controller's GPU pod cannot be re-pointed at research's PodGroup, nor
// training's PodGroup moved to research's queue; the team's own pod can be
// relabelled.
func TestKAIGuardrailBypasses(t *testing.T) {
	begin(t)
	reset(t, reference)
	alice := newTeamAdmin(t, "training", "alice")
	ns := "training"
	pods := alice.kube.CoreV1().Pods(ns)
	gpuPod := func(name string, labels, annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}, Spec: training.podSpec()}
	}
	own := map[string]string{queueKey: "training"}
	other := map[string]string{queueKey: "research"}
	createPod := func(p *corev1.Pod) func(ctx context.Context) error {
		return func(ctx context.Context) error { _, err := pods.Create(ctx, p, metav1.CreateOptions{}); return err }
	}
	waitFor(t, "the guardrails in force", func(ctx context.Context) (bool, string) {
		_, err := pods.Create(ctx, gpuPod("probe", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err != nil && strings.Contains(err.Error(), "add the label kai.scheduler/queue: training"), fmt.Sprint(err)
	})

	// A ConfigMap the team may create, labelled with research's queue,
	// owning a CPU pod (CPU work is not guarded): KAI's podgrouper reads
	// the top owner's label, and its PodGroup, in training's namespace,
	// would be research's; it carries the owner's labels, so the policy
	// refuses it even from the trusted podgrouper.
	cm, err := alice.kube.CoreV1().ConfigMaps(ns).Create(ctxFor(t), &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "queue-of-research", Labels: other}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the ConfigMap: %v", err)
	}
	t.Cleanup(func() {
		_ = env.cp.Kube.CoreV1().ConfigMaps(ns).Delete(context.Background(), cm.Name, metav1.DeleteOptions{})
	})
	ownedBy := func(p *corev1.Pod, controller bool) *corev1.Pod {
		ref := metav1.OwnerReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, UID: cm.UID}
		if controller {
			ref.Controller = ptr.To(true)
		}
		p.OwnerReferences = []metav1.OwnerReference{ref}
		return p
	}
	cpu := (work{ns: ns, gpus: -1}).podSpec()
	decoy := ownedBy(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "decoy", Labels: own}, Spec: cpu}, false)
	if err := createPod(decoy)(ctxFor(t)); err != nil {
		t.Fatalf("a CPU pod owned by a ConfigMap was refused; CPU work is not the guardrails': %v", err)
	}
	// KAI names a PodGroup pg-<top owner>-<its UID>.
	researchPG := fmt.Sprintf("pg-%s-%s", cm.Name, cm.UID)
	waitFor(t, "KAI's podgrouper to be refused research's PodGroup for the decoy", func(ctx context.Context) (bool, string) {
		evs, err := env.cp.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=decoy"})
		if err != nil {
			return false, err.Error()
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, researchPG) && strings.Contains(e.Message, "queue research is not this team's") {
				t.Logf("the podgrouper, for the CPU pod owned by the ConfigMap labelled research: %s", e.Message)
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d events", len(evs.Items))
	})

	podGroup := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "scheduling.run.ai/v2alpha2", "kind": "PodGroup",
		"metadata": map[string]any{"name": "pg-of-research"},
		"spec":     map[string]any{"queue": "research", "minMember": int64(1)},
	}}
	refused := "add the label kai.scheduler/queue: training"
	chooses := "chooses its own PodGroup"
	ownerRefused := "names an owner, but " + alice.name + " is not a trusted controller"
	attempts := []bypass{
		{"a GPU pod with KAI's project label naming research", createPod(gpuPod("project", map[string]string{"project": "research"}, nil)), []string{refused}},
		{"a GPU pod on its queue owned by the ConfigMap labelled research, as its controller", createPod(ownedBy(gpuPod("owned", own, nil), true)), []string{ownerRefused}},
		{"a GPU pod on its queue owned by the ConfigMap labelled research, not as its controller", createPod(ownedBy(gpuPod("referenced", own, nil), false)), []string{ownerRefused, "KAI's podgrouper reads the queue of the top owner"}},
		{"a GPU pod joining research's PodGroup by pod-group-name", createPod(gpuPod("joined", own, map[string]string{"pod-group-name": researchPG})), []string{chooses}},
		{"a GPU pod skipping the podgrouper", createPod(gpuPod("skipped", own, map[string]string{"kai.scheduler/skip-podgrouper": "true"})), []string{chooses}},
		{"a PodGroup naming research's queue", func(ctx context.Context) error {
			_, err := alice.dyn.Resource(podGroupGVR).Namespace(ns).Create(ctx, podGroup, metav1.CreateOptions{})
			return err
		}, []string{"PodGroup queue research is not this team's", "set spec.queue: training"}},
		{"a fractional GPU without a queue", createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fraction", Annotations: map[string]string{"gpu-fraction": "0.5"}}, Spec: cpu}), []string{refused}},
		{"a fractional GPU on research's queue", createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "fraction", Labels: other, Annotations: map[string]string{"gpu-fraction": "0.5"}}, Spec: cpu}), []string{"queue research is not this team's"}},
		{"a GPU pod on research's queue", createPod(gpuPod("research", other, nil)), []string{"queue research is not this team's"}},
		{"a fractional GPU added by update to the CPU pod owned by the ConfigMap", func(ctx context.Context) error {
			_, err := pods.Patch(ctx, "decoy", types.MergePatchType, []byte(`{"metadata":{"annotations":{"gpu-fraction":"0.5"}}}`), metav1.PatchOptions{})
			return err
		}, []string{ownerRefused}},

		// What the agreement wants.
		{"a Deployment with the queue label on its pod template only", func(ctx context.Context) error {
			tmpl := map[string]string{"app": "serve", queueKey: "training"}
			_, err := alice.kube.AppsV1().Deployments(ns).Create(ctx, &appsv1.Deployment{
				ObjectMeta: metav1.ObjectMeta{Name: "serve"},
				Spec: appsv1.DeploymentSpec{
					Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "serve"}},
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: tmpl}, Spec: training.podSpec()},
				},
			}, metav1.CreateOptions{})
			return err
		}, nil},
		{"a Job with the queue label", func(ctx context.Context) error {
			spec := training.podSpec()
			spec.RestartPolicy = corev1.RestartPolicyNever
			_, err := alice.kube.BatchV1().Jobs(ns).Create(ctx, &batchv1.Job{
				ObjectMeta: metav1.ObjectMeta{Name: "train", Labels: own},
				Spec: batchv1.JobSpec{
					Parallelism: ptr.To[int32](2), Completions: ptr.To[int32](2),
					Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: own}, Spec: spec},
				},
			}, metav1.CreateOptions{})
			return err
		}, nil},
		{"a GPU pod on its queue", createPod(gpuPod("own", own, nil)), nil},
		{"a CPU pod without a queue", createPod(&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "cpu"}, Spec: cpu}), nil},
	}
	tryBypasses(t, attempts)

	// KAI's components do the rest under their own service accounts: the
	// ReplicaSet and Job controllers make the pods, the podgrouper groups
	// them on training's queue and annotates them, the binder binds them.
	for _, w := range []struct {
		prefix string
		n      int
	}{{"serve", 2}, {"train", 2}, {"own", 1}} {
		waitBound(t, ns, w.prefix, w.n)
		p := firstPod(t, ns, w.prefix)
		pg := waitPodGroup(t, ns, p.Name)
		if q, _, _ := unstructured.NestedString(pg.Object, "spec", "queue"); q != "training" {
			t.Errorf("%s's PodGroup %s is on queue %q, want training", p.Name, pg.GetName(), q)
		}
		t.Logf("%s*: %d bound, PodGroup %s on queue training", w.prefix, w.n, pg.GetName())
	}
	waitBound(t, ns, "cpu", 1)

	// Updates of what KAI grouped: re-pointing a controller's GPU pod at
	// research's PodGroup, or training's PodGroup at research's queue, is
	// refused; relabelling the team's own grouped pod is not.
	served := firstPod(t, ns, "serve")
	ownPG := waitPodGroup(t, ns, "own")
	patchPod := func(name, body string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			_, err := pods.Patch(ctx, name, types.MergePatchType, []byte(body), metav1.PatchOptions{})
			return err
		}
	}
	updates := []bypass{
		{"re-pointing the Deployment's GPU pod at research's PodGroup", patchPod(served.Name, `{"metadata":{"annotations":{"pod-group-name":"`+researchPG+`"}}}`), []string{chooses}},
		{"moving training's PodGroup to research's queue", func(ctx context.Context) error {
			_, err := alice.dyn.Resource(podGroupGVR).Namespace(ns).Patch(ctx, ownPG.GetName(), types.MergePatchType, []byte(`{"spec":{"queue":"research"}}`), metav1.PatchOptions{})
			return err
		}, []string{"PodGroup queue research is not this team's"}},
		{"relabelling the team's own grouped GPU pod", patchPod("own", `{"metadata":{"labels":{"app":"relabelled"}}}`), nil},
	}
	tryBypasses(t, updates)
	t.Logf("%d requests made for real by %s, the decoy among them; 5 GPU pods of the agreement's work and a CPU pod bound", len(attempts)+len(updates)+1, alice.name)
}
