package opencl

import (
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/verify/clrun"
)

// The checks build and run the bytes build writes: the written
// ssm_conv.cl with its sums started at 1 instead of 0 gives results that
// differ from the Go reference.
func TestVerifyRunsTheWrittenBytes(t *testing.T) {
	check, files := backendtest.Check(Backend), backendtest.Written(t, Backend)
	backendtest.MustPass(t, check, files, clrun.ErrMissingTool, clrun.ErrNoDevice)
	backendtest.MustFail(t, "a kernel changed after generation", check,
		backendtest.SumsFromOne(t, files, name+"/ssm_conv.cl"),
		"ssm_conv@portable[d_conv=3]", "(bit for bit)")
}
