package controlplane

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane program running in its own process group,
// with its output in a log file. Either our launcher started it (cmd is
// set) or envtest did (etcd and kube-apiserver): envtest keeps its
// exec.Cmd to itself, so for those the wrapper writes the process id to
// pidPath, and bin is the program that process must be running.
type process struct {
	name    string
	cmd     *exec.Cmd
	logPath string
	logFile *os.File
	done    chan struct{}
	waitErr error
	stopped sync.Once

	pidPath, bin string
}

// externalProcess is the record of a program envtest starts: its log file
// (envtest writes its output there) and where its wrapper notes its id.
func externalProcess(dir, name, bin string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	return &process{name: name, logPath: logPath, logFile: f, pidPath: filepath.Join(dir, name+".pid"), bin: bin}, nil
}

// pid is the process id, 0 when an envtest program has not started yet.
func (p *process) pid() int {
	if p.cmd != nil {
		return p.cmd.Process.Pid
	}
	data, err := os.ReadFile(p.pidPath)
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	return pid
}

// startProcess starts bin with args, logging to dir/name.log. The child gets
// its own process group, so stop can signal everything it forked, and
// SIGKILL when the test binary dies, so a crash or a go test timeout leaves
// nothing behind.
func startProcess(dir, name, bin string, args []string, env []string) (*process, error) {
	logPath := filepath.Join(dir, name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout = f
	cmd.Stderr = f
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, logPath: logPath, logFile: f, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// exited reports whether the process has ended, and how. Of an envtest
// program only that it ended is known: its process is gone, or a zombie
// envtest has yet to reap, or (its id reused) another program.
func (p *process) exited() (bool, error) {
	if p.cmd == nil {
		pid := p.pid()
		if pid == 0 {
			return false, nil
		}
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); err != nil || exe != p.bin {
			return true, errors.New("ended (started by envtest: no exit status)")
		}
		return false, nil
	}
	select {
	case <-p.done:
		return true, p.waitErr
	default:
		return false, nil
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then sends
// SIGKILL and waits for the process to be reaped. envtest stops its own
// programs (ControlPlane.Stop); here only their log is closed.
func (p *process) stop(grace time.Duration) {
	p.stopped.Do(func() {
		if p.cmd == nil {
			p.logFile.Close()
			return
		}
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.done
		}
		// Anything the program forked into its group goes too.
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		p.logFile.Close()
	})
}

// tail returns the last n bytes of the process's log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	if len(data) > n {
		data = data[len(data)-n:]
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return string(data)
}

// freePorts reserves n distinct free TCP ports on 127.0.0.1 for this
// process's components, which bind them later. make e2e starts several
// control planes at once (go test -p 2, and the version matrix's children),
// so a port must not be handed to two of them, nor taken meanwhile as the
// source port of an outgoing connection: ports come from below Linux's
// ephemeral range (32768 and up), and every process records the ports it
// took in a registry under a file lock, in os.TempDir, that the others skip.
// Entries of processes that have ended are dropped.
func freePorts(n int) ([]int, error) {
	lockPath := filepath.Join(os.TempDir(), "tenancy-e2e-ports.lock")
	lock, err := os.OpenFile(lockPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("port registry: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("lock the port registry: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing unlocks too

	regPath := filepath.Join(os.TempDir(), "tenancy-e2e-ports")
	data, err := os.ReadFile(regPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("port registry: %w", err)
	}
	taken := map[int]bool{}
	var keep []string
	for _, line := range strings.Split(string(data), "\n") {
		var pid, port int
		if _, err := fmt.Sscanf(line, "%d %d", &pid, &port); err != nil {
			continue
		}
		if pid != os.Getpid() && syscall.Kill(pid, 0) != nil {
			continue // that process has ended
		}
		taken[port] = true
		keep = append(keep, line)
	}
	const lo, hi = 20000, 32000
	ports := make([]int, 0, n)
	p := lo + rand.IntN(hi-lo)
	for tried := 0; len(ports) < n; tried, p = tried+1, p+1 {
		if tried == hi-lo {
			return nil, fmt.Errorf("no %d free loopback ports between %d and %d", n, lo, hi)
		}
		if p >= hi {
			p = lo
		}
		if taken[p] {
			continue
		}
		l, err := net.Listen("tcp", hostPort(p))
		if err != nil {
			continue // in use by something else
		}
		l.Close()
		taken[p] = true
		ports = append(ports, p)
		keep = append(keep, fmt.Sprintf("%d %d", os.Getpid(), p))
	}
	if err := os.WriteFile(regPath, []byte(strings.Join(keep, "\n")+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("port registry: %w", err)
	}
	return ports, nil
}

func hostPort(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// errExited is returned while waiting for a process that has already ended.
var errExited = errors.New("process exited")
