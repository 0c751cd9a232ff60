// Package probe makes and judges the requests of the guardrails'
// adversarial checks (the control-plane suite's and the KAI suite's) one
// way: a team's namespace admin as clusters give teams rights makes each
// request, and a probe is either let through or refused with every
// expected phrase in the message.
package probe

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/workload"
)

// Judge reports what request err says against want: want nil means the
// request must be let through, otherwise refused with a message holding
// every entry of want. Each outcome is logged, refusals with their message,
// so the log shows what a team's admin would read.
func Judge(t testing.TB, what string, err error, want []string) {
	t.Helper()
	switch {
	case want == nil && err != nil:
		t.Errorf("%s: refused, want it let through: %v", what, err)
	case want != nil && err == nil:
		t.Errorf("%s: let through, want it refused", what)
	case want != nil:
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: refused with %q, want the message to contain %q", what, err, w)
			}
		}
		t.Logf("%s: refused: %v", what, err)
	default:
		t.Logf("%s: let through", what)
	}
}

// Attempt is one request a check expects refused (with every entry of Want
// in the message) or let through (Want nil).
type Attempt struct {
	What   string
	Create func(ctx context.Context) error
	Want   []string
}

// Try makes each attempt, one after the other, and judges it.
func Try(t testing.TB, ctx context.Context, attempts []Attempt) {
	t.Helper()
	for _, a := range attempts {
		Judge(t, a.What, a.Create(ctx), a.Want)
	}
}

// TeamAdmin is a team's namespace admin: a ServiceAccount of the team's
// namespace bound to the built-in admin ClusterRole there (with the covered
// CRD kinds aggregated into it, as their operators' installs do), with
// typed and dynamic clients that authenticate with its token.
type TeamAdmin struct {
	// Name is the user the API server sees,
	// system:serviceaccount:<NS>:<account>.
	Name string
	NS   string
	Kube kubernetes.Interface
	Dyn  dynamic.Interface
	// Real makes Probe create for real, each object under a name of its
	// own (probe-1, probe-2, ...), so the workload controllers and KAI's
	// podgrouper act on what is let through; otherwise probes are
	// server-side dry runs.
	Real bool
	// Made lists what the real probes created, in order.
	Made []Made

	n int
}

// Made is one object a real probe created.
type Made struct {
	What string
	GVR  schema.GroupVersionResource
	Name string
}

// NewTeamAdmin creates ServiceAccount sa in ns (kube is the cluster admin's
// client, cfg its config), binds it to admin there and returns the team
// admin once the API server authorizes it to create each of mayCreate (the
// aggregation controller fills admin a moment after the role exists).
func NewTeamAdmin(ctx context.Context, kube kubernetes.Interface, cfg *rest.Config, ns, sa string, mayCreate ...authorizationv1.ResourceAttributes) (*TeamAdmin, error) {
	ignoreExists := func(what string, err error) error {
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s: %w", what, err)
		}
		return nil
	}
	_, err := kube.RbacV1().ClusterRoles().Create(ctx, workload.AdminRole(), metav1.CreateOptions{})
	if err := ignoreExists("create the aggregated workloads role", err); err != nil {
		return nil, err
	}
	_, err = kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{})
	if err := ignoreExists("create ServiceAccount "+ns+"/"+sa, err); err != nil {
		return nil, err
	}
	_, err = kube.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "tenancy-e2e-" + sa + "-admin"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}, metav1.CreateOptions{})
	if err := ignoreExists("bind admin", err); err != nil {
		return nil, err
	}
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(3600))}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("token for %s/%s: %w", ns, sa, err)
	}
	user := rest.CopyConfig(cfg)
	user.CertData, user.KeyData, user.BearerToken = nil, nil, tok.Status.Token
	u := &TeamAdmin{Name: "system:serviceaccount:" + ns + ":" + sa, NS: ns}
	if u.Kube, err = kubernetes.NewForConfig(user); err != nil {
		return nil, err
	}
	if u.Dyn, err = dynamic.NewForConfig(user); err != nil {
		return nil, err
	}
	for _, ra := range mayCreate {
		ra.Namespace, ra.Verb = ns, "create"
		var reason string
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			r, err := u.Kube.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &ra}}, metav1.CreateOptions{})
			if err != nil {
				reason = err.Error()
				return false, nil
			}
			reason = r.Status.Reason
			return r.Status.Allowed, nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s may not create %s.%s: %v (%s)", u.Name, ra.Resource, ra.Group, err, reason)
		}
	}
	return u, nil
}

// Probe is a create of obj (a typed object or an unstructured one) of
// resource gvr by the admin, in its namespace: a dry run, or for real when
// u.Real.
func (u *TeamAdmin) Probe(t testing.TB, what string, gvr schema.GroupVersionResource, obj any, want ...string) Attempt {
	t.Helper()
	uo := workload.ToUnstructured(t, gvr, obj)
	if uo.GetNamespace() == "" {
		uo.SetNamespace(u.NS)
	}
	if uo.GetName() == "" {
		uo.SetName("probe")
	}
	opts := metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}
	if u.Real {
		u.n++
		uo.SetName(fmt.Sprintf("probe-%d", u.n))
		opts = metav1.CreateOptions{}
	}
	return Attempt{what, func(ctx context.Context) error {
		_, err := u.Dyn.Resource(gvr).Namespace(uo.GetNamespace()).Create(ctx, uo, opts)
		if err == nil && u.Real {
			u.Made = append(u.Made, Made{What: what, GVR: gvr, Name: uo.GetName()})
		}
		return err
	}, want}
}

// Create creates obj for real, by the admin, in its namespace.
func (u *TeamAdmin) Create(t testing.TB, ctx context.Context, gvr schema.GroupVersionResource, obj any) *unstructured.Unstructured {
	t.Helper()
	uo := workload.ToUnstructured(t, gvr, obj)
	got, err := u.Dyn.Resource(gvr).Namespace(u.NS).Create(ctx, uo, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("%s creates %s %s: %v", u.Name, uo.GetKind(), uo.GetName(), err)
	}
	return got
}

var vapGVR = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}

// TypeChecked reports whether the API server has type-checked the current
// generation of ValidatingAdmissionPolicy name against the matched kinds'
// schemas, and its warnings: a warning there is a CEL expression that
// refers to a field or function that does not exist.
func TypeChecked(ctx context.Context, dyn dynamic.Interface, name string) (done bool, warnings []any, why string) {
	live, err := dyn.Resource(vapGVR).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, nil, err.Error()
	}
	gen, _, _ := unstructured.NestedInt64(live.Object, "status", "observedGeneration")
	if gen != live.GetGeneration() {
		return false, nil, fmt.Sprintf("observedGeneration %d of %d", gen, live.GetGeneration())
	}
	warnings, _, _ = unstructured.NestedSlice(live.Object, "status", "typeChecking", "expressionWarnings")
	return true, warnings, ""
}

// MadeByController reports whether m is of a built-in kind whose controller
// makes its pods (Deployment, StatefulSet, ReplicaSet,
// ReplicationController): the probes check those pods were made and
// admitted. DaemonSets are left out: their pods depend on the Nodes there
// are.
func (m Made) MadeByController() bool {
	switch m.GVR {
	case workload.Deployments, workload.StatefulSets, workload.ReplicaSets, workload.ReplicationControllers:
		return true
	}
	return false
}

// DeleteMade deletes, with admin's client, what u's real probes created,
// their dependents in the background.
func (u *TeamAdmin) DeleteMade(ctx context.Context, admin dynamic.Interface) error {
	bg := metav1.DeleteOptions{PropagationPolicy: ptr.To(metav1.DeletePropagationBackground)}
	var errs []error
	for _, m := range u.Made {
		err := admin.Resource(m.GVR).Namespace(u.NS).Delete(ctx, m.Name, bg)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete %s %s: %w", m.GVR.Resource, m.Name, err))
		}
	}
	return errors.Join(errs...)
}
