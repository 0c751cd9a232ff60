// Package windowctl renders what lending windows need beside the backend's
// objects: the tenancy windows controller (a Deployment running the same
// image as the Argo CD plugin), its ServiceAccount, least RBAC and the
// agreement it reads (a ConfigMap holding the agreement's own bytes). It
// renders nothing when no team has a window, so such agreements render as
// before. Like every family it reads the plan only and is the same for any
// clock: the values outside every window are the backend's, and the
// controller applies each window's at its edges.
package windowctl

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tenancy-dev/tenancy/generator/diag"
	"github.com/tenancy-dev/tenancy/generator/gpu"
	"github.com/tenancy-dev/tenancy/generator/plan"
	"github.com/tenancy-dev/tenancy/generator/render"
	"github.com/tenancy-dev/tenancy/generator/windows"
	"github.com/tenancy-dev/tenancy/internal/version"
)

const (
	// Image is the controller's image: the Argo CD plugin's
	// (argocd/Dockerfile), whose entrypoint is the tenancy binary, at the
	// binary's own release, so the controller runs the tenancy that
	// rendered it.
	Image = "ghcr.io/tenancy-dev/tenancy-argocd:" + version.Version
	// Namespace holds the controller, its Lease and its agreement; no
	// team may have it (package validate refuses it).
	Namespace = windows.ControllerNamespace
	// FieldManager is the server-side apply field manager of the
	// controller: Argo CD's ignoreDifferences names it.
	FieldManager = "tenancy-windows"
	// AgreementKey is the ConfigMap key holding the agreement.
	AgreementKey = "tenancy.toml"
	// MetricsPort serves the controller's Prometheus metrics.
	MetricsPort = 8080
	// ChecksumAnnotation on the pod template restarts the controller when
	// the agreement changes, so it never runs an old one. Its value is
	// "sha256:" and the hex digest: a bare digest was written plain when it
	// started with a letter and quoted when with a digit, so its quoting
	// flipped between renders; the colon has it quoted every time.
	ChecksumAnnotation = "tenancy.dev/agreement-sha256"
)

// Name is the name of the controller's objects for a pool.
func Name(pool string) string { return "tenancy-windows-" + pool }

// Renderer renders the controller for one backend.
type Renderer struct {
	Backend  gpu.Backend
	KueueAPI string // "v1beta2" or "v1beta1"; Kueue only
}

// Check reports what the backend cannot do of a window. KAI has no lending
// limit (docs/kai.md): a window's lendable is not applied there, only its
// borrow (the team Queue's limit = guaranteed + borrow).
func (r Renderer) Check(p *plan.Agreement) diag.List {
	rep := &diag.Reporter{File: p.File}
	splitWindows(rep, p)
	if r.Backend != gpu.KAI {
		return rep.List
	}
	for i := range p.Teams {
		t := &p.Teams[i]
		// A team that never lends outside its windows sits in KAI's
		// reserved subtree (render/kai's ReservedSuffix; families do not
		// import each other), whose limit is its quota: a window's larger
		// borrow raises the team's own limit to no effect.
		reserved := t.Department == "" && gpu.TeamSum(p, t, gpu.InGPUs, nil).NeverLends()
		for _, w := range t.Windows {
			for _, q := range w.Quotas {
				if reserved && q.Borrow > t.Quota(q.Flavor).Borrow {
					rep.Warnf(field.ErrorTypeNotSupported, q.Origin.Borrow.Pos, q.Origin.Borrow.Path,
						"kai: team %s never lends outside its windows, so it sits in the %s-reserved subtree, whose limit equals its quota: the window's borrow (%d of flavor %s) cannot act there; give the team a lendable above zero (see docs/kai.md)", t.Name, p.Name, q.Borrow, q.Flavor)
				}
				if q.Lendable != t.Quota(q.Flavor).Lendable {
					rep.Warnf(field.ErrorTypeNotSupported, q.Origin.Lendable.Pos, q.Origin.Lendable.Path,
						"kai: KAI has no lending limit, so the window's lendable (%d of flavor %s) is not applied: outside and inside the window, KAI lends what the team's place in the queue tree allows (see docs/kai.md); only the window's borrow is", q.Lendable, q.Flavor)
				}
			}
		}
	}
	return rep.List
}

// splitWindows refuses lending windows in an agreement split into files
// (include): the controller reads the agreement from one ConfigMap key, and
// the files it includes would not be there.
func splitWindows(rep *diag.Reporter, p *plan.Agreement) {
	if len(p.Includes) == 0 {
		return
	}
	for i := range p.Teams {
		if w := p.Teams[i].Windows; len(w) > 0 {
			rep.Errorf(field.ErrorTypeForbidden, w[0].Origin.Pos, w[0].Origin.Path,
				"lending windows need the agreement in one file: the windows controller reads the agreement from one ConfigMap key, without the files it includes (%s); move the team back into the agreement and drop include, or drop the window", strings.Join(p.Includes, ", "))
		}
	}
}

// Queue is one scheduler queue the controller patches, and its team.
type Queue struct {
	Team, Name string
}

// Queues are the scheduler objects the controller patches: the queues of
// the teams that have windows, sorted by name. On KAI an agreement of node
// pools (gpu.Pools) gives a team one queue per pool it holds some of, each
// limited by its window in that flavor; elsewhere a team's queue is named
// after it.
func Queues(p *plan.Agreement, b gpu.Backend) []Queue {
	var pools []gpu.Pool
	if b == gpu.KAI {
		pools = gpu.Pools(p)
	}
	var out []Queue
	for i := range p.Teams {
		t := &p.Teams[i]
		if len(t.Windows) == 0 {
			continue
		}
		if pools == nil {
			out = append(out, Queue{Team: t.Name, Name: t.Name})
			continue
		}
		for _, pool := range pools {
			if pool.HasQueue(t) {
				out = append(out, Queue{Team: t.Name, Name: gpu.PoolQueueName(t.Name, pool.Name)})
			}
		}
	}
	slices.SortFunc(out, func(a, b Queue) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// queueNames are the names of Queues, in order.
func queueNames(qs []Queue) []string {
	out := make([]string, len(qs))
	for i, q := range qs {
		out[i] = q.Name
	}
	return out
}

// Render returns the controller's objects when any team has a window.
func (r Renderer) Render(p *plan.Agreement) ([]render.Object, diag.List) {
	if !p.HasWindows() {
		return nil, nil
	}
	name := Name(p.Name)
	meta := func(ns string) metav1.ObjectMeta {
		m := render.Meta(p.Name, "", name, ns)
		m.Labels["app.kubernetes.io/name"] = "tenancy-windows"
		return m
	}
	queues := gpu.Describe(r.Backend)
	sum := sha256.Sum256(p.Source)
	backendArgs := []string{"windows", "--agreement=/etc/tenancy/" + AgreementKey, "--backend=" + string(r.Backend)}
	if r.Backend != gpu.KAI {
		backendArgs = append(backendArgs, "--kueue-api="+r.KueueAPI)
	}
	backendArgs = append(backendArgs, "--namespace=$(POD_NAMESPACE)", "--lease="+name, fmt.Sprintf("--metrics-address=:%d", MetricsPort))

	ns := &corev1.Namespace{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
		ObjectMeta: render.Meta(p.Name, "", Namespace, ""),
	}
	ns.Labels[render.NamespaceNameLabel] = Namespace
	ns.Labels["pod-security.kubernetes.io/enforce"] = "restricted"
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: meta(Namespace),
		Data:       map[string]string{AgreementKey: string(p.Source)},
	}
	sa := &corev1.ServiceAccount{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
		ObjectMeta: meta(Namespace),
	}
	cr := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
		ObjectMeta: meta(""),
		Rules: []rbacv1.PolicyRule{
			// Only the queues of teams with windows; get and patch (apply)
			// are what the controller calls.
			{APIGroups: []string{queues.QueueGroup}, Resources: []string{queues.QueueResource}, ResourceNames: queueNames(Queues(p, r.Backend)), Verbs: []string{"get", "list", "watch", "patch"}},
			// Events about a cluster-scoped queue are recorded in the
			// default namespace, so creating them is cluster-wide.
			{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
			{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		},
	}
	subject := []rbacv1.Subject{{Kind: "ServiceAccount", Name: name, Namespace: Namespace}}
	crb := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRoleBinding"},
		ObjectMeta: meta(""),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects:   subject,
	}
	role := &rbacv1.Role{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
		ObjectMeta: meta(Namespace),
		Rules: []rbacv1.PolicyRule{
			// Leader election: the controller's Lease only.
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{name}, Verbs: []string{"get", "update"}},
		},
	}
	rb := &rbacv1.RoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
		ObjectMeta: meta(Namespace),
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects:   subject,
	}
	yes, no := true, false
	uid := int64(999)
	replicas := int32(2)
	revisions := int32(10)
	deadline := int32(600)
	grace := int64(30)
	quarter := intstr.FromString("25%")
	selector := map[string]string{"app.kubernetes.io/name": "tenancy-windows", render.PoolLabel: p.Name}
	podLabels := render.Labels(p.Name, "")
	podLabels["app.kubernetes.io/name"] = "tenancy-windows"
	dep := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(Namespace),
		Spec: appsv1.DeploymentSpec{
			// Two replicas: one leads (a Lease), the other takes over
			// within the lease duration if it goes away.
			Replicas:                &replicas,
			Selector:                &metav1.LabelSelector{MatchLabels: selector},
			RevisionHistoryLimit:    &revisions,
			ProgressDeadlineSeconds: &deadline,
			Strategy:                appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType, RollingUpdate: &appsv1.RollingUpdateDeployment{MaxUnavailable: &quarter, MaxSurge: &quarter}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podLabels, Annotations: map[string]string{ChecksumAnnotation: "sha256:" + hex.EncodeToString(sum[:])}},
				Spec: corev1.PodSpec{
					ServiceAccountName:            name,
					DeprecatedServiceAccount:      name,
					RestartPolicy:                 corev1.RestartPolicyAlways,
					DNSPolicy:                     corev1.DNSClusterFirst,
					SchedulerName:                 corev1.DefaultSchedulerName,
					TerminationGracePeriodSeconds: &grace,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: &yes, RunAsUser: &uid, RunAsGroup: &uid,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "windows",
						Image: Image,
						Args:  backendArgs,
						Env:   []corev1.EnvVar{{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}},
						Ports: []corev1.ContainerPort{{Name: "metrics", ContainerPort: MetricsPort, Protocol: corev1.ProtocolTCP}},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m"), corev1.ResourceMemory: resource.MustParse("64Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")},
						},
						ImagePullPolicy:          corev1.PullIfNotPresent,
						TerminationMessagePath:   corev1.TerminationMessagePathDefault,
						TerminationMessagePolicy: corev1.TerminationMessageReadFile,
						VolumeMounts:             []corev1.VolumeMount{{Name: "agreement", MountPath: "/etc/tenancy", ReadOnly: true}},
						SecurityContext: &corev1.SecurityContext{
							ReadOnlyRootFilesystem: &yes, AllowPrivilegeEscalation: &no,
							Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
					}},
					Volumes: []corev1.Volume{{Name: "agreement", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: name}, DefaultMode: ptr(int32(0o644)),
					}}}},
				},
			},
		},
	}
	objs, err := render.Objects([]any{ns, cm, sa, cr, crb, role, rb, dep})
	if err != nil {
		return nil, diag.List{{Severity: diag.Error, Type: field.ErrorTypeInternal, File: p.File, Message: "windows: " + err.Error()}}
	}
	return objs, nil
}

func ptr[T any](v T) *T { return &v }
