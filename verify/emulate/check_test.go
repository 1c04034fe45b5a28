package emulate

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// A missing host compiler and an interruption are reported as what they
// are, never as cases that differ from the Go reference.
func TestEmulatedTellsCausesApart(t *testing.T) {
	t.Setenv("CXX", "/nonexistent/g++")
	_, err := Check(context.Background(), hostemu.MSL, ir.Native("metal"), 32, nil)
	var te *hostemu.ToolError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), `CXX="/nonexistent/g++" was not found`) || strings.Contains(err.Error(), "differ") {
		t.Errorf("missing compiler: %v", err)
	}

	t.Setenv("CXX", "")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Check(ctx, hostemu.SYCL, ir.Native("sycl"), 16, nil)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") || strings.Contains(err.Error(), "differ") {
		t.Errorf("interrupted: %v", err)
	}
}
