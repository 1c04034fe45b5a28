package cli

import (
	"strings"
	"testing"
)

// completion for a shell it has no script for, or for none, is an error,
// not help with exit 0; patch --backend completes its values, lists too.
func TestCompletion(t *testing.T) {
	for _, args := range [][]string{{"completion", "tcsh"}, {"completion"}} {
		code, out, errs := run(t, args...)
		if code != 2 || out != "" || !strings.Contains(errs, "bash, fish, powershell, zsh") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errs)
		}
	}
	for _, shell := range []string{"bash", "zsh", "fish", "powershell"} {
		if code, out, _ := run(t, "completion", shell); code != 0 || !strings.Contains(out, "kernelgen") {
			t.Errorf("completion %s: exit %d", shell, code)
		}
	}
	_, out, _ := run(t, "__complete", "patch", "--backend", "")
	for _, want := range []string{"metal\n", "sycl\n", "vulkan\n", "cuda\n", "all\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("patch --backend completes %q, missing %q", out, want)
		}
	}
	_, out, _ = run(t, "__complete", "patch", "--backend", "vulkan,c")
	if !strings.HasPrefix(out, "vulkan,cuda\n") {
		t.Errorf("patch --backend vulkan,c completes %q", out)
	}
}
