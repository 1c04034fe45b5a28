// Package backends is the table of output backends: what each generates, and
// which ones do not exist yet (refused by name, never faked).
package backends

import (
	"context"
	"fmt"
	"runtime"
	"strings"

	"github.com/kernelgen/kernelgen/emit/cuda"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/emit/goref"
	"github.com/kernelgen/kernelgen/emit/msl"
	"github.com/kernelgen/kernelgen/emit/opencl"
	"github.com/kernelgen/kernelgen/emit/sycl"
	"github.com/kernelgen/kernelgen/internal/check"
	"github.com/kernelgen/kernelgen/internal/spvbuild"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/templates"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/clrun"
	"github.com/kernelgen/kernelgen/verify/hostemu"
	verifycl "github.com/kernelgen/kernelgen/verify/opencl"
)

// File is one generated file, its path relative to the output directory.
type File struct {
	Path string
	Data []byte
	Op   string
}

// Backend is one output target.
type Backend struct {
	Name    string
	Dir     string // subdirectory of generated/
	Summary string
	// Issue tracks the work for backends not implemented yet.
	Issue int
	// Generate is nil until the backend exists.
	Generate func() ([]File, error)
	// Verify, when set, compiles and checks the generated files with the
	// backend's real toolchain before anything is written. It returns a
	// one-line summary.
	Verify func(ctx context.Context, files []File, progress func(done, total int)) (string, error)
}

// Implemented reports whether the backend can generate.
func (b *Backend) Implemented() bool { return b.Generate != nil }

// Builds reports whether the backend generates op: the Go reference and
// the IR take every op, a GPU backend those with a variant it builds
// (ops.Variant.On; Vulkan's batched ids ops are its own).
func (b *Backend) Builds(op *ops.Op) bool {
	if !b.Implemented() {
		return false
	}
	if b.Name == "go" || b.Name == "ir" {
		return true
	}
	return builtOn(op, b.Name)
}

var all = []*Backend{
	{Name: "go", Dir: "goref", Summary: "Go reference kernels (the CPU oracle every backend is checked against)", Generate: generateGo},
	{Name: "ir", Dir: "ir", Summary: "IR text of every kernel (what kernelgen diff reads back)", Generate: generateIR},
	{Name: "metal", Dir: "metal", Summary: "Metal Shading Language kernels + ggml-metal glue", Issue: 7, Generate: generateMetal, Verify: verifyMetal},
	{Name: "vulkan", Dir: "vulkan", Summary: "GLSL compute shaders, compiled to SPIR-V by glslang and checked by spirv-val", Issue: 5,
		Generate: generateVulkan, Verify: verifyVulkan},
	{Name: "sycl", Dir: "sycl", Summary: "SYCL C++ kernels + ggml-sycl glue", Issue: 8, Generate: generateSYCL, Verify: verifySYCL},
	{Name: "cuda", Dir: "cuda", Summary: "CUDA kernels (ggml-cuda style templates) + ggml-cuda glue", Issue: 6, Generate: generateCUDA, Verify: verifyCUDA},
	{Name: "opencl", Dir: "opencl", Summary: "OpenCL C kernels for ggml-opencl, compiled and run on an OpenCL device (PoCL in CI)", Issue: 23,
		Generate: generateOpenCL, Verify: verifyOpenCL},
}

// All returns every backend, implemented or not, in listing order.
func All() []*Backend { return all }

// Names lists every backend name.
func Names() []string {
	var s []string
	for _, b := range all {
		s = append(s, b.Name)
	}
	return s
}

// Implemented lists the backends that generate today.
func Implemented() []*Backend {
	var out []*Backend
	for _, b := range all {
		if b.Implemented() {
			out = append(out, b)
		}
	}
	return out
}

// Resolve turns a --backend value (a name or "all") into backends. Unknown
// names and backends that do not exist yet are errors naming the valid ones.
func Resolve(name string) ([]*Backend, error) {
	if name == "all" {
		return Implemented(), nil
	}
	for _, b := range all {
		if b.Name == name {
			if !b.Implemented() {
				return nil, fmt.Errorf("backend %s is not implemented yet (issue #%d); implemented: %s", name, b.Issue, strings.Join(implementedNames(), ", "))
			}
			return []*Backend{b}, nil
		}
	}
	return nil, fmt.Errorf("unknown backend %q; valid: all, %s", name, strings.Join(Names(), ", "))
}

func implementedNames() []string {
	var s []string
	for _, b := range Implemented() {
		s = append(s, b.Name)
	}
	return s
}

func generateGo() ([]File, error) {
	var files []File
	var all []goref.Op
	for _, op := range ops.All() {
		g := goref.Op{Name: op.Name, ArithFree: op.ArithFree}
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				return nil, err
			}
			g.Kernels = append(g.Kernels, k)
		}
		src, err := goref.Emit(g, ops.Ariths())
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: "goref/" + op.Name + ".go", Data: src, Op: op.Name})
		all = append(all, g)
	}
	reg, err := goref.EmitRegistry(all)
	if err != nil {
		return nil, err
	}
	files = append(files, File{Path: "goref/doc.go", Data: []byte(gorefDoc)}, File{Path: "goref/registry.go", Data: reg})
	return files, nil
}

const gorefDoc = `// Code generated by kernelgen. DO NOT EDIT.
// To regenerate: kernelgen build --backend go

// Package goref holds the Go reference kernels: every op of kernelgen's IR
// under every arithmetic contract, lowered to Go. Each op has Params (the
// variant), Args (runtime scalars) and Buffers types and a function taking a
// contract name ("portable", "native-cuda", ...). The tests in emit/goref check
// them bit for bit against an independent oracle.
package goref
`

// kernelsFor returns an op's kernels under the given contracts (the one
// shared kernel for contract-free ops).
func kernelsFor(op *ops.Op, ariths ...ir.Arith) ([]*ir.Kernel, error) {
	if op.ArithFree {
		k, err := op.Kernel(ir.Portable)
		return []*ir.Kernel{k}, err
	}
	var ks []*ir.Kernel
	for _, a := range ariths {
		k, err := op.Kernel(a)
		if err != nil {
			return nil, err
		}
		ks = append(ks, k)
	}
	return ks, nil
}

// builtOn: some variant of op is built on backend (ops.Variant.On).
func builtOn(op *ops.Op, backend string) bool { return len(ops.VariantsFor(op.Name, backend)) > 0 }

// perOp emits every op a backend builds, its portable and native kernels
// together, then appends the backend's glue. emit returns the op's files,
// paths relative to the backend's directory.
func perOp(backend string, emit func(op *ops.Op, ks []*ir.Kernel) ([]File, error)) ([]File, error) {
	var files []File
	for _, op := range ops.All() {
		if !builtOn(op, backend) {
			continue
		}
		ks, err := kernelsFor(op, ir.Portable, ir.Native(backend))
		if err != nil {
			return nil, err
		}
		fs, err := emit(op, ks)
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			f.Path, f.Op = backend+"/"+f.Path, op.Name
			files = append(files, f)
		}
	}
	return withGlue(files, backend)
}

// one is an op's single source file.
func one(path string, src []byte, err error) ([]File, error) {
	if err != nil {
		return nil, err
	}
	return []File{{Path: path, Data: src}}, nil
}

func generateCUDA() ([]File, error) {
	return perOp("cuda", func(op *ops.Op, ks []*ir.Kernel) ([]File, error) {
		src, err := cuda.Emit(op.Name, op.Summary, ks, op.ArithFree)
		return one(op.Name+".cuh", src, err)
	})
}

func generateMetal() ([]File, error) {
	return perOp("metal", func(op *ops.Op, ks []*ir.Kernel) ([]File, error) {
		src, err := msl.Emit(op.Name, op.Summary, ks, op.ArithFree, ops.VariantsFor(op.Name, "metal"))
		return one(op.Name+".metal", src, err)
	})
}

func generateSYCL() ([]File, error) {
	return perOp("sycl", func(op *ops.Op, ks []*ir.Kernel) ([]File, error) {
		src, err := sycl.Emit(op.Name, op.Summary, ks, op.ArithFree)
		return one(op.Name+".hpp", src, err)
	})
}

// generateVulkan writes one shader per kernel (contract): glslang compiles
// each variant from it by defines.
func generateVulkan() ([]File, error) {
	return perOp("vulkan", func(op *ops.Op, ks []*ir.Kernel) ([]File, error) {
		var files []File
		for _, k := range ks {
			src, err := glsl.Emit(k, op.Summary)
			if err != nil {
				return nil, err
			}
			files = append(files, File{Path: glsl.FileName(k, op.ArithFree), Data: src})
		}
		return files, nil
	})
}

func generateOpenCL() ([]File, error) {
	var files []File
	for _, op := range ops.All() {
		if !builtOn(op, "opencl") {
			continue
		}
		ks, err := kernelsFor(op, ir.Portable, ir.Native("opencl"))
		if err != nil {
			return nil, err
		}
		src, err := opencl.Emit(op.Name, op.Summary, ks, op.ArithFree)
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: "opencl/" + opencl.FileName(op.Name), Data: src, Op: op.Name})
	}
	return files, nil
}

// withGlue appends the backend's rendered glue under <dir>/glue/.
func withGlue(files []File, backend string) ([]File, error) {
	glueFiles, err := templates.Glue(backend)
	if err != nil {
		return nil, err
	}
	for _, g := range glueFiles {
		files = append(files, File{Path: backend + "/glue/" + g.Name, Data: g.Data})
	}
	return files, nil
}

// VulkanUnits lists every variant of every generated shader as a compile
// unit, and the portable shaders' glsl.DenormPreserve builds.
func VulkanUnits(files []File) ([]spvbuild.Unit, error) {
	byPath := map[string][]byte{}
	for _, f := range files {
		byPath[f.Path] = f.Data
	}
	var units []spvbuild.Unit
	for _, op := range ops.All() {
		if !builtOn(op, "vulkan") {
			continue
		}
		ks, err := kernelsFor(op, ir.Portable, ir.Native("vulkan"))
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			path := "vulkan/" + glsl.FileName(k, op.ArithFree)
			src, ok := byPath[path]
			if !ok {
				return nil, fmt.Errorf("%s was not generated", path)
			}
			for _, v := range ops.VariantsFor(op.Name, "vulkan") {
				defs, err := glsl.Defines(k, v)
				if err != nil {
					return nil, err
				}
				u := spvbuild.Unit{File: "generated/" + path, Source: src, Defines: defs, Name: k.ID() + " " + v.String()}
				units = append(units, u)
				if glsl.HasDenormMode(src) {
					// The build for devices that keep denormals on request.
					u.Defines, u.Name = glsl.WithDenormPreserve(defs), u.Name+" denorm-preserve"
					units = append(units, u)
				}
			}
		}
	}
	return units, nil
}

func verifyVulkan(ctx context.Context, files []File, progress func(done, total int)) (string, error) {
	units, err := VulkanUnits(files)
	if err != nil {
		return "", err
	}
	tools, err := spvbuild.FindTools(ctx)
	if err != nil {
		return "", err
	}
	res, err := tools.Build(ctx, units, progress)
	if err != nil {
		return "", err
	}
	cached, denorm := 0, 0
	for i, r := range res {
		if r.Cached {
			cached++
		}
		if _, ok := units[i].Defines[glsl.DenormPreserve]; ok {
			denorm++
		}
	}
	return fmt.Sprintf("vulkan: %d variants and %d denorm-preserve builds compiled by glslangValidator and validated by spirv-val (%d from the cache)", len(res)-denorm, denorm, cached), nil
}

// The emulated subgroup widths `kernelgen build` checks at: Apple's simdgroup
// (32), ggml-sycl's WARP_SIZE for Intel (16), NVIDIA's warp (32). The test
// suite covers 8, 16, 32 and 64 for every language.
const (
	metalWidth = 32
	syclWidth  = 16
	cudaWidth  = 32
)

func verifyMetal(ctx context.Context, files []File, progress func(done, total int)) (string, error) {
	sources := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".metal") {
			sources[strings.TrimPrefix(f.Path, "metal/")] = f.Data
		}
	}
	real, err := check.MetalLib(ctx, sources)
	if err != nil {
		return "", err
	}
	n, err := check.Emulated(ctx, hostemu.MSL, ir.Native("metal"), metalWidth, progress)
	if err != nil {
		return "", err
	}
	tier := "xcrun metal not found (macOS only): no metallib built"
	if real {
		tier = "xcrun metal built a metallib with warnings as errors"
	}
	return fmt.Sprintf("metal: %s; host emulation (simdgroup %d) ran %d cases, every one equal to the Go reference", tier, metalWidth, n), nil
}

// verifySYCL runs the real SYCL compiler where there is one (acpp), then
// the emulation. Both run the same cases, so progress counts them as one
// list twice as long.
func verifySYCL(ctx context.Context, _ []File, progress func(done, total int)) (string, error) {
	impls, err := check.ProbeSYCL(ctx)
	if err != nil {
		return "", err
	}
	first, second := progress, progress
	if progress != nil && impls.ACPP.Found {
		first = func(done, total int) { progress(done, 2*total) }
		second = func(done, total int) { progress(total+done, 2*total) }
	}
	tier, err := check.RealSYCL(ctx, impls, first)
	if err != nil {
		return "", err
	}
	n, err := check.Emulated(ctx, hostemu.SYCL, ir.Native("sycl"), syclWidth, second)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("sycl: %s; host emulation (sub-group %d) ran %d cases, every one equal to the Go reference", tier, syclWidth, n), nil
}

func verifyCUDA(ctx context.Context, _ []File, progress func(done, total int)) (string, error) {
	kernels := 0
	for _, op := range ops.All() {
		if !builtOn(op, "cuda") && op.ArithFree {
			continue // another backend's form of a copy (ops.GatherFor): no CUDA instance
		}
		ks, err := kernelsFor(op, ir.Portable, ir.Native("cuda"))
		if err != nil {
			return "", err
		}
		src, err := cuda.Emit(op.Name, op.Summary, ks, op.ArithFree)
		if err != nil {
			return "", err
		}
		n, err := check.PTX(ctx, op, src, ks)
		if err != nil {
			return "", err
		}
		kernels += n
	}
	n, err := check.Emulated(ctx, hostemu.CUDA, ir.Native("cuda"), cudaWidth, progress)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("cuda: clang-22 compiled %d kernels to PTX for sm_90; host emulation (warp %d) ran %d cases, every one equal to the Go reference", kernels, cudaWidth, n), nil
}

// generateIR writes each kernel's IR text, which kernelgen diff reads back
// (ir/irtext) to compare two revisions' kernels on meaning.
func generateIR() ([]File, error) {
	var files []File
	for _, op := range ops.All() {
		for _, a := range op.Ariths() {
			k, err := op.Kernel(a)
			if err != nil {
				return nil, err
			}
			header := "// Code generated by kernelgen. DO NOT EDIT.\n// To regenerate: kernelgen build --backend ir\n"
			files = append(files, File{Path: "ir/" + k.ID() + ".ir", Data: []byte(header + ir.Print(k)), Op: op.Name})
		}
	}
	return files, nil
}

// verifyOpenCL builds every variant's program with the OpenCL device's
// compiler (PoCL in CI) and runs the sample (verify/opencl.Sample) against
// the Go reference; go test ./verify/opencl -args -all runs every variant.
func verifyOpenCL(ctx context.Context, files []File, progress func(done, total int)) (string, error) {
	sources := map[string][]byte{}
	for _, f := range files {
		if strings.HasSuffix(f.Path, ".cl") {
			sources[f.Op] = f.Data
		}
	}
	r, err := clrun.Build(ctx)
	if err != nil {
		return "", err
	}
	devs, err := r.Devices(ctx)
	if err != nil {
		return "", err
	}
	parts := max(1, min(4, runtime.NumCPU()))
	n, err := verifycl.BuildAll(ctx, r, sources, parts)
	if err != nil {
		return "", err
	}
	rep, err := verifycl.Check(ctx, r, sources, false, parts, progress)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("opencl: %s (%s) built %d programs (every variant, both contracts, no warnings); ran %d sample cases: %d portable bit for bit, %d native within NMSE %g of the Go reference",
		devs[0].Name, devs[0].Platform, n, rep.Cases, rep.BitExact, rep.Native, cases.NMSETolerance), nil
}
