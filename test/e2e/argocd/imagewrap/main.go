// Command imagewrap runs the plugin image's tenancy binary the way the
// sidecar container runs it: from the image's unpacked filesystem as the
// image's user (uid 999), on a read-only root with its own /tmp, without
// network, in the directory Argo CD's CMP server hands the plugin (under
// /tmp, bound read-only). The
// loop puts it on the CMP server's PATH as "tenancy", so plugin.yaml's
// generate command runs the image's binary. The root filesystem and the user
// are set at link time (-X main.rootfs=... -X main.user=999:999).
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

var (
	rootfs string
	user   = "999:999"
)

func main() {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil || rootfs == "" {
		fmt.Fprintln(os.Stderr, "imagewrap: needs bwrap (Debian's bubblewrap) and a root filesystem linked in")
		os.Exit(2)
	}
	cwd, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "imagewrap:", err)
		os.Exit(2)
	}
	uid, gid, _ := strings.Cut(user, ":")
	argv := []string{"bwrap",
		"--ro-bind", rootfs, "/",
		// The sidecar's own /tmp (an emptyDir in argocd/install), where
		// the CMP server checks the repository out; the checkout itself is
		// bound read-only.
		"--tmpfs", "/tmp",
		"--ro-bind", cwd, cwd, "--chdir", cwd,
		"--unshare-user", "--uid", uid, "--gid", gid,
		"--unshare-net", "--die-with-parent",
		"/usr/local/bin/tenancy"}
	argv = append(argv, os.Args[1:]...)
	// exec, not a child: the CMP server sees tenancy's own exit status and
	// output, as from the sidecar.
	err = syscall.Exec(bwrap, argv, os.Environ())
	fmt.Fprintln(os.Stderr, "imagewrap:", err)
	os.Exit(2)
}
