package binaries

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// EnvTenancy names a prebuilt tenancy binary for a suite to use instead of
// building one (the control-plane suite's version-matrix runs pass theirs).
const EnvTenancy = "TENANCY_E2E_TENANCY"

// Tenancy returns the tenancy binary a suite runs: EnvTenancy's when set,
// else one built from repoRoot into dir (never cached: it is the code
// under test).
func Tenancy(ctx context.Context, repoRoot, dir string) (string, error) {
	if p := os.Getenv(EnvTenancy); p != "" {
		return p, nil
	}
	out := filepath.Join(dir, "tenancy")
	build := exec.CommandContext(ctx, goBinary(), "build", "-o", out, "./cmd/tenancy")
	build.Dir = repoRoot
	build.Env = append(os.Environ(), "GOWORK=off")
	if msg, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build tenancy: %w\n%s", err, msg)
	}
	return out, nil
}
