// Package emit groups kernelgen's backends: emit/goref (Go, the reference),
// emit/cuda, emit/glsl, emit/msl and emit/sycl, the four C-family emitters
// over the shared printer in emit/internal/cfamily. Emitters are pure: IR in,
// bytes out; the CLI alone writes files.
//
// The golden tests in this directory hold, per IR construct, the IR text and
// its lowering in every language side by side (testdata/constructs/*.txtar),
// so a reviewer sees what a change to one printer does to all of them. Rewrite
// them after review with `go test ./emit -update`. Beside the goldens, every
// construct's lowerings are compiled by the real compilers with warnings as
// errors (compile_test.go) and run, CUDA, MSL and SYCL under host emulation
// and GLSL on lavapipe, against an expectation written in plain Go
// (run_test.go): constructs the ops do not use are checked as well.
package emit
