//go:build unix

package cli

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// fullWriter fails every write, as a full disk does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// Output that cannot be written is an error, exit 2 with the cause on
// stderr, whatever the command would have concluded (--check's exit 1
// included).
func TestLostOutputExits2(t *testing.T) {
	root := gitTree(t)
	for _, args := range [][]string{
		{"ir", "--all"},
		{"list", "-v"},
		{"list", "--json"},
		{"--version"},
		{"patch", "--help"},
		{"patch", "--tree", root, "--backend", "all", "--check"},
		{"patch", "--tree", root, "--backend", "all", "--series", t.TempDir() + "/s"},
	} {
		var stderr strings.Builder
		code := Main(args, fullWriter{}, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), "kernelgen: writing the output: no space left on device") || strings.Contains(stderr.String(), "--help") {
			t.Errorf("%s: exit %d, stderr:\n%s", strings.Join(args, " "), code, stderr.String())
		}
	}
}

// The same through a real file: kernelgen ir --all > /dev/full.
func TestLostOutputToDevFull(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full")
	}
	defer full.Close()
	cmd := exec.Command(os.Args[0], "ir", "--all")
	cmd.Env = append(os.Environ(), "KERNELGEN_TEST_MAIN=1")
	cmd.Stdout = full
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.Contains(stderr.String(), "writing the output") {
		t.Errorf("ir --all > /dev/full: %v\n%s", err, stderr.String())
	}
}
