package cli

import (
	"os"
	"testing"
)

// TestMain lets a test run this binary as kernelgen itself (a subprocess
// that can be signalled): with KERNELGEN_TEST_MAIN=1 it is Main.
func TestMain(m *testing.M) {
	if os.Getenv("KERNELGEN_TEST_MAIN") == "1" {
		os.Exit(Main(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}
