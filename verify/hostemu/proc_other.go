//go:build !unix

package hostemu

import (
	"os/exec"
	"time"
)

// killTree: without process groups, cancelling kills the driver and stops
// waiting for its children's output soon after.
func killTree(cmd *exec.Cmd) { cmd.WaitDelay = 2 * time.Second }
