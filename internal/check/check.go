// Package check runs the verification tiers `kernelgen build` offers for the
// C-family backends: real compilers where they exist (xcrun metal on macOS,
// clang-22 for CUDA to PTX) and, everywhere, every variant compiled and run
// under host emulation against the Go reference.
package check

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/emulate"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// Emulated compiles every op of a language under its portable and native
// contracts and runs one random case per variant at the given subgroup
// width, comparing every buffer with the Go reference. It returns how many
// cases ran.
func Emulated(ctx context.Context, lang hostemu.Lang, native ir.Arith, width int, progress func(done, total int)) (int, error) {
	type job struct {
		op *ops.Op
		a  ir.Arith
		v  ops.Variant
	}
	var jobs []job
	for _, op := range ops.All() {
		for _, a := range []ir.Arith{ir.Portable, native} {
			if op.ArithFree && a.Native {
				continue
			}
			for _, v := range ops.VariantsFor(op.Name, native.Backend) {
				jobs = append(jobs, job{op, a, v})
			}
		}
	}
	errs := make([]error, len(jobs))
	var mu sync.Mutex
	done := 0
	sem := make(chan struct{}, runtime.NumCPU())
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func(i int, j job) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			r := rand.New(rand.NewPCG(uint64(i), 7))
			v := j.v
			c, err := cases.Random(j.op.Name, j.a, r, cases.Small, &v)
			if err == nil {
				var got map[string][]byte
				if got, err = emulate.Run(ctx, lang, c, width); err == nil {
					err = c.Compare(got)
				}
			}
			errs[i] = err
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(jobs))
			}
			mu.Unlock()
		}(i, j)
	}
	wg.Wait()
	var msgs []string
	for _, err := range errs {
		if err != nil {
			msgs = append(msgs, err.Error())
		}
	}
	if len(msgs) > 0 {
		if len(msgs) > 10 {
			msgs = append(msgs[:10], fmt.Sprintf("... and %d more", len(msgs)-10))
		}
		return len(jobs), fmt.Errorf("%s under host emulation (subgroup %d): %d of %d cases differ from the Go reference:\n%s", lang, width, len(msgs), len(jobs), strings.Join(msgs, "\n"))
	}
	return len(jobs), nil
}

// MetalLib compiles the generated .metal files into a metallib with warnings
// as errors, where xcrun metal exists. ok is false when it does not (not
// macOS, or no Xcode command line tools).
func MetalLib(ctx context.Context, sources map[string][]byte) (ok bool, err error) {
	xcrun, lookErr := exec.LookPath("xcrun")
	if lookErr != nil || runtime.GOOS != "darwin" {
		return false, nil
	}
	dir, err := os.MkdirTemp("", "kernelgen-metal-")
	if err != nil {
		return true, err
	}
	defer os.RemoveAll(dir)
	var airs []string
	for name, src := range sources {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, src, 0o644); err != nil {
			return true, err
		}
		air := strings.TrimSuffix(path, ".metal") + ".air"
		cmd := exec.CommandContext(ctx, xcrun, "-sdk", "macosx", "metal", "-Werror", "-c", path, "-o", air)
		if out, err := cmd.CombinedOutput(); err != nil {
			return true, fmt.Errorf("xcrun metal %s: %v\n%s", name, err, out)
		}
		airs = append(airs, air)
	}
	args := append([]string{"-sdk", "macosx", "metallib", "-o", filepath.Join(dir, "kernelgen.metallib")}, airs...)
	if out, err := exec.CommandContext(ctx, xcrun, args...).CombinedOutput(); err != nil {
		return true, fmt.Errorf("xcrun metallib: %v\n%s", err, out)
	}
	return true, nil
}
