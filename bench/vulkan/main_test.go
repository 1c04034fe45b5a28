package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gen "github.com/kernelgen/kernelgen/generated/goref"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/cases"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

// The whole pipeline at tiny shapes on lavapipe: prepare, run.sh, report.
// The numbers mean nothing; every job must run and time its repetitions.
func TestSmokeOnLavapipe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bench")
	err := prepare([]string{"-smoke", "-fence-timeout", "0", "-device", "llvmpipe", "-o", dir})
	if errors.Is(err, vkrun.ErrMissingTool) || errors.Is(err, spvbuild.ErrMissingTool) {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(tier.Context(t), "bash", filepath.Join(dir, "run.sh"))
	cmd.Env = append(os.Environ(), "OUT="+dir, "XDG_RUNTIME_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(0 failed)") {
		if strings.Contains(string(out), "no Vulkan device") && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
			t.Skip(string(out))
		}
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	var table strings.Builder
	if err := report([]string{filepath.Join(dir, "results.tar")}, &table); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + table.String())
	files, err := readResults(filepath.Join(dir, "results.tar"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := measure(string(files[planFile]), files)
	if err != nil {
		t.Fatal(err)
	}
	// copy, 4 empty, 3 GDN jobs per n and one per extra tiling, one per
	// batched shape taking n (the table's and the extra ones), 2 conv jobs per n
	// and op D's batched one where n fits.
	batched := 0
	for _, n := range smoke.seqs {
		if _, ok := ops.TargetOf("vulkan").GDNBatchAt(sv, n); ok {
			batched++
		}
		for _, b := range smoke.batches {
			if n <= b.Seqs() {
				batched++
			}
		}
	}
	convBatched := 0
	nss := smoke.convBatches
	if ns, ok := ops.TargetOf("vulkan").ConvBatch(); ok {
		nss = append([]int{ns}, nss...)
	}
	for _, ns := range nss {
		for _, n := range smoke.seqs {
			if n <= ns {
				convBatched++
			}
		}
	}
	if want := 5 + (3+len(smoke.tilings))*len(smoke.heads)*len(smoke.seqs) + batched*len(smoke.heads) + (2*len(smoke.seqs)+convBatched)*len(smoke.channels); len(rows) != want {
		t.Fatalf("%d rows, want %d", len(rows), want)
	}
	for _, r := range rows {
		if r.err != "" || !(r.us > 0) || !(r.gbs > 0 || r.bench == "empty") || !strings.Contains(r.device, "llvmpipe") {
			t.Errorf("%s: %+v", r.name, r)
		}
	}
}

// One layer's decode step, fused and unfused, runs on lavapipe at a tiny
// shape: every job completes and times something (a timing harness: the
// kernels it uses are checked elsewhere, the stand-ins for ggml's get_rows,
// concat, cpy and silu are not).
func TestLayerJobsRunOnLavapipe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "layer")
	err := prepare([]string{"-smoke", "-fence-timeout", "0", "-only", "layer", "-device", "llvmpipe", "-o", dir})
	if errors.Is(err, vkrun.ErrMissingTool) || errors.Is(err, spvbuild.ErrMissingTool) {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(tier.Context(t), "bash", filepath.Join(dir, "run.sh"))
	cmd.Env = append(os.Environ(), "OUT="+dir, "XDG_RUNTIME_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(0 failed)") {
		if strings.Contains(string(out), "no Vulkan device") && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
			t.Skip(string(out))
		}
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	files, err := readResults(filepath.Join(dir, "results.tar"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := measure(string(files[planFile]), files)
	if err != nil {
		t.Fatal(err)
	}
	layers := 0
	for _, r := range rows {
		if r.bench != "layer" {
			continue
		}
		layers++
		if r.err != "" || !(r.us > 0) {
			t.Errorf("%s: %+v", r.name, r)
		}
	}
	if want := 2 * len(smoke.seqs) * len(smoke.models); layers != want {
		t.Errorf("%d layer rows, want %d (fused and unfused per n_seqs)", layers, want)
	}
}

// The probes of op B at one sequence build and run: a row per probe, head
// count and tiling, each timed.
func TestProbeJobsRunOnLavapipe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "probe")
	err := prepare([]string{"-smoke", "-fence-timeout", "0", "-only", "probe", "-device", "llvmpipe", "-o", dir})
	if errors.Is(err, vkrun.ErrMissingTool) || errors.Is(err, spvbuild.ErrMissingTool) {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(tier.Context(t), "bash", filepath.Join(dir, "run.sh"))
	cmd.Env = append(os.Environ(), "OUT="+dir, "XDG_RUNTIME_DIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "(0 failed)") {
		if strings.Contains(string(out), "no Vulkan device") && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
			t.Skip(string(out))
		}
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	files, err := readResults(filepath.Join(dir, "results.tar"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := measure(string(files[planFile]), files)
	if err != nil {
		t.Fatal(err)
	}
	probes := 0
	for _, r := range rows {
		if r.bench != "gdn_probe" {
			continue
		}
		probes++
		if r.err != "" || !(r.us > 0) {
			t.Errorf("%s: %+v", r.name, r)
		}
	}
	want := 0
	for _, p := range probeKinds {
		if p.src == streamShader || p.src == touchShader {
			want++
		} else {
			want += len(probeTilings())
		}
	}
	if want *= len(smoke.heads); probes != want {
		t.Errorf("%d probe rows, want %d", probes, want)
	}
}

// The device runs the benchmark's jobs as the Go reference does: each smoke
// job, read back, against the reference replaying the same dispatches over
// the same memory, binding ranges aliasing the pool as on the device
// (state_dst is the window of the pool). Within NMSE 1e-7 (lavapipe splits
// GLSL fma(), see verify/vulkan).
func TestJobsMatchReference(t *testing.T) {
	ctx := tier.Context(t)
	r, err := vkrun.Build(ctx)
	if err == nil {
		_, err = spvbuild.FindTools(ctx)
	}
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	// The smoke plan, and op B alone with sources drawn from the pool or
	// rotated inside the window.
	shuffled := smoke
	shuffled.only, shuffled.shuffledIDs = []string{"gdn"}, true
	permuted := smoke
	permuted.only, permuted.permutedIDs = []string{"gdn"}, true
	for _, cfg := range []config{smoke, shuffled, permuted} {
		checkJobs(t, ctx, r, cfg)
	}
}

// Every timed interval holds perInterval repetitions, whatever a
// repetition dispatches (vkrun's TimeEvery counts dispatches): the job's
// dispatches make exactly runs / perInterval intervals, and a job of
// launches has perInterval repetitions' launches per interval.
func TestIntervalsHoldWholeBlocks(t *testing.T) {
	ctx := tier.Context(t)
	if _, err := spvbuild.FindTools(ctx); err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	jobs, plan, err := buildAll(smoke, vulkan.NewCompiler(ctx))
	if err != nil {
		t.Fatal(err)
	}
	twoPerRep := 0
	for i, j := range jobs {
		e := plan[i]
		if j.TimeEvery <= 0 || e.perInterval <= 0 {
			t.Errorf("%s: TimeEvery %d, perInterval %d", e.name, j.TimeEvery, e.perInterval)
			continue
		}
		intervals := len(j.Dispatches) / j.TimeEvery
		if intervals*e.perInterval != smoke.runs() {
			t.Errorf("%s: %d dispatches timed every %d: %d intervals of %d repetitions, want %d repetitions", e.name, len(j.Dispatches), j.TimeEvery, intervals, e.perInterval, smoke.runs())
		}
		if len(e.launches) == smoke.runs()*2 {
			twoPerRep++
		}
	}
	if twoPerRep == 0 {
		t.Error("no job dispatches twice per repetition: the check says nothing")
	}
}

func checkJobs(t *testing.T, ctx context.Context, r *vkrun.Runner, cfg config) {
	jobs, plan, err := buildAll(cfg, vulkan.NewCompiler(ctx))
	if err != nil {
		t.Fatal(err)
	}
	for i, job := range jobs {
		if cfg.shuffledIDs && (plan[i].bench == "conv" || plan[i].bench == "conv_ids") {
			t.Fatalf("-only gdn prepared %s", plan[i].name)
		}
		e := plan[i]
		if len(e.launches) == 0 {
			continue
		}
		job.Device, job.NoReadback = "llvmpipe", false
		res, err := r.Run(ctx, job)
		if err != nil {
			if errors.Is(err, vkrun.ErrNoDevice) && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
				t.Skip(err)
			}
			t.Fatalf("%s: %v", e.name, err)
		}
		host, err := replay(job, e.launches)
		if err != nil {
			t.Fatalf("%s: %v", e.name, err)
		}
		for bi := range host {
			got := bytesF32(res.Buffers[bi])
			var num, den float64
			for k, w := range host[bi] {
				d := float64(got[k]) - float64(w)
				num, den = num+d*d, den+float64(w)*float64(w)
				if math.IsNaN(float64(got[k])) != math.IsNaN(float64(w)) {
					t.Fatalf("%s: buffer %d word %d: %v, reference %v", e.name, bi, k, got[k], w)
				}
			}
			if den > 0 && num/den > cases.NMSETolerance || den == 0 && num > 0 {
				t.Fatalf("%s: buffer %d: NMSE %g (%g / %g)", e.name, bi, num/den, num, den)
			}
		}
	}
}

func bytesF32(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// replay runs a job's dispatches on the Go reference: every job buffer is
// one []float32 (its pattern repeated), every binding a subslice of it, so
// ranges of one buffer alias as on the device. ids are read-only copies.
func replay(job vkrun.Job, ls []launch) ([][]float32, error) {
	mem := make([][]float32, len(job.Buffers))
	for i, pat := range job.Buffers {
		size := uint64(len(pat))
		if job.Sizes[i] != 0 {
			size = job.Sizes[i]
		}
		b := make([]byte, size)
		for o := 0; len(pat) > 0 && o < len(b); o += len(pat) {
			copy(b[o:], pat)
		}
		mem[i] = bytesF32(b)
	}
	for di, d := range job.Dispatches {
		l := ls[di]
		op, err := ops.Lookup(l.op)
		if err != nil {
			return nil, err
		}
		k, err := op.Kernel(l.arith)
		if err != nil {
			return nil, err
		}
		bufs := map[string]any{}
		for j, kb := range k.Buffers {
			lo := d.Offsets[j] / 4
			hi := uint64(len(mem[d.Bindings[j]]))
			if d.Ranges[j] != 0 {
				hi = lo + d.Ranges[j]/4
			}
			view := mem[d.Bindings[j]][lo:hi]
			if kb.Elem == ir.I32 {
				ids := make([]int32, len(view))
				for x, f := range view {
					ids[x] = int32(math.Float32bits(f))
				}
				bufs[kb.Name] = ids
			} else {
				bufs[kb.Name] = view
			}
		}
		if err := gen.Run[l.op](l.arith.String(), l.params, l.args, bufs); err != nil {
			return nil, fmt.Errorf("dispatch %d (%s): %v", di, l.op, err)
		}
	}
	return mem, nil
}

// Bad flags name the flag and what it takes, before any work.
func TestPrepareRejectsBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-only", "gdn,matmul"}, `-only: "matmul" is not a benchmark family (gdn, conv, layer, probe, chain or chaincheck)`},
		{[]string{"-gdn-ids", "random"}, `-gdn-ids: "random" is not identity, shuffled or permuted`},
		{[]string{"-seqs", "0"}, `-seqs: "0" is not a positive count`},
		{[]string{"-barrier", "none"}, `-barrier: "none" is neither ggml nor kernelgen`},
		{[]string{"-conv-batched", "8,12"}, `-conv-batched: "12" is not an NS (2, 4, 8, 16 or 32)`},
		{[]string{"-batched", "3x1x8"}, `-batched: "3x1x8" is not NWxCPWxNS[xSPT]`},
		{[]string{"-chain-split", "4,0"}, `-chain-split: "0" is not a positive segment count`},
		{[]string{"-only", "chaincheck,gdn"}, `-only chaincheck prepares check jobs (read back, run by check.sh): name it alone`},
	} {
		dir := filepath.Join(t.TempDir(), "out")
		err := prepare(append(c.args, "-o", dir))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to contain %q", c.args, err, c.want)
		}
		if _, serr := os.Stat(dir); serr == nil {
			t.Errorf("%v: wrote %s", c.args, dir)
		}
	}
}

// beside joins the row of what the glue dispatches with kg_bench's rows of
// the same shape, reading both the quoted CSV and the older unquoted one.
func TestBesideJoinsTheGlueRowWithCUDA(t *testing.T) {
	ns := 0 // the most sequences one dispatch takes alone (not split by aliasing)
	for n := 1; n <= ops.TargetOf("vulkan").GDNBatchMax(sv); n++ {
		if bt, ok := ops.TargetOf("vulkan").GDNBatchAt(sv, n); ok && !bt.Aliased {
			ns = n
		}
	}
	bt, _ := ops.TargetOf("vulkan").GDNBatchAt(sv, ns)
	batched := "native-vulkan batched " + batchName(bt)
	rows := []row{
		{entry: entry{bench: "gdn_ids", shape: "H=32", n: 1, impl: "native-vulkan"}, us: 8},
		{entry: entry{bench: "gdn_ids", shape: "H=32", n: 1, impl: "native-vulkan no gather"}, us: 1}, // not the glue's
		{entry: entry{bench: "gdn_ids", shape: "H=32", n: ns, impl: batched}, us: 20},
		{entry: entry{bench: "gdn_ids", shape: "H=32", n: ns, impl: "native-vulkan"}, us: 25}, // not the glue's at n <= NS
		{entry: entry{bench: "conv_ids", shape: "C=8192", n: 32, impl: "native-vulkan"}, us: 16},
		{entry: entry{bench: "gdn_ids", shape: "H=48", n: 1, impl: "native-vulkan"}, us: 9}, // no CUDA row: left out
	}
	// At one sequence the CUDA glue dispatches its small-n tiling.
	snw, scpw, _, _ := ops.TargetOf("cuda").GDNSmallTiling(sv)
	csvText := "bench,shape,n_seqs,impl,us,pct_copy\n" +
		fmt.Sprintf("gdn_ids,H=32,1,generated NW=%d,CPW=%d,4.00,1.0\n", snw, scpw) + // unquoted, as before 2026-11-23
		fmt.Sprintf(`gdn_ids,H=32,1,"generated %d,%d graph",2.00,1.0`, snw, scpw) + "\n" +
		fmt.Sprintf(`gdn_ids,H=32,1,"generated %d,%d serial",5.00,1.0`, snw, scpw) + "\n" +
		`gdn_ids,H=32,1,"generated 16,4 graph",3.00,1.0` + "\n" + // not the glue's at one sequence
		fmt.Sprintf(`gdn_ids,H=32,%d,"generated 8,2 graph",1.00,1.0`, ns) + "\n" + // nor at NS
		fmt.Sprintf(`gdn_ids,H=32,%d,"generated NW=16,CPW=4",16.00,1.0`, ns) + "\n" +
		fmt.Sprintf(`gdn_ids,H=32,%d,"generated 16,4 graph",nan,nan`, ns) + "\n" +
		`conv_ids,C=8192,32,"generated",8.00,1.0` + "\n"
	var out strings.Builder
	if err := beside(&out, rows, csvText); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"| B | H=32 | 1 | 8.00 | 4.00 | 2.00 | 5.00 | 50% | 25% | 62% |",
		fmt.Sprintf("| B | H=32 | %d | 20.00 | 16.00 | - | - | 80%% | - | - |", ns),
		"| D | C=8192 | 32 | 16.00 | 8.00 | - | - | 50% | - | - |",
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if got := lines[2:]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := beside(&out, rows, "us,bench\n"); err == nil || !strings.Contains(err.Error(), "not a kg_bench CSV") {
		t.Errorf("a CSV of another header: %v", err)
	}
}

// The chained schedule's check jobs on lavapipe at tiny shapes: every set
// equals gather + compute bit for bit, every control (no chain gather)
// differs; and the timing jobs' series come out one row per pattern, per
// repetition.
func TestChainJobsOnLavapipe(t *testing.T) {
	tier.FullOnly(t, "the GPU host's chaincheck job files, run whole on lavapipe; the fast tier runs the same kernels through verify/vulkan and the bench pipeline through TestSmokeOnLavapipe")
	dir := filepath.Join(t.TempDir(), "chaincheck")
	err := prepare([]string{"-smoke", "-fence-timeout", "0", "-only", "chaincheck", "-device", "llvmpipe", "-o", dir})
	if errors.Is(err, vkrun.ErrMissingTool) || errors.Is(err, spvbuild.ErrMissingTool) {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	tsv, err := os.ReadFile(filepath.Join(dir, chainCheckFile))
	if err != nil {
		t.Fatal(err)
	}
	var outs []string
	ctx := tier.Context(t)
	runner, err := vkrun.Build(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(tsv)), "\n") {
		name, _, _ := strings.Cut(line, "\t")
		out := filepath.Join(dir, name+".out")
		cmd := exec.CommandContext(ctx, runner.Path(), filepath.Join(dir, "jobs", name+".job"), out)
		cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+t.TempDir())
		if msg, err := cmd.CombinedOutput(); err != nil {
			if strings.Contains(string(msg), "no Vulkan device") && os.Getenv("KERNELGEN_REQUIRE_TOOLS") == "" {
				t.Skip(string(msg))
			}
			t.Fatalf("%s: %v\n%s", name, err, msg)
		}
		outs = append(outs, out)
	}
	var log strings.Builder
	if err := checkChain(append([]string{filepath.Join(dir, chainCheckFile)}, outs...), &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	same, controls := strings.Count(log.String(), ": same ("), strings.Count(log.String(), "differs, as it must")
	// 2 ops x 2 n x 2 contracts x 6 patterns, 2 splits each, op B's
	// batched shapes where they take n and its block tilings; a control
	// per rotation job.
	want := 2 * 2 * 2 * len(chainPatterns) * len(smoke.chainSplits)
	want += 2 * 2 * len(chainPatterns) * len(smoke.blockTilings)
	for _, n := range smoke.chainCheckSeqs {
		for _, bt := range smoke.batches {
			if n <= bt.Seqs() {
				want += 2 * len(chainPatterns)
			}
		}
	}
	if same != want || controls != 2*2*2 {
		t.Fatalf("%d sets same (want %d), %d controls caught (want 8):\n%s", same, want, controls, log.String())
	}

	dir = filepath.Join(t.TempDir(), "chain")
	if err := prepare([]string{"-smoke", "-fence-timeout", "0", "-only", "chain", "-device", "llvmpipe", "-o", dir}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(tier.Context(t), "bash", filepath.Join(dir, "run.sh"))
	cmd.Env = append(os.Environ(), "OUT="+dir, "XDG_RUNTIME_DIR="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "(0 failed)") {
		t.Fatalf("run.sh: %v\n%s", err, out)
	}
	files, err := readResults(filepath.Join(dir, "results.tar"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := measure(string(files[planFile]), files)
	if err != nil {
		t.Fatal(err)
	}
	chain, gathers := 0, 0
	for _, r := range rows {
		if !strings.HasPrefix(r.bench, "chain_") {
			continue
		}
		chain++
		if strings.Contains(r.impl, partsGather) {
			gathers++
		}
		res, err := vkrun.DecodeOutput(files[r.name+".out"])
		if err != nil {
			t.Fatal(err)
		}
		// Per repetition: a block of smoke.reps repetitions is at least
		// reps times a row's figure (and the figure is not a block's).
		longest := slices.Max(res.Times)
		if r.err != "" || !(r.us > 0) || r.us > longest/float64(smoke.reps)*1.0001 {
			t.Errorf("%s %s: %+v (longest interval %.1f us)", r.name, r.impl, r, longest)
		}
	}
	// per op: shapes x n x (today + splits) jobs, a row per timed pattern;
	// and the chain gather alone where it runs (n >= 2), identity and
	// rotated ids
	many := 0
	for _, n := range smoke.seqs {
		if n >= 2 {
			many++
		}
	}
	if want := 2 * many * 2; gathers != want {
		t.Fatalf("%d chain gather rows, want %d", gathers, want)
	}
	batched := 0 // op B's batched shapes where they take n
	for _, n := range smoke.seqs {
		for _, bt := range smoke.batches {
			if n <= bt.Seqs() {
				batched++
			}
		}
	}
	// op B's block schedule at each block tiling and n, and its gather
	// alone where it runs (identity and rotated ids)
	blocks := len(smoke.blockTilings) * (len(smoke.seqs)*len(timedPatterns) + 2*many)
	if want := (2*len(smoke.seqs)*(1+len(smoke.chainSplits))+batched)*len(timedPatterns) + gathers + blocks; chain != want {
		t.Fatalf("%d chain rows, want %d", chain, want)
	}
}
