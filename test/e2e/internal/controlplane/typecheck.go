package controlplane

import (
	"context"
	"crypto/tls"
	"fmt"
	"path/filepath"
	"slices"
	"time"
)

// policyTypeChecker is kube-controller-manager's controller that
// type-checks each generation of a ValidatingAdmissionPolicy against the
// schemas of every kind it matches and writes the verdict in its status.
// The suites' controller-managers run without it: a policy of tenancy's
// has dozens of CEL variables and matches every workload kind, so each
// new generation costs the controller seconds of CPU (with the workload
// CRDs installed, most of a core for several seconds), and the suites
// change the agreement, so the policy, before nearly every check: in
// make e2e it was the largest share of the controller-managers' CPU, which
// the checks of every suite then waited for. It does not take part in
// admission; the checks that read its verdict run it (TypeCheckPolicies).
const policyTypeChecker = "validatingadmissionpolicy-status-controller"

// TypeCheckPolicies runs kube-controller-manager's policy type checker
// beside the control plane's own controller-manager, with only that
// controller, until stop is called; a check that reads the type check's
// verdict (status.typeChecking) runs it for as long as it reads. Started,
// it checks every policy whose current generation it has not checked.
func (cp *ControlPlane) TypeCheckPolicies(ctx context.Context) (stop func(), err error) {
	if cp.kcmBin == "" {
		return nil, fmt.Errorf("this control plane runs no kube-controller-manager")
	}
	ports, err := freePorts(1)
	if err != nil {
		return nil, err
	}
	cp.typeChecks++
	name := fmt.Sprintf("policy-type-checker-%d", cp.typeChecks)
	p, err := startProcess(cp.Dir, name, cp.kcmBin, []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--controllers=" + policyTypeChecker,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", ports[0]),
		"--cert-dir=" + filepath.Join(cp.Dir, name+"-certs"),
		"--root-ca-file=" + cp.caFile,
		"--use-service-account-credentials=true",
		"--v=1",
	}, nil)
	if err != nil {
		return nil, err
	}
	cp.procs = append(cp.procs, p)
	stop = func() {
		p.stop(10 * time.Second)
		// Stopped on purpose: not a component that ended on its own.
		cp.procs = slices.DeleteFunc(cp.procs, func(q *process) bool { return q == p })
	}
	tlsCfg := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed loopback health endpoint
	if err := cp.waitHTTP(ctx, name, fmt.Sprintf("https://%s/healthz", hostPort(ports[0])), tlsCfg, 60*time.Second); err != nil {
		stop()
		return nil, err
	}
	return stop, nil
}
