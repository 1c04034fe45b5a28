package vulkan

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/kernelgen/kernelgen/emit"
	"github.com/kernelgen/kernelgen/emit/glsl"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/pass"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
)

// SPIRVFunc returns the SPIR-V module of one variant of a kernel.
type SPIRVFunc func(k *ir.Kernel, v ops.Variant) ([]byte, error)

// Job turns a case into one vkrun job: the case's buffers in order, and per
// launch one dispatch (the gather before the compute kernel for the ids ops;
// vkrun puts a full compute-to-compute barrier between dispatches, the
// ordering point ir/doc.go asks for) with binding i = kernel buffer i (as the
// GLSL declares them), the args as push constants in IR order and
// Launch.Grid as the group counts. Job.Device is left empty: vkrun then
// takes $KERNELGEN_VK_DEVICE.
func Job(c *cases.Case, spirv SPIRVFunc) (vkrun.Job, error) {
	var job vkrun.Job
	index := map[string]int{}
	for i, b := range c.Buffers {
		if _, dup := index[b.Name]; dup {
			return job, fmt.Errorf("%s: two buffers named %s", c.Name, b.Name)
		}
		index[b.Name] = i
		job.Buffers = append(job.Buffers, b.Bytes())
	}
	for li, l := range c.Launches {
		k := l.Kernel
		if len(l.Bind) != len(k.Buffers) {
			return job, fmt.Errorf("%s: launch %d (%s) binds %d buffers, the kernel has %d", c.Name, li, k.ID(), len(l.Bind), len(k.Buffers))
		}
		d := vkrun.Dispatch{Groups: l.Grid}
		for i, name := range l.Bind {
			bi, ok := index[name]
			if !ok {
				return job, fmt.Errorf("%s: launch %d (%s) binds %s to %s, which the case lacks", c.Name, li, k.ID(), k.Buffers[i].Name, name)
			}
			d.Bindings = append(d.Bindings, bi)
		}
		var err error
		if d.Push, err = Push(k, l.Args); err != nil {
			return job, fmt.Errorf("%s: %w", c.Name, err)
		}
		if d.SPIRV, err = spirv(k, ops.Variant{Op: l.Op.Name, Values: l.Params}); err != nil {
			return job, err
		}
		job.Dispatches = append(job.Dispatches, d)
	}
	return job, nil
}

// Outputs names a result's buffers as the case does, for Case.Compare.
func Outputs(c *cases.Case, res *vkrun.Result) map[string][]byte {
	got := map[string][]byte{}
	for i, b := range c.Buffers {
		if i < len(res.Buffers) {
			got[b.Name] = res.Buffers[i]
		}
	}
	return got
}

// Push packs a kernel's args as its GLSL push-constant block lays them out:
// in IR order, 4 bytes little-endian each (args holds 32-bit patterns).
func Push(k *ir.Kernel, args map[string]uint32) ([]byte, error) {
	out := make([]byte, 0, 4*len(k.Args))
	for _, a := range k.Args {
		if a.Type != ir.U32 && a.Type != ir.I32 && a.Type != ir.F32 {
			return nil, fmt.Errorf("%s: arg %s is %s; push constants take u32, i32 and f32", k.ID(), a.Name, a.Type)
		}
		v, ok := args[a.Name]
		if !ok {
			return nil, fmt.Errorf("%s: arg %s has no value", k.ID(), a.Name)
		}
		out = binary.LittleEndian.AppendUint32(out, v)
	}
	return out, nil
}

// Grid evaluates a kernel's group counts for a variant's params and the
// args' 32-bit patterns (integer args only take part).
func Grid(k *ir.Kernel, params map[string]int64, args map[string]uint32) ([3]uint32, error) {
	vals := map[string]int64{}
	for n, v := range params {
		vals[n] = v
	}
	for _, a := range k.Args {
		if v, ok := args[a.Name]; ok && a.Type == ir.U32 {
			vals[a.Name] = int64(v)
		} else if ok && a.Type == ir.I32 {
			vals[a.Name] = int64(int32(v))
		}
	}
	var g [3]uint32
	for d := range g {
		n, ok := ir.EvalInt(k.Grid[d], vals)
		if !ok || n < 0 || n > 1<<32-1 {
			return g, fmt.Errorf("%s: grid %s is not computable here", k.ID(), ir.ExprString(k.Grid[d]))
		}
		g[d] = uint32(n)
	}
	return g, nil
}

// Unit is the spvbuild compile unit of one variant: the shader exactly as
// `kernelgen build --backend vulkan` writes it, with the variant's defines.
func Unit(k *ir.Kernel, v ops.Variant) (spvbuild.Unit, error) {
	op, err := ops.Lookup(k.Name)
	if err != nil {
		return spvbuild.Unit{}, err
	}
	src, err := glsl.Emit(ir.Unit{Op: op.Name, Summary: op.Summary, Kernels: []*ir.Kernel{k}})
	if err != nil {
		return spvbuild.Unit{}, err
	}
	defs, err := glsl.Defines(v.Of(k))
	if err != nil {
		return spvbuild.Unit{}, err
	}
	// The header too: the bytes build writes are the bytes its --check
	// compiles, so the two share spvbuild's cache (one compile per variant).
	file := "vulkan/" + glsl.FileName(k)
	src = emit.Mark("vulkan", file, src)
	return spvbuild.Unit{File: "generated/" + file, Source: src, Defines: defs, Name: k.ID() + " " + v.String()}, nil
}

// DenormUnit is Unit built with glsl.DenormPreserve where the shader has
// that build (portable kernels with float arithmetic), else Unit itself.
func DenormUnit(k *ir.Kernel, v ops.Variant) (spvbuild.Unit, error) {
	u, err := Unit(k, v)
	if err != nil || !pass.Of(k).Needs.DenormPreserve {
		return u, err
	}
	u.Defines, u.Name = glsl.WithDenormPreserve(u.Defines), u.Name+" denorm-preserve"
	return u, nil
}

// Compiler turns variants into SPIR-V with spvbuild (glslangValidator and
// spirv-val, cached by tool versions) and mirrors each module under
// $KERNELGEN_CACHE/vulkan-spirv keyed by source, defines and flags alone, so
// a GPU host without glslang runs from a cache filled here. Safe for
// concurrent use.
type Compiler struct {
	tools    *spvbuild.Tools
	toolsErr error
	mu       sync.Mutex
	memo     map[string][]byte
}

// NewCompiler finds the tools; without them the compiler serves only the
// mirror, and a miss is an error wrapping spvbuild.ErrMissingTool.
func NewCompiler(ctx context.Context) *Compiler {
	t, err := spvbuild.FindTools(ctx)
	return &Compiler{tools: t, toolsErr: err, memo: map[string][]byte{}}
}

// mirrorPath is where a unit's module is mirrored.
func mirrorPath(u spvbuild.Unit) (string, error) {
	dir := os.Getenv("KERNELGEN_CACHE")
	if dir == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(d, "kernelgen")
	}
	h := sha256.New()
	fmt.Fprintf(h, "%q\x00", spvbuild.Flags)
	spvbuild.WriteUnit(h, u)
	return filepath.Join(dir, "vulkan-spirv", hex.EncodeToString(h.Sum(nil))+".spv"), nil
}

// Build compiles units in parallel (spvbuild's pool) and mirrors them.
func (c *Compiler) Build(ctx context.Context, units []spvbuild.Unit) ([][]byte, error) {
	out := make([][]byte, len(units))
	var todo []int
	c.mu.Lock()
	for i, u := range units {
		if b, ok := c.memo[u.Name]; ok {
			out[i] = b
		} else {
			todo = append(todo, i)
		}
	}
	c.mu.Unlock()
	if len(todo) == 0 {
		return out, nil
	}
	if c.tools == nil {
		// No glslang here: the mirror or nothing.
		for _, i := range todo {
			p, err := mirrorPath(units[i])
			if err != nil {
				return nil, err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("%s: not in the SPIR-V cache (%s) and it cannot be compiled here: %w", units[i].Name, filepath.Dir(p), c.toolsErr)
			}
			out[i] = b
		}
	} else {
		sub := make([]spvbuild.Unit, len(todo))
		for j, i := range todo {
			sub[j] = units[i]
		}
		res, err := c.tools.Build(ctx, sub, nil)
		if err != nil {
			return nil, err
		}
		for j, i := range todo {
			out[i] = res[j].SPIRV
			if err := mirror(units[i], res[j].SPIRV); err != nil {
				return nil, err
			}
		}
	}
	c.mu.Lock()
	for _, i := range todo {
		c.memo[units[i].Name] = out[i]
	}
	c.mu.Unlock()
	return out, nil
}

func mirror(u spvbuild.Unit, spv []byte) error {
	p, err := mirrorPath(u)
	if err != nil {
		return err
	}
	if b, err := os.ReadFile(p); err == nil && string(b) == string(spv) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".mirror-")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(spv)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	// Atomic: a concurrent reader never sees half a module.
	return os.Rename(tmp.Name(), p)
}

// SPIRV compiles (or finds) one variant; it is a SPIRVFunc.
func (c *Compiler) SPIRV(k *ir.Kernel, v ops.Variant) ([]byte, error) {
	return c.unit(Unit(k, v))
}

// SPIRVDenormPreserve is SPIRV built as DenormUnit says: for devices that
// offer shaderDenormPreserveFloat32 (vkrun.DeviceInfo).
func (c *Compiler) SPIRVDenormPreserve(k *ir.Kernel, v ops.Variant) ([]byte, error) {
	return c.unit(DenormUnit(k, v))
}

func (c *Compiler) unit(u spvbuild.Unit, err error) ([]byte, error) {
	if err != nil {
		return nil, err
	}
	out, err := c.Build(context.Background(), []spvbuild.Unit{u})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// AllUnits lists every variant of every op under the given contracts (the
// contract-free gathers once), as the tests and benchmarks use them.
func AllUnits(ariths ...ir.Arith) ([]spvbuild.Unit, error) {
	return allUnits(Unit, ariths)
}

// AllDenormUnits is AllUnits as DenormUnit builds them.
func AllDenormUnits(ariths ...ir.Arith) ([]spvbuild.Unit, error) {
	return allUnits(DenormUnit, ariths)
}

func allUnits(unit func(*ir.Kernel, ops.Variant) (spvbuild.Unit, error), ariths []ir.Arith) ([]spvbuild.Unit, error) {
	var units []spvbuild.Unit
	for _, op := range ops.All() {
		for _, a := range ariths {
			if op.ArithFree() && a.Native {
				continue
			}
			k, err := op.Kernel(a)
			if err != nil {
				return nil, err
			}
			for _, v := range ops.VariantsOf(op.Name) {
				u, err := unit(k, v)
				if err != nil {
					return nil, err
				}
				units = append(units, u)
			}
		}
	}
	return units, nil
}
