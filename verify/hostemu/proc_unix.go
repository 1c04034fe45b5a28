//go:build unix

package hostemu

import (
	"os/exec"
	"syscall"
	"time"
)

// killTree makes cancelling cmd's context kill the compiler driver and
// everything it started (cc1plus, as, ld): killing the driver alone leaves
// them running to the end of the compile, holding the output pipes.
func killTree(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
}
