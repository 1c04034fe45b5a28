// Command kernelgen describes the gated-DeltaNet decode kernels once and
// generates them for Go, Metal, Vulkan, SYCL and CUDA. See `kernelgen --help`.
package main

import (
	"os"

	"github.com/kernelgen/kernelgen/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdout, os.Stderr))
}
