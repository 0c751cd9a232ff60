package controlplane

import (
	"context"
	"fmt"
	"io"
	"time"
)

// StartAPIServer starts etcd and kube-apiserver alone and installs
// opts.ExtraCRDs: a cluster that stores and serves objects and admits them
// by its built-in plugins (ValidatingAdmissionPolicies included), with no
// Kueue and no controller. Enough for a destination whose objects a check
// only reads back, such as the workers Argo CD syncs a fleet's parts to.
// Binaries needs "etcd" and "kube-apiserver"; Stop stops both.
func StartAPIServer(ctx context.Context, opts Options) (_ *ControlPlane, err error) {
	began := time.Now()
	logw := opts.Log
	if logw == nil {
		logw = io.Discard
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if opts.Binaries[name] == "" {
			return nil, fmt.Errorf("no binary for %s", name)
		}
	}
	cp := &ControlPlane{Dir: opts.Dir, log: logw}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w%s", err, cp.logTails(4000))
			cp.Stop()
		}
	}()
	ports, err := freePorts(3)
	if err != nil {
		return nil, err
	}
	if err := cp.startAPIServer(ctx, opts, ports[0], ports[1], ports[2]); err != nil {
		return nil, err
	}
	if len(opts.ExtraCRDs) > 0 {
		if err := cp.installCRDs(opts.ExtraCRDs, nil, 60*time.Second); err != nil {
			return nil, err
		}
	}
	cp.StartupTime = time.Since(began)
	fmt.Fprintf(logw, "kube-apiserver (no controllers) ready at %s in %s (state and logs in %s)\n", cp.Config.Host, cp.StartupTime.Round(time.Millisecond), opts.Dir)
	return cp, nil
}
