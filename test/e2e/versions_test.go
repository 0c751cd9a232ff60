package e2e

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tenancy-dev/tenancy/test/e2e/internal/binaries"
)

// The environment of a child run for one Kueue of the version matrix.
const (
	// envKueueTools names the tools module (under test/e2e/tools) whose
	// Kueue the child runs instead of the default one.
	envKueueTools = "TENANCY_E2E_KUEUE_TOOLS"
	// envKueueAPI is the --kueue-api the child renders with.
	envKueueAPI = "TENANCY_E2E_KUEUE_API"
	// envTenancy is the tenancy binary the parent built, so a child does
	// not build it again (binaries.Tenancy reads it).
	envTenancy = binaries.EnvTenancy
)

// kueueAPI is the --kueue-api every Kueue render of this run uses ("" for
// tenancy's default, v1beta2).
var kueueAPI = os.Getenv(envKueueAPI)

// matrixEntry is one more Kueue the core checks run against, besides the
// default one of tools/kueue (Kueue 0.17.0, v1beta2) that every check runs
// against.
type matrixEntry struct {
	// tools is the tools module directory; its go.mod pins the version.
	tools string
	// api is the --kueue-api to render with.
	api string
}

var kueueMatrix = []matrixEntry{
	// The newest Kueue the module proxy serves. `go list -m -versions`
	// does not list every served version; docs/e2e.md says how the newest
	// was found.
	{tools: "kueue-newest", api: "v1beta2"},
	// The Kueue the v1beta1 render is for.
	{tools: "kueue-v1beta1", api: "v1beta1"},
}

// coreChecks are the checks run against every Kueue of the matrix: objects
// accepted, no phantom drift, borrowing and its limits, lending limits,
// reclaim.
var coreChecks = []string{
	"TestRenderedObjectsAccepted",
	"TestNoPhantomDrift",
	"TestRenderedFieldsKept",
	"TestBorrowingIdleLendableGPUs",
	"TestBorrowLimitsHold",
	"TestLendingLimitsHold",
	"TestReclaimPreemptsBorrower",
}

// matrixSkipsExamples are left out of the version matrix's runs: "large"
// is the kinds and fields of the other examples 300 teams over (2,850
// objects); what it adds is API-server throughput, proven against the
// default Kueue, and it would double the matrix's time.
var matrixSkipsExamples = []string{"large"}

// matrixRun is one child run: its Kueue version and, once it has ended,
// its output.
type matrixRun struct {
	entry   matrixEntry
	version string
	started time.Time
	took    time.Duration
	done    chan struct{}
	stdout  bytes.Buffer
	logPath string
	err     error // start error or exit status
}

var matrixRuns []*matrixRun

// ensureMatrix builds (or finds cached) every Kueue of the matrix before
// any child starts, so that two children never build at once.
func ensureMatrix(ctx context.Context, toolsRoot, cache string) error {
	for _, e := range kueueMatrix {
		k, err := binaries.EnsureComponent(ctx, toolsRoot, cache, binaries.KueueIn(e.tools), os.Stderr)
		if err != nil {
			return fmt.Errorf("kueue version matrix: %w", err)
		}
		matrixRuns = append(matrixRuns, &matrixRun{entry: e, version: k.Version, done: make(chan struct{})})
		fmt.Fprintf(os.Stderr, "e2e: version matrix: Kueue %s (tools/%s, --kueue-api %s)\n", k.Version, e.tools, e.api)
	}
	return nil
}

// startMatrix starts one child run of this test binary per matrix entry,
// running only the core checks. A child's stderr (its progress and
// component log paths) goes to a file in dir.
func startMatrix(ctx context.Context, dir string) {
	for _, r := range matrixRuns {
		r.started = time.Now()
		r.logPath = filepath.Join(dir, "matrix-"+r.entry.tools+".log")
		logf, err := os.Create(r.logPath)
		if err != nil {
			r.err = err
			close(r.done)
			continue
		}
		cmd := exec.CommandContext(ctx, os.Args[0],
			"-test.run=^("+strings.Join(coreChecks, "|")+")$",
			"-test.v", "-test.count=1", "-test.timeout=20m")
		cmd.Env = append(os.Environ(),
			envKueueTools+"="+r.entry.tools,
			envKueueAPI+"="+r.entry.api,
			envTenancy+"="+env.tenancy)
		cmd.Stdout = &r.stdout
		cmd.Stderr = logf
		// The child dies with this process; its own components die with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			logf.Close()
			r.err = fmt.Errorf("start child run: %w", err)
			close(r.done)
			continue
		}
		go func() {
			r.err = cmd.Wait()
			r.took = time.Since(r.started)
			logf.Close()
			close(r.done)
		}()
	}
}

// topLevelResult matches go test -v's line for a top-level test.
var topLevelResult = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (Test\w+) \(([0-9.]+)s\)`)

// TestKueueVersions reports the core checks of every other Kueue version,
// one subtest per version and check, from the child runs started with the
// control plane. It runs last (file order), when they have usually ended.
func TestKueueVersions(t *testing.T) {
	if os.Getenv(envKueueTools) != "" {
		t.Skip("a child run of the version matrix does not start another")
	}
	begin(t)
	for _, r := range matrixRuns {
		t.Run(r.version+"-"+r.entry.api, func(t *testing.T) {
			select {
			case <-r.done:
			case <-time.After(15 * time.Minute):
				t.Fatalf("child run for Kueue %s still running after 15m (log %s)", r.version, r.logPath)
			}
			t.Logf("Kueue %s (tools/%s, --kueue-api %s): child run took %s", r.version, r.entry.tools, r.entry.api, r.took.Round(time.Second))
			out := r.stdout.String()
			results := map[string]string{}
			sc := bufio.NewScanner(strings.NewReader(out))
			for sc.Scan() {
				if m := topLevelResult.FindStringSubmatch(sc.Text()); m != nil {
					results[m[2]] = m[1]
					d, _ := time.ParseDuration(m[3] + "s")
					recordResult(t.Name()+"/"+m[2], m[1], d)
				}
			}
			for _, name := range coreChecks {
				switch results[name] {
				case "PASS":
				case "":
					t.Errorf("%s did not report %s", r.version, name)
				default:
					t.Errorf("%s: %s %s", r.version, name, results[name])
				}
			}
			if r.err != nil || t.Failed() {
				stderr, _ := os.ReadFile(r.logPath)
				t.Errorf("child run for Kueue %s: %v\n--- end of stdout ---\n%s\n--- end of stderr (%s) ---\n%s", r.version, r.err, tail([]byte(out), 20000), r.logPath, tail(stderr, 4000))
			}
		})
	}
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// matrixWanted says whether -test.run selects TestKueueVersions, so that
// `go test -run TestReclaim` does not start the matrix's control planes.
func matrixWanted() bool {
	f := flag.Lookup("test.run")
	if f == nil || f.Value.String() == "" {
		return true
	}
	top, _, _ := strings.Cut(f.Value.String(), "/")
	re, err := regexp.Compile(top)
	return err == nil && re.MatchString("TestKueueVersions")
}
