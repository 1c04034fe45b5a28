package toolchain

// The Metal backend's tools (internal/backend/metal owns this file).

import (
	"fmt"

	"github.com/kernelgen/kernelgen/tools/metallib"
)

// XcrunMetal is Apple's Metal compiler, behind xcrun, on macOS.
var XcrunMetal = Tool{
	Name:        "xcrun-metal",
	Candidates:  []string{"xcrun"},
	VersionArgs: []string{metallib.Compiler, "--version"},
	Purpose:     "compiles the Metal backend's shaders",
	Install:     "Xcode command line tools (macOS only)",
	Required:    Optional,
	OS:          "darwin",
	// xcrun exists on every Mac; the metal compiler behind it may not.
	Reject: func(_, path, _ string, runErr error) string {
		if runErr != nil {
			return fmt.Sprintf("%s cannot run metal: %v", path, runErr)
		}
		return ""
	},
}
