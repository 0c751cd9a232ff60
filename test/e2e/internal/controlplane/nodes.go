package controlplane

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// KWOK's annotation for the Nodes it manages; the suite puts it on every
// simulated Node and starts kwok with a selector on it, so kwok never
// touches a Node it did not get from the suite.
const (
	KwokNodeAnnotation = "kwok.x-k8s.io/node"
	KwokNodeValue      = "fake"
)

// kwokStages are KWOK's default Stages, the ones kwokctl installs, read
// from the kwok module of the same version as the binary: a Node becomes
// Ready and keeps its Lease renewed, a bound Pod becomes Running and Ready,
// and a deleted Pod is removed (what a kubelet does when it has stopped the
// containers).
//
// pod-complete is left out on purpose: with it every Job pod would succeed
// the moment it runs, and the Job would end and free its quota before a
// check could look at it. Without it a pod runs until its Job is deleted
// or suspended, like a long training run.
var kwokStages = []string{
	"node/fast/node-initialize.yaml",
	"node/heartbeat-with-lease/node-heartbeat-with-lease.yaml",
	"pod/fast/pod-ready.yaml",
	"pod/fast/pod-delete.yaml",
}

// kwokConfig concatenates the Stages into one kwok configuration file.
func kwokConfig(kwokDir string) ([]byte, error) {
	var b bytes.Buffer
	for _, rel := range kwokStages {
		data, err := os.ReadFile(filepath.Join(kwokDir, "kustomize", "stage", filepath.FromSlash(rel)))
		if err != nil {
			return nil, fmt.Errorf("read KWOK stage: %w", err)
		}
		b.WriteString("---\n")
		b.Write(data)
		if !bytes.HasSuffix(data, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	return b.Bytes(), nil
}

// startNodes starts the real kube-scheduler and KWOK, out of cluster
// against the API server: the scheduler binds Pods to Nodes by their
// requests, labels and taints; KWOK stands in for the kubelets of the
// simulated Nodes (no containers run, no images are pulled).
func (cp *ControlPlane) startNodes(ctx context.Context, opts Options, schedPort, kwokPort int) error {
	if err := cp.start(opts, "kube-scheduler", []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--authentication-kubeconfig=" + cp.Kubeconfig,
		"--authorization-kubeconfig=" + cp.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", schedPort),
		"--cert-dir=" + filepath.Join(opts.Dir, "scheduler-certs"),
		"--v=1",
	}, nil); err != nil {
		return err
	}
	schedTLS := &tls.Config{InsecureSkipVerify: true} //nolint:gosec // self-signed loopback health endpoint
	if err := cp.waitHTTP(ctx, "kube-scheduler", fmt.Sprintf("https://%s/healthz", hostPort(schedPort)), schedTLS, 60*time.Second); err != nil {
		return err
	}

	cfg, err := kwokConfig(opts.KwokDir)
	if err != nil {
		return err
	}
	cfgPath := filepath.Join(opts.Dir, "kwok-stages.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		return err
	}
	if err := cp.start(opts, "kwok", []string{
		"--kubeconfig=" + cp.Kubeconfig,
		"--config=" + cfgPath,
		"--manage-nodes-with-annotation-selector=" + KwokNodeAnnotation + "=" + KwokNodeValue,
		// A kubelet's default: KWOK renews each Node's Lease as a kubelet
		// would (the heartbeat-with-lease Stage needs it set).
		"--node-lease-duration-seconds=40",
		"--server-address=" + hostPort(kwokPort),
	}, nil); err != nil {
		return err
	}
	return cp.waitHTTP(ctx, "kwok", fmt.Sprintf("http://%s/healthz", hostPort(kwokPort)), nil, 60*time.Second)
}
