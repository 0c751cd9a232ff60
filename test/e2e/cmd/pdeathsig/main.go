// Command pdeathsig runs a program that dies with the process that started
// it: it asks the kernel for SIGKILL when its parent dies
// (prctl(PR_SET_PDEATHSIG)), makes sure that parent is still the one it
// was told, and replaces itself with the program (execve keeps the process
// id and the parent-death signal).
//
// The end-to-end suites start etcd and kube-apiserver through
// controller-runtime's envtest, which starts them without a parent-death
// signal: a go test timeout or a killed test binary would leave them
// running, holding their ports and memory. envtest runs whatever path it
// is given, so the suites give it a wrapper script that execs this command
// in front of the real binary (internal/controlplane writes it).
//
// Usage:
//
//	pdeathsig <parent pid> <program> [arguments...]
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: pdeathsig <parent pid> <program> [arguments...]")
		os.Exit(2)
	}
	parent, err := strconv.Atoi(os.Args[1])
	if err != nil {
		fmt.Fprintf(os.Stderr, "pdeathsig: parent pid %q: %v\n", os.Args[1], err)
		os.Exit(2)
	}
	// The kernel keeps the parent-death signal per thread, and execve keeps
	// only the thread that calls it: set it on the thread that will exec.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0, 0, 0); err != nil {
		fmt.Fprintf(os.Stderr, "pdeathsig: prctl: %v\n", err)
		os.Exit(1)
	}
	// A parent that died before the prctl sends no signal: this process has
	// been handed to init (or a subreaper) already, so it must not start.
	if ppid := os.Getppid(); ppid != parent {
		fmt.Fprintf(os.Stderr, "pdeathsig: parent %d has gone (parent is now %d): not starting %s\n", parent, ppid, os.Args[2])
		os.Exit(1)
	}
	err = syscall.Exec(os.Args[2], os.Args[2:], os.Environ())
	fmt.Fprintf(os.Stderr, "pdeathsig: exec %s: %v\n", os.Args[2], err)
	os.Exit(1)
}
