package opencl

import (
	"context"
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/verify/clrun"
)

// The checks build and run the bytes build writes: the written
// ssm_conv.cl with its sums started at 1 instead of 0 gives results that
// differ from the Go reference.
func TestVerifyRunsTheWrittenBytes(t *testing.T) {
	check := func(files []backend.File) error {
		_, err := verify(context.Background(), files, nil)
		return err
	}
	files := backendtest.Written(t, Backend)
	backendtest.MustPass(t, check, files, clrun.ErrMissingTool, clrun.ErrNoDevice)
	backendtest.MustFail(t, "a kernel changed after generation", check,
		backendtest.Altered(t, files, name+"/ssm_conv.cl", "float y = 0.0f;", "float y = 1.0f;"),
		"ssm_conv@portable[d_conv=3]", "(bit for bit)")
}
