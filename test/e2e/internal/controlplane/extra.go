package controlplane

// StartExtra starts another program beside the control plane (the Argo CD
// components, Redis), logging to <Dir>/<name>.log like the others. It is
// stopped by Stop, before the control plane, and shows in Exited, LogTails
// and MemoryMiB. env entries override the inherited environment.
func (cp *ControlPlane) StartExtra(name, bin string, args, env []string) error {
	p, err := startProcess(cp.Dir, name, bin, args, env)
	if err != nil {
		return err
	}
	cp.procs = append(cp.procs, p)
	return nil
}

// FreePorts reserves n distinct free TCP ports on 127.0.0.1 for programs
// started with StartExtra.
func FreePorts(n int) ([]int, error) { return freePorts(n) }
