package vulkan

import (
	"testing"

	"github.com/kernelgen/kernelgen/internal/backend/backendtest"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
)

// The checks compile the bytes build writes: the written ssm_conv.comp
// with its generated-file header turned into an #error does not compile.
func TestVerifyCompilesTheWrittenBytes(t *testing.T) {
	check, files := backendtest.Check(Backend), backendtest.Written(t, Backend)
	backendtest.MustFail(t, "the header changed after generation", check,
		backendtest.HeaderAsError(t, files, name+"/ssm_conv.comp"), []error{spvbuild.ErrMissingTool},
		"glslangValidator failed", "written header")
}
