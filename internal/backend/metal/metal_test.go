package metal

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// The checks compile and run the bytes build writes, not a second
// emission: the written ssm_conv.metal with its sums started at 1 instead
// of 0 gives results that differ from the Go reference, and with its
// generated-file header turned into an #error does not compile.
func TestVerifyRunsTheWrittenBytes(t *testing.T) {
	check, files := backendtest.Check(Backend), backendtest.Written(t, Backend)
	const file = name + "/ssm_conv.metal"
	backendtest.MustFail(t, "a kernel changed after generation", check,
		backendtest.SumsFromOne(t, files, file), nil,
		"differ from the Go reference", "ssm_conv@portable[d_conv=2]", "ssm_conv@native-"+name)
	backendtest.MustFail(t, "the header changed after generation", check,
		backendtest.HeaderAsError(t, files, file), nil,
		"do not compile", "written header")
}

// A missing host compiler and an interruption are reported as what they
// are, never as cases that differ from the Go reference.
func TestVerifyTellsCausesApart(t *testing.T) {
	files := backendtest.Written(t, Backend)
	t.Setenv("CXX", "/nonexistent/g++")
	_, err := verify(context.Background(), files, nil)
	var te *hostemu.ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `CXX="/nonexistent/g++" was not found`) || strings.Contains(err.Error(), "differ") {
		t.Errorf("missing compiler: %v", err)
	}

	t.Setenv("CXX", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = verify(ctx, files, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") || strings.Contains(err.Error(), "differ") {
		t.Errorf("interrupted: %v", err)
	}
}

// The written kernels also run right at the subgroup widths build --check
// does not run them at (it runs emulationWidth).
func TestWrittenKernelsAtOtherWidths(t *testing.T) {
	backendtest.OtherWidths(t, Backend, hostemu.MSL, ".metal", emulationWidth)
}
