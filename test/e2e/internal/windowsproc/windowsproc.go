// Package windowsproc runs `tenancy windows`, the lending-window controller,
// as a process of the repository's binary against a suite's control plane:
// no kubelet runs the rendered Deployment's pods in the suites, so the
// control-plane, KAI and Argo CD checks of issue 21 start it out of cluster
// and read what it said when a check fails.
package windowsproc

import (
	"bytes"
	"os/exec"
	"sync"
)

// Controller is one running `tenancy windows` process.
type Controller struct {
	cmd *exec.Cmd
	mu  sync.Mutex
	out bytes.Buffer
}

// Start runs `binary windows args...`, keeping its stdout and stderr.
func Start(binary string, args ...string) (*Controller, error) {
	c := &Controller{}
	c.cmd = exec.Command(binary, append([]string{"windows"}, args...)...)
	c.cmd.Stdout, c.cmd.Stderr = c, c
	if err := c.cmd.Start(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Controller) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(p)
}

// Log is everything the controller has said so far.
func (c *Controller) Log() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// Stop kills the controller (a crash, as far as the Lease knows) and waits
// for it; stopping a stopped controller does nothing.
func (c *Controller) Stop() {
	if c.cmd.ProcessState == nil && c.cmd.Process != nil {
		c.cmd.Process.Kill()
		c.cmd.Wait()
	}
}
