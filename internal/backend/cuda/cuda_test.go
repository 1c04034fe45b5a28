package cuda

import (
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// The checks run the bytes build writes, not a second emission: the
// written ssm_conv.cuh with its sums started at 1 instead of 0 gives
// results that differ from the Go reference.
func TestVerifyRunsTheWrittenBytes(t *testing.T) {
	check, files := backendtest.Check(Backend), backendtest.Written(t, Backend)
	backendtest.MustFail(t, "a kernel changed after generation", check,
		backendtest.SumsFromOne(t, files, name+"/ssm_conv.cuh"), []error{ptx.ErrNoClang},
		"differ from the Go reference", "ssm_conv@portable[d_conv=2]", "ssm_conv@native-"+name)
}

// The written kernels also run right at the subgroup widths build --check
// does not run them at (it runs emulationWidth).
func TestWrittenKernelsAtOtherWidths(t *testing.T) {
	backendtest.OtherWidths(t, Backend, hostemu.CUDA, ".cuh", emulationWidth)
}
