package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/toolchain"
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

// doctorJSON is doctor's report; each backend adds its facts (Backends,
// its Fact under its key) and its cache, so the object's keys are written
// in order by MarshalJSON: schema, tools, cxx, cache, the backends' keys
// in the registry's order, missing_ci.
type doctorJSON struct {
	Schema    int            `json:"schema"`
	Tools     []toolJSON     `json:"tools"`
	CXX       cxxJSON        `json:"cxx"`
	Cache     cacheJSON      `json:"cache"`
	Backends  []backend.Fact `json:"-"`
	MissingCI []string       `json:"missing_ci"`
}

func (d doctorJSON) MarshalJSON() ([]byte, error) {
	o := object{{"schema", d.Schema}, {"tools", d.Tools}, {"cxx", d.CXX}, {"cache", d.Cache}}
	for _, f := range d.Backends {
		o = append(o, member{f.Key, f.Value})
	}
	return append(o, member{"missing_ci", d.MissingCI}).MarshalJSON()
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

// cacheJSON is where compiled programs are kept: the emulation's, and each
// backend's with a cache (backend.Cache), under its key after hostemu.
type cacheJSON struct {
	Hostemu  string       `json:"hostemu"` // compiled emulation programs
	Backends []cachedJSON `json:"-"`
	From     string       `json:"from"` // "$KERNELGEN_CACHE" or "user cache directory"
	Error    string       `json:"error,omitempty"`
}

// cachedJSON is one backend's cache directory.
type cachedJSON struct{ key, dir string }

func (c cacheJSON) MarshalJSON() ([]byte, error) {
	o := object{{"hostemu", c.Hostemu}}
	for _, b := range c.Backends {
		o = append(o, member{b.key, b.dir})
	}
	o = append(o, member{"from", c.From})
	if c.Error != "" {
		o = append(o, member{"error", c.Error})
	}
	return o.MarshalJSON()
}

// object is a JSON object whose members keep their order.
type object []member

type member struct {
	key   string
	value any
}

func (o object) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
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

// doctorData probes the shared tools and every backend's, then asks each
// backend with a Doctor hook what it makes of its own.
func doctorData(ctx context.Context) doctorJSON {
	d := doctorJSON{Schema: jsonSchema, MissingCI: []string{}}
	tools := toolchain.Known()
	shared := len(tools)
	for _, b := range registry.All() {
		tools = append(tools, b.Tools...)
	}
	probed := toolchain.ProbeAll(ctx, tools)
	for _, r := range probed {
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
	at := shared
	for _, b := range registry.All() {
		own := probed[at : at+len(b.Tools)]
		at += len(b.Tools)
		if b.Doctor != nil {
			d.Backends = append(d.Backends, b.Doctor(ctx, own))
		}
	}
	d.CXX = cxxData()
	d.Cache = cacheData()
	return d
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
	c.Hostemu, err = hostemu.CacheDir()
	for _, b := range registry.All() {
		if b.Cache == nil || err != nil {
			continue
		}
		var dir string
		dir, err = b.Cache.Dir()
		c.Backends = append(c.Backends, cachedJSON{b.Cache.Key, dir})
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
