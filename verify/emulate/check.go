package emulate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/hostemu"
)

// Check compiles the files a backend wrote (written: by op name, the bytes
// kernelgen build writes, header included), each as it is, in lang, and
// runs one random case per variant the backend builds, under its portable
// and native contracts, at the given subgroup width, comparing every
// buffer with the Go reference. The backend is native's. It returns how
// many cases ran. Its error tells the causes apart: the host compiler
// missing or unusable (a *hostemu.ToolError, at once, before the other
// cases), an interruption (ctx's error), generated code that does not
// compile or fails to run, and results that differ from the Go reference.
func Check(ctx context.Context, lang *hostemu.Lang, native ir.Arith, written map[string]File, width int, progress func(done, total int)) (int, error) {
	return runCases(ctx, lang, native, written, EveryVariantAt(width), hostemu.Options{}, "under host emulation", progress)
}

// Pick chooses the runs of one op under one contract: for each index into
// the backend's variants of the op (ops.Target.Variants) that runs, the
// subgroup widths it runs at.
type Pick func(op string, a ir.Arith, variants int) map[int][]int

// EveryVariantAt is Check's pick: every variant once, at width.
func EveryVariantAt(width int) Pick {
	return func(_ string, _ ir.Arith, n int) map[int][]int {
		out := make(map[int][]int, n)
		for i := range n {
			out[i] = []int{width}
		}
		return out
	}
}

// CheckPicked is Check over the runs pick chooses: the programs of the
// written files (one build each, shared with Check's through hostemu's
// cache) at other widths or on a sample of the variants.
func CheckPicked(ctx context.Context, lang *hostemu.Lang, native ir.Arith, written map[string]File, pick Pick, progress func(done, total int)) (int, error) {
	return runCases(ctx, lang, native, written, pick, hostemu.Options{}, "under host emulation", progress)
}

// runCases runs pick's cases of the written files with the programs built
// by hostemu options o; where names the tier in errors ("under host
// emulation", "with acpp").
func runCases(ctx context.Context, lang *hostemu.Lang, native ir.Arith, written map[string]File, pick Pick, o hostemu.Options, where string, progress func(done, total int)) (int, error) {
	src, err := writtenSource(lang, native.Backend, written)
	if err != nil {
		return 0, err
	}
	type job struct {
		op    *ops.Op
		a     ir.Arith
		v     ops.Variant
		width int
		seed  uint64 // the case's: the same variant draws the same case at every width
	}
	var jobs []job
	widths := map[int]bool{}
	for _, op := range ops.All() {
		for _, a := range contractsOn(op, native) {
			variants := ops.TargetOf(native.Backend).Variants(op.Name)
			runs := pick(op.Name, a, len(variants))
			base := uint64(len(jobs))
			for i, v := range variants {
				for _, w := range runs[i] {
					jobs = append(jobs, job{op, a, v, w, base + uint64(i)})
					widths[w] = true
				}
			}
		}
	}
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	const (
		differs = iota
		noCompile
		noRun
	)
	type failure struct {
		kind int
		err  error
	}
	fails := make([]*failure, len(jobs))
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
			if ctx.Err() != nil {
				return
			}
			r := rand.New(rand.NewPCG(j.seed, 7))
			v := j.v.OnlyOn(native.Backend) // the case runs here (a split's chained compute is this backend's)
			c, err := cases.Random(j.op.Name, j.a, r, cases.Small, &v)
			if err != nil {
				fails[i] = &failure{noRun, err}
			} else if _, _, err = buildLaunches(ctx, src, c, o); err != nil {
				var te *hostemu.ToolError
				if errors.As(err, &te) {
					stop(te) // the environment's fault: every case would fail alike
				}
				fails[i] = &failure{noCompile, err}
			} else if got, err := runLaunches(ctx, src, c, j.width, o); err != nil {
				fails[i] = &failure{noRun, err}
			} else if err := c.Compare(got); err != nil {
				if len(widths) > 1 {
					err = fmt.Errorf("subgroup %d: %w", j.width, err)
				}
				fails[i] = &failure{differs, err}
			}
			mu.Lock()
			done++
			if progress != nil {
				progress(done, len(jobs))
			}
			mu.Unlock()
		}(i, j)
	}
	wg.Wait()
	if cause := context.Cause(ctx); cause != nil {
		var te *hostemu.ToolError
		if errors.As(cause, &te) {
			return len(jobs), fmt.Errorf("%s %s: %w", lang, where, te)
		}
		return len(jobs), fmt.Errorf("%s %s: interrupted: %w", lang, where, cause)
	}
	var msgs [3][]string
	for _, f := range fails {
		if f != nil && !slices.Contains(msgs[f.kind], f.err.Error()) {
			msgs[f.kind] = append(msgs[f.kind], f.err.Error())
		}
	}
	count := func(kind int) int {
		n := 0
		for _, f := range fails {
			if f != nil && f.kind == kind {
				n++
			}
		}
		return n
	}
	var parts []string
	for kind, what := range []string{
		"%d of %d cases differ from the Go reference",
		"%d of %d cases do not compile (the generated code or its harness)",
		"%d of %d cases failed to run",
	} {
		if n := count(kind); n > 0 {
			m := msgs[kind]
			if len(m) > 10 {
				m = append(m[:10:10], fmt.Sprintf("... and %d more", len(m)-10))
			}
			parts = append(parts, fmt.Sprintf(what, n, len(jobs))+":\n"+strings.Join(m, "\n"))
		}
	}
	if len(parts) > 0 {
		if o.Real {
			return len(jobs), fmt.Errorf("%s %s: %s", lang, where, strings.Join(parts, "\n"))
		}
		var ws []string
		for _, w := range slices.Sorted(maps.Keys(widths)) {
			ws = append(ws, fmt.Sprint(w))
		}
		return len(jobs), fmt.Errorf("%s %s (subgroup %s): %s", lang, where, strings.Join(ws, ", "), strings.Join(parts, "\n"))
	}
	return len(jobs), nil
}
