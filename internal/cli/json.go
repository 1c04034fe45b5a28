package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/ptx"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/tools/toolchain"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// The --json outputs. Their shapes are documented in the README ("Machine-
// readable output"); a change that is not an addition bumps Schema.

// jsonSchema versions every --json shape.
const jsonSchema = 1

type listJSON struct {
	Schema   int           `json:"schema"`
	Ops      []opJSON      `json:"ops"`
	Backends []backendJSON `json:"backends"`
}

type opJSON struct {
	Name        string        `json:"name"`
	Fusion      string        `json:"fusion"`    // "A".."D", "" for base ops
	Summary     string        `json:"summary"`   // one line
	Contracts   []string      `json:"contracts"` // portable, native-<backend>...
	Shared      bool          `json:"shared"`    // one kernel for every contract (pure copies)
	GeneratedBy []string      `json:"generated_by"`
	Variants    []variantJSON `json:"variants"`
}

type variantJSON struct {
	Name    string           `json:"name"` // as kernelgen list -v prints it, "" for none
	Params  map[string]int64 `json:"params"`
	BuiltOn []string         `json:"built_on"` // GPU backends that build it
}

type backendJSON struct {
	Name        string `json:"name"`
	Dir         string `json:"dir"` // under generated/
	Implemented bool   `json:"implemented"`
	Issue       int    `json:"issue,omitempty"` // tracking issue while not implemented
	Summary     string `json:"summary"`
}

func listData() listJSON {
	out := listJSON{Schema: jsonSchema, Ops: []opJSON{}}
	for _, op := range ops.All() {
		o := opJSON{Name: op.Name, Fusion: op.Fusion, Summary: op.Summary, Shared: op.ArithFree(), GeneratedBy: []string{}, Variants: []variantJSON{}}
		if op.ArithFree() {
			o.Contracts = []string{"portable"}
		} else {
			for _, a := range op.Ariths() {
				o.Contracts = append(o.Contracts, a.String())
			}
		}
		for _, b := range registry.All() {
			if b.Builds(op) {
				o.GeneratedBy = append(o.GeneratedBy, b.Name)
			}
		}
		for _, v := range ops.VariantsOf(op.Name) {
			vj := variantJSON{Name: v.String(), Params: map[string]int64{}, BuiltOn: []string{}}
			for k, x := range v.Values {
				vj.Params[k] = x
			}
			for _, b := range registry.All() {
				if !b.Reference && b.Implemented() && v.BuiltOn(b.Target()) {
					vj.BuiltOn = append(vj.BuiltOn, b.Name)
				}
			}
			o.Variants = append(o.Variants, vj)
		}
		out.Ops = append(out.Ops, o)
	}
	for _, b := range registry.All() {
		out.Backends = append(out.Backends, backendJSON{Name: b.Name, Dir: b.Dir, Implemented: b.Implemented(), Issue: b.Issue, Summary: b.Summary})
	}
	return out
}

type doctorJSON struct {
	Schema    int        `json:"schema"`
	Tools     []toolJSON `json:"tools"`
	CXX       cxxJSON    `json:"cxx"`
	Cache     cacheJSON  `json:"cache"`
	OpenCL    openclJSON `json:"opencl"`
	Vulkan    vulkanJSON `json:"vulkan"`
	SYCL      syclJSON   `json:"sycl"`
	MissingCI []string   `json:"missing_ci"`
}

// openclJSON is what the OpenCL ICD loader finds (clinfo -l).
type openclJSON struct {
	Platforms []toolchain.OpenCLPlatform `json:"platforms"`
	Error     string                     `json:"error,omitempty"` // why they could not be listed
}

func openclData(ctx context.Context) openclJSON {
	ps, err := toolchain.OpenCLPlatforms(ctx)
	if err != nil {
		return openclJSON{Platforms: []toolchain.OpenCLPlatform{}, Error: err.Error()}
	}
	return openclJSON{Platforms: ps}
}

// vulkanJSON is what the Vulkan loader finds (vulkaninfo).
type vulkanJSON struct {
	Devices []toolchain.VulkanDevice `json:"devices"`
	Error   string                   `json:"error,omitempty"` // why they could not be listed
}

func vulkanData(ctx context.Context) vulkanJSON {
	ds, err := toolchain.VulkanDevices(ctx)
	if err != nil {
		return vulkanJSON{Devices: []toolchain.VulkanDevice{}, Error: err.Error()}
	}
	return vulkanJSON{Devices: ds}
}

type toolJSON struct {
	Name     string `json:"name"`
	NeededBy string `json:"needed_by"` // "ci" or "optional"
	Status   string `json:"status"`    // "found", "missing" or "broken"
	Path     string `json:"path,omitempty"`
	Version  string `json:"version,omitempty"`
	Error    string `json:"error,omitempty"` // why missing or broken
	Purpose  string `json:"purpose"`
	Install  string `json:"install"`
}

// cxxJSON is the host C++ compiler the emulation checks use (hostemu.Compiler).
type cxxJSON struct {
	Setting string   `json:"setting"` // e.g. "g++" or "ccache g++"
	Source  string   `json:"source"`  // "$CXX" or "default"
	Command []string `json:"command"`
	Path    string   `json:"path,omitempty"`
	Version string   `json:"version,omitempty"`
	Clang   bool     `json:"clang"`
	Error   string   `json:"error,omitempty"`
}

// syclJSON is the SYCL implementation kernelgen build --backend sycl uses.
type syclJSON struct {
	Compiler string `json:"compiler"` // "acpp", "icpx" or "" when neither is on PATH
	Path     string `json:"path,omitempty"`
	Version  string `json:"version,omitempty"`
	Build    string `json:"build"` // what kernelgen build --backend sycl does with it
}

type cacheJSON struct {
	Hostemu string `json:"hostemu"` // compiled emulation programs
	SPIRV   string `json:"spirv"`   // compiled Vulkan variants
	PTX     string `json:"ptx"`     // CUDA headers that compiled to PTX
	From    string `json:"from"`    // "$KERNELGEN_CACHE" or "user cache directory"
	Error   string `json:"error,omitempty"`
}

// toolStatus is doctor's verdict on a probe.
func toolStatus(r toolchain.Result) (status string, needed bool) {
	switch {
	case !r.Found:
		return "missing", r.Tool.Required == toolchain.RequiredCI
	case r.Err != nil:
		return "broken", r.Tool.Required == toolchain.RequiredCI
	}
	return "found", false
}

func doctorData(ctx context.Context) doctorJSON {
	d := doctorJSON{Schema: jsonSchema, MissingCI: []string{}}
	var impls emulate.SYCLImpls
	for _, r := range toolchain.ProbeAll(ctx) {
		switch r.Tool.Name {
		case "acpp":
			impls.ACPP = r
		case "icpx":
			impls.ICPX = r
		}
		status, needed := toolStatus(r)
		t := toolJSON{Name: r.Tool.Name, NeededBy: r.Tool.Required, Status: status, Path: r.Path, Version: r.Version, Purpose: r.Tool.Purpose, Install: r.Tool.Install}
		if r.Err != nil {
			t.Error = r.Err.Error()
		}
		if needed {
			d.MissingCI = append(d.MissingCI, r.Tool.Name)
		}
		d.Tools = append(d.Tools, t)
	}
	d.SYCL = syclData(impls)
	d.CXX = cxxData()
	d.Cache = cacheData()
	d.OpenCL = openclData(ctx)
	d.Vulkan = vulkanData(ctx)
	return d
}

func syclData(impls emulate.SYCLImpls) syclJSON {
	r, build := impls.Plan()
	return syclJSON{Compiler: r.Tool.Name, Path: r.Path, Version: r.Version, Build: build}
}

func cxxData() cxxJSON {
	c, err := hostemu.FindCompiler(hostemu.Options{})
	if err != nil {
		setting, source := os.Getenv("CXX"), "$CXX"
		if setting == "" {
			setting, source = "g++", "default"
		}
		return cxxJSON{Setting: setting, Source: source, Command: []string{}, Error: err.Error()}
	}
	return cxxJSON{Setting: c.Setting, Source: c.Source, Command: c.Command, Path: c.Path, Version: c.Version, Clang: c.Clang}
}

func cacheData() cacheJSON {
	c := cacheJSON{From: "user cache directory"}
	if os.Getenv("KERNELGEN_CACHE") != "" {
		c.From = "$KERNELGEN_CACHE"
	}
	var err error
	if c.Hostemu, err = hostemu.CacheDir(); err == nil {
		c.SPIRV, err = spvbuild.CacheDir()
	}
	if err == nil {
		c.PTX, err = ptx.CacheDir()
	}
	if err != nil {
		c.Error = err.Error() + "; set KERNELGEN_CACHE to a writable directory"
	}
	return c
}

// root is the directory holding the caches.
func (c cacheJSON) root() string {
	if c.Hostemu == "" {
		return ""
	}
	return filepath.Dir(c.Hostemu)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
