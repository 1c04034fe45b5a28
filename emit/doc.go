// Package emit groups kernelgen's backends: emit/goref (Go, the reference),
// emit/cuda, emit/glsl, emit/msl and emit/sycl, the four C-family emitters
// over the shared printer in emit/internal/cfamily. Emitters are pure: IR in,
// bytes out; the CLI alone writes files.
//
// The golden tests in this directory hold, per IR construct, the IR text and
// its lowering in every language side by side (testdata/constructs/*.txtar),
// so a reviewer sees what a change to one printer does to all of them. Rewrite
// them after review with `go test ./emit -update`.
package emit
