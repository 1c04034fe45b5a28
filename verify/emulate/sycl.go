package emulate

import (
	"context"
	"fmt"
	"strings"

	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// SYCLImpls is what a probe of PATH found of the SYCL implementations
// kernelgen knows: AdaptiveCpp's acpp, which it drives, and Intel's icpx,
// which it only reports (no icpx run has been made).
type SYCLImpls struct {
	ACPP, ICPX toolchain.Result
}

// ProbeSYCL looks for acpp and icpx on PATH.
func ProbeSYCL(ctx context.Context) (SYCLImpls, error) {
	return SYCLImplsOf(toolchain.ProbeAll(ctx, []toolchain.Tool{toolchain.ACPP, toolchain.ICPX})), nil
}

// SYCLImplsOf picks acpp's and icpx's probes out of probed.
func SYCLImplsOf(probed []toolchain.Result) SYCLImpls {
	var s SYCLImpls
	for _, r := range probed {
		switch r.Tool.Name {
		case toolchain.ACPP.Name:
			s.ACPP = r
		case toolchain.ICPX.Name:
			s.ICPX = r
		}
	}
	return s
}

// Plan says which implementation `kernelgen build --backend sycl` uses
// (the zero Result when none) and what it does with it, for doctor.
func (s SYCLImpls) Plan() (toolchain.Result, string) {
	switch a := s.ACPP; {
	case a.Found && a.Err != nil:
		return a, "fails: acpp is broken; repair it or take it off PATH"
	case a.Found:
		return a, fmt.Sprintf("compiles and runs every SYCL kernel with acpp (--acpp-targets=%s), then host emulation", ACPPTargets)
	case s.ICPX.Found:
		return s.ICPX, "host emulation only (kernelgen drives only acpp; icpx is not run)"
	}
	return toolchain.Result{}, "host emulation only (no acpp or icpx on PATH)"
}

// ACPPTargets is the acpp compilation flow `kernelgen build` uses:
// AdaptiveCpp as a library over its clang with OpenMP, barriers on fibers,
// run on the OpenMP host device; every AdaptiveCpp install with the OpenMP
// backend has it. It is the one flow of AdaptiveCpp 24.06 (LLVM 16) that
// returned the Go reference's results for every case; the others are
// refused by name (brokenACPPFlows).
const ACPPTargets = "omp.library-only"

// brokenACPPFlows are the --acpp-targets names kernelgen refuses, each with
// what AdaptiveCpp 24.06 (git 49544a48, LLVM 16) does wrong in it; both
// split a kernel at its barriers ("omp" is omp.accelerated on an
// AdaptiveCpp built with CPU acceleration, the default). docs/runtimes.md,
// section SYCL, has a reproducer of each bug.
var brokenACPPFlows = map[string]string{
	"omp":             ompAcceleratedBug,
	"omp.accelerated": ompAcceleratedBug,
	"generic": "generic (the SSCP JIT) faults or returns wrong values in the gated_delta_net kernels that store state snapshots inside the token loop: " +
		"stores made after a loop of barriers, at addresses built from kernel arguments, fault (and it loses loaded values as omp.accelerated does)",
}

const ompAcceleratedBug = "omp.accelerated returns NaN from every gated_delta_net kernel: a value loaded in a loop, before an inner loop with barriers, reads as garbage after that inner loop on the first trip (beta)"

// CheckACPPTargets refuses an --acpp-targets value (a ';'-separated list
// of flows, each perhaps with ":arch") that names a flow known to compile
// kernelgen's kernels wrong, saying why.
func CheckACPPTargets(targets string) error {
	for _, t := range strings.Split(targets, ";") {
		flow, _, _ := strings.Cut(strings.TrimSpace(t), ":")
		if why, ok := brokenACPPFlows[flow]; ok {
			return fmt.Errorf("acpp --acpp-targets=%s refused: %s (AdaptiveCpp 24.06; docs/runtimes.md, section SYCL); use %s", targets, why, ACPPTargets)
		}
	}
	return nil
}

// ACPPOptions are the hostemu options that build a program with acpp for
// the given --acpp-targets, against AdaptiveCpp's own SYCL headers and
// runtime. Kernels get the emulation's flags (no contraction, IEEE
// arithmetic) and -Wall -Werror, as every C++ check does, less one
// warning about AdaptiveCpp's own code: its OpenMP launcher asks for a
// vectorized work-item loop (omp_kernel_launcher.hpp), and clang warns
// "loop not vectorized" (-Wpass-failed) for any kernel with a barrier.
func ACPPOptions(acpp, targets string) hostemu.Options {
	return hostemu.Options{CXX: acpp, Real: true, Flags: []string{"--acpp-targets=" + targets, "-Wno-pass-failed"}}
}

// realSYCLWidth fills the job's sub-group width, which a real
// implementation does not read: it picks its own.
const realSYCLWidth = 32

// ACPP compiles the files the SYCL backend wrote (written, as Check takes
// them) with acpp for targets and runs one random case per
// variant on the device the implementation's default queue picks (its host
// CPU for the omp and generic flows), comparing every buffer with the Go
// reference as the emulation does. It returns how many cases ran; errors
// tell a broken acpp (a *hostemu.ToolError) from code that does not compile
// and from results that differ.
//
// A flow CheckACPPTargets refuses is not run unless anyway is set (to
// reproduce the failure by hand).
func ACPP(ctx context.Context, acpp, targets string, anyway bool, written map[string]File, progress func(done, total int)) (int, error) {
	if err := CheckACPPTargets(targets); err != nil && !anyway {
		return 0, err
	}
	return runCases(ctx, hostemu.SYCL, ir.Native("sycl"), written, EveryVariantAt(realSYCLWidth), ACPPOptions(acpp, targets),
		fmt.Sprintf("with acpp --acpp-targets=%s", targets), progress)
}

// RealSYCL is the real-compiler tier of `kernelgen build --backend sycl`:
// with acpp on PATH, ACPP with ACPPTargets; otherwise nothing runs and the
// result says why. It returns one clause for the build's summary line. A
// found acpp that fails its version probe is an error, not a silent skip:
// the user put it there to be used.
func RealSYCL(ctx context.Context, impls SYCLImpls, written map[string]File, progress func(done, total int)) (string, error) {
	a := impls.ACPP
	switch {
	case a.Found && a.Err != nil:
		return "", fmt.Errorf("acpp at %s is broken: %v; repair it or take it off PATH (kernelgen build --backend sycl uses the acpp it finds)", a.Path, a.Err)
	case a.Found:
		n, err := ACPP(ctx, a.Path, ACPPTargets, false, written, progress)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("acpp (%s, %s) compiled every kernel with -Wall -Werror (--acpp-targets=%s) and ran %d cases on its host device, every one equal to the Go reference",
			a.Version, a.Path, ACPPTargets, n), nil
	case impls.ICPX.Found:
		return fmt.Sprintf("icpx found at %s but not run (kernelgen drives only acpp): no SYCL compiler run", impls.ICPX.Path), nil
	}
	return "no SYCL compiler on PATH (acpp or icpx; kernelgen doctor says how to get acpp)", nil
}

func init() {
	declare(hostemu.SYCL, skin{
		ext:      ".hpp",
		emit:     sycl.Emit,
		function: sycl.FunctionName,
		setup:    syclSetup,
		launch:   syclLaunch,
	})
}

func syclSetup(w writer, k *ir.Kernel) []string {
	w("    sycl::queue kg_q;\n")
	// SYCL lists dimensions slowest first: the IR's x is dimension 2.
	w("    const sycl::nd_range<3> kg_range(sycl::range<3>(size_t(kg_g[2]) * kg_w[2], size_t(kg_g[1]) * kg_w[1], size_t(kg_g[0]) * kg_w[0]),\n")
	w("                                     sycl::range<3>(kg_w[2], kg_w[1], kg_w[0]));\n")
	call := []string{"item"}
	// &acc[0], not get_multi_ptr: AdaptiveCpp's local_accessor has no
	// get_multi_ptr (24.06), and the emulation skin leaves it out too.
	if ir.HasReduce(k) {
		call = append(call, "&kg_red[0]")
	}
	return call
}

func syclLaunch(w writer, _ harness, in ir.Instance, name, inst, args string) error {
	k := in.Kernel
	w("      hostemu::sycl::launch(%q, [&] {\n", name)
	w("        kg_q.submit([&](sycl::handler& kg_h) {\n")
	if ir.HasReduce(k) {
		w("          sycl::local_accessor<float, 1> kg_red(sycl::range<1>(size_t(kg_w[0]) * kg_w[1] * kg_w[2]), kg_h);\n")
	}
	// Shared arrays are local memory the launcher sizes, per instance.
	local := ""
	for _, a := range ir.SharedArrays(k) {
		n, ok := ir.EvalInt(a.Len, in.Values)
		if !ok {
			return fmt.Errorf("emulate: %s: shared array %s: length not computable for %s", k.ID(), a.Name, in)
		}
		w("          sycl::local_accessor<%s, 1> kg_sh_%s(sycl::range<1>(%d), kg_h);\n", ctype(a.Elem), a.Name, n)
		local += fmt.Sprintf(", &kg_sh_%s[0]", a.Name)
	}
	w("          kg_h.parallel_for(kg_range, [=](sycl::nd_item<3> item) { %s(%s%s); });\n", inst, args, local)
	w("        }).wait();\n")
	w("      });\n")
	return nil
}
