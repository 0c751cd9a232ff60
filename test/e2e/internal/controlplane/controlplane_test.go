package controlplane

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
)

// orphanChild is set in the environment of the test process
// TestKilledTestProcessLeavesNothing starts and kills.
const orphanChild = "TENANCY_E2E_ORPHAN_CHILD"

// TestKilledTestProcessLeavesNothing starts etcd and kube-apiserver the way
// every suite does (envtest, behind cmd/pdeathsig) in a child test process,
// kills that process with SIGKILL, as a go test timeout or an OOM kill
// would, and requires both programs to be gone within seconds: envtest
// alone would leave them running.
func TestKilledTestProcessLeavesNothing(t *testing.T) {
	if dir := os.Getenv(orphanChild); dir != "" {
		runOrphanChild(t, dir)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cache, err := binaries.DefaultCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	var comps []binaries.Component
	for _, c := range binaries.Components {
		if c.Name == "etcd" || c.Name == "kube-apiserver" {
			comps = append(comps, c)
		}
	}
	bins, err := binaries.EnsureComponents(ctx, filepath.Join("..", "..", "tools"), cache, comps, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	child := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestKilledTestProcessLeavesNothing$", "-test.v", "-test.timeout=3m")
	child.Env = append(os.Environ(), orphanChild+"="+dir,
		"TENANCY_E2E_ETCD="+bins.Paths["etcd"], "TENANCY_E2E_KUBE_APISERVER="+bins.Paths["kube-apiserver"])
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	pids := map[string]int{}
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		var e, a int
		if _, err := fmt.Sscanf(sc.Text(), "running: etcd %d kube-apiserver %d", &e, &a); err == nil {
			pids["etcd"], pids["kube-apiserver"] = e, a
			break
		}
		t.Logf("child: %s", sc.Text())
	}
	if len(pids) != 2 {
		_ = child.Process.Kill()
		_ = child.Wait()
		t.Fatalf("the child test process did not start etcd and kube-apiserver (see its output above)")
	}
	for name, pid := range pids {
		if !runs(pid, bins.Paths[name]) {
			t.Fatalf("%s (pid %d) is not running before the kill: the check would prove nothing", name, pid)
		}
	}

	if err := child.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for name, pid := range pids {
		for runs(pid, bins.Paths[name]) {
			if time.Now().After(deadline) {
				t.Errorf("%s (pid %d) still runs 10 s after its test process was killed", name, pid)
				_ = exec.Command("kill", "-9", fmt.Sprint(pid)).Run()
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if !t.Failed() {
		t.Logf("etcd (pid %d) and kube-apiserver (pid %d) ended with their killed test process", pids["etcd"], pids["kube-apiserver"])
	}
}

// runOrphanChild starts etcd and kube-apiserver in dir, prints their process
// ids and waits to be killed.
func runOrphanChild(t *testing.T, dir string) {
	ports, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	cp := &ControlPlane{Dir: dir, log: os.Stderr}
	opts := Options{Dir: dir, Binaries: map[string]string{
		"etcd":           os.Getenv("TENANCY_E2E_ETCD"),
		"kube-apiserver": os.Getenv("TENANCY_E2E_KUBE_APISERVER"),
	}}
	if err := cp.startAPIServer(context.Background(), opts, ports[0], ports[1], ports[2]); err != nil {
		cp.Stop()
		t.Fatal(err)
	}
	fmt.Printf("running: etcd %d kube-apiserver %d\n", cp.procs[0].pid(), cp.procs[1].pid())
	time.Sleep(3 * time.Minute) // the parent kills this process long before
	cp.Stop()
	t.Fatal("not killed")
}

// runs reports whether process pid is running the program bin.
func runs(pid int, bin string) bool {
	want, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return false
	}
	want, _ = filepath.Abs(want)
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	return err == nil && strings.TrimSuffix(exe, " (deleted)") == want
}
