package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"

	"github.com/kernelgen/kernelgen/tools/testhook"
)

// TestMain lets a test run this binary as kernelgen itself (a subprocess
// that can be signalled): with KERNELGEN_TEST_MAIN=1 it is Main. With
// KERNELGEN_TEST_PAUSE=STEP too, it stops the first time it reaches STEP
// (testhook.Pause), says so on stderr ("paused at STEP") and waits until
// its stdin is closed or a signal ends its run; each later time it says
// "reached STEP again", so a test can tell how far a run went after it.
func TestMain(m *testing.M) {
	if os.Getenv("KERNELGEN_TEST_MAIN") == "1" {
		if step := os.Getenv("KERNELGEN_TEST_PAUSE"); step != "" {
			testhook.Set(pauseAt(step))
		}
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// pausedAt is the line a paused subprocess prints on stderr.
func pausedAt(step string) string { return "kernelgen-test: paused at " + step }

// reachedAgain is the line for each later time.
func reachedAgain(step string) string { return "kernelgen-test: reached " + step + " again" }

func pauseAt(step string) func(context.Context, string) {
	var once sync.Once
	return func(ctx context.Context, at string) {
		if at != step {
			return
		}
		first := false
		once.Do(func() {
			first = true
			fmt.Fprintln(os.Stderr, pausedAt(step))
			released := make(chan struct{})
			go func() {
				io.Copy(io.Discard, os.Stdin)
				close(released)
			}()
			select {
			case <-ctx.Done():
			case <-released:
			}
		})
		if !first {
			fmt.Fprintln(os.Stderr, reachedAgain(step))
		}
	}
}
