// Command vulkan benchmarks kernelgen's generated Vulkan kernels on a GPU
// host, at the shapes and with the byte counts of bench/cuda so the two
// tables line up (see bench/cuda/src/kg_bench.cu):
//
//	go run ./bench/vulkan -o DIR          jobs, runner and run.sh for the GPU host
//	bash DIR/run.sh                       on the GPU host: writes ${OUT:-DIR}/results.tar
//	                                      (KERNELGEN_VULKAN_STATS=1: each job's .log there also
//	                                      holds its pipelines' registers, verify/vkrun)
//	go run ./bench/vulkan report FILE     the table (FILE: results.tar or its directory);
//	                                      -cuda bench.csv adds the glue's rows beside kg_bench's
//	go run ./bench/vulkan checkchain TSV OUT...
//	                                      compare -only chaincheck jobs' schedules bit for bit
//	                                      (DIR/check.sh runs each job and this, chain.go)
//
// Benchmarks, each timed as bench/cuda times its launches: after a warm-up
// block of 30 repetitions, 5 blocks of 30, a GPU timestamp between blocks
// and none inside one (vkrun's Job.TimeEvery); a block's time divided by 30,
// the median block reported. A gather is left out where its ops.Guard says
// it changes nothing (one sequence), as the glue does.
//
//	gdn_ids   op B (gather + compute), S_v 128, KDA off, T = 1, H 32 and 48,
//	          n_seqs 1..256, identity ids; native-vulkan and portable, and
//	          native-vulkan without the gather dispatch
//	conv_ids  op D (gather + compute), d_conv 4, SiLU on, C 8192 and 10240,
//	          ids shuffled over the pool; and its batched dispatch (the
//	          glue's choice for 2..NS sequences) at n_seqs <= NS
//	conv      op C, the same shapes, prior taps from pool rows half a pool
//	          away from the destination window
//	copy      a 1 GiB shader copy: the reference rate for "% of copy"
//	empty     an empty shader, one workgroup: the floor every dispatch pays
//	          (the dispatch and its barrier); and the same with a timestamp
//	          after every dispatch, what per-dispatch timing would add
//
// With -tilings NWxCPW,..., op B's compute dispatch alone is also timed at
// each of those workgroup shapes (native, no gather): the runs that chose
// ops.Target.GDNTiling. Op B's batched schedule (one dispatch, no gather; the
// glue's choice for the n_seqs of its tiers) is timed at the tier that
// takes n_seqs (ops.Target.GDNBatchAt) and at each -batched NWxCPWxNS[xSPT], for
// every n_seqs <= NS*SPT. -seqs narrows the
// n_seqs swept; -only gdn (or conv) prepares one family; -gdn-ids shuffled
// draws op B's sources from the whole pool instead of identity (what a
// schedule costs when sequences do not read their own slot), -gdn-ids
// permuted rotates them inside the destination window (every row through
// the gather: its worst case); -conv-batched
// NS,... also times op D's one dispatch at those NS (ops.Target.ConvBatch's is
// always timed).
//
// Bytes per repetition are bench/cuda's: the state (GDN) or taps (conv) read
// plus written, 2 * rows * row bytes. As there, the state pool is far larger
// than the H100's 50 MB L2 and the destination window moves by n_seqs rows
// every repetition (rs_head = rep * n mod (slots - n)); unlike there, a pool
// is capped at 2 GiB, under maxStorageBufferRange (one binding covers it),
// which leaves a window of up to 768 MiB at least two windows of room.
//
// Vulkan orders the dispatches with a barrier between each: by default the
// one ggml-vulkan records between dependent nodes (ggml_vk_sync_buffers:
// compute and transfer stages, shader and transfer accesses); -barrier
// kernelgen gives vkrun's compute-to-compute barrier with memory accesses,
// which runs before 2026-11-23 used. The empty dispatch is timed under both.
// bench/cuda's kernels overlap through programmatic dependent launch;
// bench/cuda's "serial" rows launch in plain stream order, the analogue of
// the barrier. Buffers are device-local.
package main

import (
	"archive/tar"
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kernelgen/kernelgen/ir"
	"github.com/kernelgen/kernelgen/ops"
	"github.com/kernelgen/kernelgen/tools/spvbuild"
	"github.com/kernelgen/kernelgen/verify/vkrun"
	"github.com/kernelgen/kernelgen/verify/vulkan"
)

func main() {
	args := os.Args[1:]
	var err error
	switch {
	case len(args) > 0 && args[0] == "report":
		err = report(args[1:], os.Stdout)
	case len(args) > 0 && args[0] == "checkchain":
		err = checkChain(args[1:], os.Stdout)
	case len(args) > 0 && args[0] == "prepare":
		err = prepare(args[1:])
	default:
		err = prepare(args)
	}
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/vulkan:", err)
		os.Exit(1)
	}
}

// config is one benchmark sweep: the real one, or a tiny one for lavapipe.
type config struct {
	reps         int
	blocks       int // timed blocks of reps (after one warm-up block)
	heads        []int
	seqs         []int
	channels     []int
	gdnPool      uint64 // minimum pool bytes (bench/cuda: 1 GiB)
	convPool     uint64 // minimum (bench/cuda: 512 MiB)
	poolCap      uint64 // maximum: one binding covers the pool
	copyBytes    uint64
	tilings      []tiling    // extra op B tilings to time (-tilings)
	batches      []ops.Batch // extra batched shapes to time (-batched)
	blockTilings []tiling    // op B's block schedule's tilings to time and check (-blocks)
	// convBatches are extra NS to time op D's batched dispatch at
	// (-conv-batched).
	convBatches []int
	// aliasIDs points some sources at other sequences' destinations
	// (the gather's and the batched schedule's hazard) instead of steady
	// decode's identity: checks, not timings.
	aliasIDs bool
	// shuffledIDs draws op B's sources from the whole pool (a sequence
	// rarely reads its own slot) instead of steady decode's identity.
	shuffledIDs bool
	// permutedIDs rotates op B's sources inside the destination window by
	// one (every source another sequence's destination: every row goes
	// through the gather, its worst case).
	permutedIDs bool
	// only lists the benchmark families to prepare ("gdn", "conv"); empty:
	// all. The copy and the empty dispatch always run.
	only []string
	// kgBarrier puts vkrun's compute-to-compute barrier between dispatches
	// instead of ggml-vulkan's (ggml_vk_sync_buffers).
	kgBarrier bool
	// models are the layer shapes of -only layer.
	models []layerModel
	// chainSplits are the ChainSplit values the chained schedule runs at
	// (-chain-split; -only chain and chaincheck).
	chainSplits []int
	// The check jobs' shapes (-only chaincheck): op B's heads, op D's
	// channels, the n_seqs.
	chainCheckH, chainCheckC int
	chainCheckSeqs           []int
}

func (c config) wants(family string) bool { return len(c.only) == 0 || slices.Contains(c.only, family) }

// runs is how many repetitions a job dispatches: a warm-up block of reps,
// then blocks timed blocks of reps, with one GPU timestamp between blocks
// and none inside one (timing), as bench/cuda times each block of 30
// launches with two events. The report takes the median block.
func (c config) runs() int { return (1 + c.blocks) * c.reps }

// timing puts a timestamp after every block of reps repetitions. vkrun
// counts dispatches, and a repetition can be two (gather and compute), so
// a block is reps times a repetition's dispatches.
func (b *builder) timing(cfg config, e *entry) {
	b.job.TimeEvery = cfg.reps * len(b.job.Dispatches) / cfg.runs()
	e.perInterval = cfg.reps
}

// tiling is op B's workgroup shape: NW column groups of CPW columns.
type tiling struct{ nw, cpw int }

// batchName is a batched shape as -batched spells it: NWxCPWxNS, xSPT
// where a row holds more than one sequence, and a trailing "a" for the
// split by aliasing (ops.Batch.Aliased).
func batchName(bt ops.Batch) string {
	name := fmt.Sprintf("%dx%dx%d", bt.NW, bt.CPW, bt.NS)
	if bt.SPT != 1 {
		name += fmt.Sprintf("x%d", bt.SPT)
	}
	if bt.Aliased {
		name += "a"
	}
	return name
}

// batchVariant is the batched kernel's variant at shape bt (SPLIT: split
// by aliasing, the chained compute after it).
func batchVariant(bt ops.Batch) map[string]int64 {
	split := int64(0)
	if bt.Aliased {
		split = 1
	}
	return map[string]int64{"S_v": sv, "KDA": 0, "NW": int64(bt.NW), "CPW": int64(bt.CPW), "NS": int64(bt.NS), "SPT": int64(bt.SPT), "SPLIT": split}
}

func parseBatches(s string) ([]ops.Batch, error) {
	var out []ops.Batch
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		f = strings.TrimSpace(f)
		aliased := strings.HasSuffix(f, "a")
		p := strings.Split(strings.TrimSuffix(f, "a"), "x")
		v := [4]int{0, 0, 0, 1}
		ok := len(p) == 3 || len(p) == 4
		for i := 0; ok && i < len(p); i++ {
			var err error
			v[i], err = strconv.Atoi(p[i])
			ok = err == nil && v[i] > 0
		}
		if !ok || sv%(v[0]*v[1]) != 0 {
			return nil, fmt.Errorf("-batched: %q is not NWxCPWxNS[xSPT] with NW*CPW dividing %d (e.g. 4x1x8, 1x2x32x2)", f, sv)
		}
		out = append(out, ops.Batch{NW: v[0], CPW: v[1], NS: v[2], SPT: v[3], Aliased: aliased})
	}
	return out, nil
}

func parseTilings(s string) ([]tiling, error) {
	var out []tiling
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' }) {
		a, b, ok := strings.Cut(strings.TrimSpace(f), "x")
		nw, err1 := strconv.Atoi(a)
		cpw, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || nw <= 0 || cpw <= 0 || sv%(nw*cpw) != 0 {
			return nil, fmt.Errorf("-tilings: %q is not NWxCPW with NW*CPW dividing %d (e.g. 16x4)", f, sv)
		}
		out = append(out, tiling{nw, cpw})
	}
	return out, nil
}

var full = config{
	reps: 30, blocks: 5, heads: []int{32, 48}, seqs: []int{1, 8, 32, 128, 256}, channels: []int{8192, 10240},
	gdnPool: 1 << 30, convPool: 1 << 29, poolCap: 1<<31 - 1, copyBytes: 1 << 30, models: layerModels,
	chainSplits: []int{2, 4, 8, 64}, chainCheckH: 1, chainCheckC: 256, chainCheckSeqs: []int{2, 3, 8, 16, 32, 33, 256, 1024, 1100},
}

// smoke exercises every job shape on lavapipe in seconds.
var smoke = config{
	reps: 3, blocks: 2, heads: []int{2}, seqs: []int{1, 3}, channels: []int{256},
	gdnPool: 1 << 20, convPool: 1 << 18, poolCap: 8 << 20, copyBytes: 1 << 20,
	tilings:     []tiling{{8, 2}}, // the tuning path, checked against the reference
	batches:     []ops.Batch{{NW: 2, CPW: 2, NS: 4, SPT: 1}},
	convBatches: []int{4},
	aliasIDs:    true,
	models:      []layerModel{{"smoke", 2, 256}},
	chainSplits: []int{1, 2}, chainCheckH: 1, chainCheckC: 128, chainCheckSeqs: []int{3, 9},
	// op B's block schedule in blocks of 2: 3 and 9 sequences span blocks
	blockTilings: []tiling{{2, 4}},
}

// entry is one job of the plan: what it measures and its bytes per
// repetition.
type entry struct {
	name, bench, shape string
	n                  int
	impl               string
	bytes              float64
	// launches describe the job's dispatches for a host replay (tests);
	// empty for the copy.
	launches []launch
	// perInterval is how many repetitions one timed interval holds.
	perInterval int
	// ownBarrier: the job chose its barrier (the floor under the barrier
	// the sweep does not use); otherwise the sweep's (-barrier) applies.
	ownBarrier bool
	// series names the parts of a job timed one after another (the chain
	// jobs' ids patterns): each has its warm-up block and timed blocks.
	series []string
	// readback: the job's buffers are read back (checks: labels name the
	// sets it compares, chaincheck.tsv).
	readback bool
	labels   []string
}

// launch is what a dispatch runs, in the Go reference's terms.
type launch struct {
	op     string
	arith  ir.Arith
	params map[string]int64
	args   map[string]uint32
}

const planFile = "plan.tsv"

func prepare(args []string) error {
	fs := flag.NewFlagSet("prepare", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `usage: go run ./bench/vulkan [prepare] [flags]   jobs, runner and run.sh for the GPU host
       go run ./bench/vulkan report [-csv FILE] RESULTS   the table (results.tar or its directory)

prepare flags:
`)
		fs.PrintDefaults()
	}
	dir := fs.String("o", ".dev/vulkan-bench", "output directory (carried to the GPU host)")
	device := fs.String("device", "NVIDIA", "Vulkan device the jobs select (a name substring or #N)")
	fenceTimeout := fs.Duration("fence-timeout", time.Minute, "how long a job waits for one fence before it fails as hung (0: no bound, for a runner whose caller bounds it)")
	isSmoke := fs.Bool("smoke", false, "tiny shapes, for a check on lavapipe")
	tilings := fs.String("tilings", "", "also time op B's compute dispatch (native, no gather) at these NWxCPW tilings, comma-separated (e.g. 16x4,8x2): tuning runs, off the variant table allowed")
	batched := fs.String("batched", "", "also time op B's batched schedule at these NWxCPWxNS[xSPT][a] shapes (SPT sequences a row, 1 if left out; a trailing a: split by aliasing, the batched dispatch then the chained compute, with -only chain), at each n_seqs <= NS*SPT (e.g. 4x1x8,1x2x32x2,1x2x18x2a): tuning runs")
	blocks := fs.String("blocks", "", "also time (with -only chain) and check (with -only chaincheck) op B's block schedule at these NWxCPW tilings (blocks of NW sequences), comma-separated (e.g. 16x4,8x4): tuning runs")
	convBatched := fs.String("conv-batched", "", "also time op D's batched dispatch at these NS (32 channels x NS sequences per workgroup, NS in 2..32), comma-separated, at each n_seqs <= NS: tuning runs")
	seqs := fs.String("seqs", "", "n_seqs to run, comma-separated (default: "+intList(full.seqs)+")")
	only := fs.String("only", "", "benchmark families to prepare, comma-separated: gdn, conv (default: both), layer (one layer's decode step, fused and unfused; only when named), probe (op B's parts at one sequence, probe.go; only when named), chain (ops B and D, today's schedule and the chained one per ids pattern, chain.go; only when named), chaincheck (the chained schedule against gather + compute, bit for bit: check.sh; only when named, alone)")
	chainSplit := fs.String("chain-split", "", "ChainSplit values the chained schedule runs at, comma-separated (default: "+intList(full.chainSplits)+")")
	barrier := fs.String("barrier", "ggml", "barrier between dispatches: ggml (what ggml-vulkan records between dependent nodes) or kernelgen (vkrun's compute-to-compute one, the barrier of runs before 2026-11-23)")
	gdnIDs := fs.String("gdn-ids", "identity", "op B's sources: identity (steady decode), shuffled (drawn from the whole pool) or permuted (the window rotated by one: every row gathered)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg := full
	if *isSmoke {
		cfg = smoke
	}
	extra, err := parseTilings(*tilings)
	if err != nil {
		return err
	}
	cfg.tilings = append(cfg.tilings[:len(cfg.tilings):len(cfg.tilings)], extra...)
	moreBatches, err := parseBatches(*batched)
	if err != nil {
		return err
	}
	cfg.batches = append(cfg.batches[:len(cfg.batches):len(cfg.batches)], moreBatches...)
	moreBlocks, err := parseTilings(*blocks)
	if err != nil {
		return fmt.Errorf("-blocks: %w", err)
	}
	cfg.blockTilings = append(cfg.blockTilings[:len(cfg.blockTilings):len(cfg.blockTilings)], moreBlocks...)
	for _, f := range strings.FieldsFunc(*convBatched, func(r rune) bool { return r == ',' }) {
		ns, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || ns < 2 || ns > 32 || ns&(ns-1) != 0 {
			return fmt.Errorf("-conv-batched: %q is not an NS (2, 4, 8, 16 or 32)", f)
		}
		cfg.convBatches = append(cfg.convBatches, ns)
	}
	if *seqs != "" {
		cfg.seqs = nil
		for _, f := range strings.Split(*seqs, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return fmt.Errorf("-seqs: %q is not a positive count", f)
			}
			cfg.seqs = append(cfg.seqs, n)
		}
	}
	for _, f := range strings.FieldsFunc(*only, func(r rune) bool { return r == ',' }) {
		f = strings.TrimSpace(f)
		if f != "gdn" && f != "conv" && f != "layer" && f != "probe" && f != "chain" && f != "chaincheck" {
			return fmt.Errorf("-only: %q is not a benchmark family (gdn, conv, layer, probe, chain or chaincheck)", f)
		}
		cfg.only = append(cfg.only, f)
	}
	if slices.Contains(cfg.only, "chaincheck") && len(cfg.only) > 1 {
		return errors.New("-only chaincheck prepares check jobs (read back, run by check.sh): name it alone")
	}
	if *chainSplit != "" {
		if cfg.chainSplits, err = parseSplits(*chainSplit); err != nil {
			return err
		}
	}
	if cfg.kgBarrier, err = either("-barrier", *barrier, "ggml", "kernelgen"); err != nil {
		return err
	}
	switch *gdnIDs {
	case "identity":
	case "shuffled":
		cfg.shuffledIDs = true
	case "permuted":
		cfg.permutedIDs = true
	default:
		return fmt.Errorf("-gdn-ids: %q is not identity, shuffled or permuted", *gdnIDs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	runner, err := vkrun.Build(ctx)
	if err != nil {
		return err
	}
	comp := vulkan.NewCompiler(ctx)
	jobs, plan, err := buildAll(cfg, comp)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(*dir); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(*dir, "jobs"), 0o755); err != nil {
		return err
	}
	var tsv, checks strings.Builder
	total := 0
	for i, j := range jobs {
		j.Device, j.Timeout = *device, *fenceTimeout
		data, err := vkrun.EncodeJob(j)
		if err != nil {
			return fmt.Errorf("%s: %w", plan[i].name, err)
		}
		total += len(data)
		if err := os.WriteFile(filepath.Join(*dir, "jobs", plan[i].name+".job"), data, 0o644); err != nil {
			return err
		}
		e := plan[i]
		fmt.Fprintf(&tsv, "%s\t%s\t%s\t%d\t%s\t%.0f\t%d", e.name, e.bench, e.shape, e.n, e.impl, e.bytes, e.perInterval)
		if len(e.series) > 0 {
			fmt.Fprintf(&tsv, "\t%s", strings.Join(e.series, ","))
		}
		tsv.WriteString("\n")
		if len(e.labels) > 0 {
			fmt.Fprintf(&checks, "%s\t%s\n", e.name, strings.Join(e.labels, "|"))
		}
	}
	if err := os.WriteFile(filepath.Join(*dir, planFile), []byte(tsv.String()), 0o644); err != nil {
		return err
	}
	if checks.Len() > 0 {
		if err := os.WriteFile(filepath.Join(*dir, chainCheckFile), []byte(checks.String()), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*dir, "check.sh"), []byte(checkScript), 0o755); err != nil {
			return err
		}
	}
	bin, err := os.ReadFile(runner.Path())
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*dir, "vkrun"), bin, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*dir, "run.sh"), []byte(runScript), 0o755); err != nil {
		return err
	}
	fmt.Printf("prepared %s: %d jobs (%.1f MB) for device %q; run `bash %s/run.sh` on the GPU host\n", *dir, len(jobs), float64(total)/1e6, *device, *dir)
	return nil
}

// either parses a two-valued flag: false for its default (first), true
// for the other.
func either(flag, value, first, other string) (bool, error) {
	switch value {
	case first:
		return false, nil
	case other:
		return true, nil
	}
	return false, fmt.Errorf("%s: %q is neither %s nor %s", flag, value, first, other)
}

// runScript runs every job on the GPU host; the runner needs libc and a
// Vulkan driver (plus the loader, or KERNELGEN_VULKAN_LOADER=icd).
const runScript = `#!/usr/bin/env bash
# Generated by go run ./bench/vulkan: runs every job, writes ${OUT:-DIR}/results.tar
# for go run ./bench/vulkan report.
set -euo pipefail
cd "$(dirname "$0")"
res=$(mktemp -d)
export XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$res}
cp plan.tsv "$res/"
./vkrun --list > "$res/devices.txt" 2>&1 || true
failed=0
for j in jobs/*.job; do
  b=$(basename "$j" .job)
  if ! ./vkrun "$j" "$res/$b.out" 2> "$res/$b.log"; then
    echo "$b failed: $(cat "$res/$b.log")" >&2
    failed=$((failed + 1))
  fi
done
tar -C "$res" -cf "${OUT:-$PWD}/results.tar" .
echo "results: ${OUT:-$PWD}/results.tar ($failed failed)"
`

// builder assembles one job.
type builder struct {
	comp     *vulkan.Compiler
	job      vkrun.Job
	rng      *rand.Rand
	launches []launch
	// offTable lets dispatch build a variant the table does not list
	// (tuning runs).
	offTable bool
}

func (b *builder) buffer(size uint64, pattern []byte) int {
	if size > 0 && uint64(len(pattern)) > size {
		pattern = pattern[:size]
	}
	b.job.Buffers = append(b.job.Buffers, pattern)
	b.job.Sizes = append(b.job.Sizes, size)
	return len(b.job.Buffers) - 1
}

// f32s is a pattern of n uniform values in [lo, hi).
func (b *builder) f32s(n int, lo, hi float64) []byte {
	out := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(float32(lo+(hi-lo)*b.rng.Float64())))
	}
	return out
}

// bind is a binding: a buffer, or a byte range of one.
type bind struct {
	buf      int
	off, rng uint64
}

func whole(i int) bind { return bind{buf: i} }

// dispatch adds one launch of op's kernel under a with the table variant
// matching want, buffers bound by kernel buffer name.
func (b *builder) dispatch(opName string, a ir.Arith, want map[string]int64, args map[string]uint32, binds map[string]bind) error {
	op, err := ops.Lookup(opName)
	if err != nil {
		return err
	}
	guard := map[string]int64{}
	for n, x := range args {
		guard[n] = int64(x)
	}
	if !op.Needed(guard) {
		return nil // as the glue does: the launch would change nothing
	}
	k, err := op.Kernel(a)
	if err != nil {
		return err
	}
	var v *ops.Variant
	for _, x := range ops.VariantsOf(opName) {
		match := len(x.Values) == len(want)
		for name, val := range want {
			match = match && x.Values[name] == val
		}
		if match {
			v = &x
			break
		}
	}
	if v == nil && b.offTable {
		v = &ops.Variant{Op: opName, Values: want}
	}
	if v == nil {
		return fmt.Errorf("%s has no variant %v", opName, want)
	}
	d := vkrun.Dispatch{}
	if d.SPIRV, err = b.comp.SPIRV(k, *v); err != nil {
		return err
	}
	if d.Push, err = vulkan.Push(k, args); err != nil {
		return err
	}
	if d.Groups, err = vulkan.Grid(k, v.Values, args); err != nil {
		return err
	}
	for _, kb := range k.Buffers {
		bd, ok := binds[kb.Name]
		if !ok {
			return fmt.Errorf("%s: no binding for %s", k.ID(), kb.Name)
		}
		d.Bindings = append(d.Bindings, bd.buf)
		d.Offsets = append(d.Offsets, bd.off)
		d.Ranges = append(d.Ranges, bd.rng)
	}
	b.job.Dispatches = append(b.job.Dispatches, d)
	copied := map[string]uint32{}
	for n, x := range args {
		copied[n] = x
	}
	b.launches = append(b.launches, launch{op: opName, arith: a, params: v.Values, args: copied})
	return nil
}

// idsStride separates the repetitions' ids in one buffer: a multiple of 256
// bytes, the largest minStorageBufferOffsetAlignment Vulkan allows.
func idsStride(n int) uint64 { return (uint64(4*n) + 255) &^ 255 }

func putIDs(buf []byte, rep int, ids []int32) {
	off := uint64(rep) * idsStride(len(ids))
	for s, id := range ids {
		binary.LittleEndian.PutUint32(buf[off+uint64(4*s):], uint32(id))
	}
}

// pool sizes a state pool as bench/cuda does, within the cap.
func pool(n, reps int, row, minBytes, capBytes uint64) (int, error) {
	slots := max(uint64(n)*uint64(reps+2), minBytes/row)
	slots = min(slots, capBytes/row)
	if slots < 2*uint64(n) {
		return 0, fmt.Errorf("a pool of %d rows of %d bytes cannot hold two windows of %d", slots, row, n)
	}
	return int(slots), nil
}

const sv = 128

func intList(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

// schedule is how a job runs op B.
type schedule struct {
	noGather bool       // the compute dispatch alone
	tile     *tiling    // the compute dispatch at this tiling (off the table)
	batch    *ops.Batch // the batched kernel, one dispatch
}

// gdnJob is op B at one shape: per repetition the gather (unless
// noGather) and the compute dispatch, or the batched dispatch; identity
// ids (unless cfg.aliasIDs), the window moving.
func gdnJob(cfg config, comp *vulkan.Compiler, a ir.Arith, H, n int, sc schedule) (vkrun.Job, entry, error) {
	noGather, tile := sc.noGather, sc.tile
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(uint64(H), uint64(n))), offTable: tile != nil || sc.batch != nil}
	D := sv * sv * H
	slotBytes := uint64(4 * D)
	slots, err := pool(n, cfg.runs(), slotBytes, cfg.gdnPool, cfg.poolCap)
	if err != nil {
		return b.job, entry{}, err
	}
	head := func(rep int) int { return rep * n % (slots - n) }
	tok := uint64(4 * sv * H * n)
	q := b.buffer(tok, b.f32s(4096, -1, 1))
	k := b.buffer(tok, b.f32s(4096, -1, 1))
	v := b.buffer(tok, b.f32s(4096, -0.3, 5))
	g := b.buffer(uint64(4*H*n), b.f32s(1024, -20, -1e-4))
	beta := b.buffer(uint64(4*H*n), b.f32s(1024, 0, 1))
	cache := b.buffer(uint64(slots)*slotBytes, b.f32s(1<<14, -1, 1))
	dst := b.buffer(tok, nil) // ops A and B never write dst's state region
	scratch := b.buffer(uint64(n)*slotBytes, nil)
	idsBytes := make([]byte, uint64(cfg.runs())*idsStride(n))
	for rep := 0; rep < cfg.runs(); rep++ {
		ids := make([]int32, n)
		var perm []int
		if cfg.shuffledIDs {
			perm = b.rng.Perm(slots)[:n]
		}
		for s := range ids {
			ids[s] = int32(head(rep) + s) // steady decode: identity
			if cfg.shuffledIDs {
				ids[s] = int32(perm[s])
			}
			if cfg.permutedIDs {
				ids[s] = int32(head(rep) + (s+1)%n)
			}
			if cfg.aliasIDs && s%2 == 1 {
				ids[s] = int32(head(rep) + (s+1)%n) // the next sequence's destination
			}
		}
		putIDs(idsBytes, rep, ids)
	}
	idsBuf := b.buffer(0, idsBytes)
	// The tiling the glue dispatches at this n_seqs.
	nw, cpw := ops.TargetOf("vulkan").GDNTiling(sv)
	if snw, scpw, maxSeqs, ok := ops.TargetOf("vulkan").GDNSmallTiling(sv); ok && n <= maxSeqs {
		nw, cpw = snw, scpw
	}
	if tile != nil {
		nw, cpw = tile.nw, tile.cpw
	}
	kda := map[string]int64{"S_v": sv, "KDA": 0, "NW": int64(nw), "CPW": int64(cpw)}
	// args are op B's push constants at destination slot rs: one token per
	// sequence, contiguous q/k/v/g/beta.
	args := func(rs int) map[string]uint32 {
		h := uint32(H)
		return map[string]uint32{"H": h, "n_tokens": 1, "n_seqs": uint32(n), "neq1": h, "rq3": 1,
			"sq1": sv, "sq2": sv * h, "sq3": sv * h, "sv1": sv, "sv2": sv * h, "sv3": sv * h,
			"sg1": 1, "sg2": h, "sg3": h, "sb1": 1, "sb2": h, "sb3": h,
			"scale": math.Float32bits(float32(1 / math.Sqrt(sv))), "sd1": uint32(D), "rs_head": uint32(rs), "aliased_batched": 0}
	}
	for rep := 0; rep < cfg.runs(); rep++ {
		rs := head(rep)
		ids := bind{idsBuf, uint64(rep) * idsStride(n), uint64(4 * n)}
		if sc.batch != nil {
			continue
		}
		if !noGather {
			err := b.dispatch(ops.GatherOp, ir.Portable, map[string]int64{},
				map[string]uint32{"row_len": uint32(D), "n_seqs": uint32(n), "rs_head": uint32(rs)},
				map[string]bind{"cache": whole(cache), "ids": ids, "scratch": whole(scratch)})
			if err != nil {
				return b.job, entry{}, err
			}
		}
		err := b.dispatch("gated_delta_net_inplace_ids", a, kda, args(rs), map[string]bind{
			"q": whole(q), "k": whole(k), "v": whole(v), "g": whole(g), "beta": whole(beta), "cache": whole(cache),
			"dst": whole(dst), "state_dst": {cache, uint64(rs) * slotBytes, uint64(n) * slotBytes}, "ids": ids, "scratch": whole(scratch)})
		if err != nil {
			return b.job, entry{}, err
		}
	}
	if bt := sc.batch; bt != nil {
		if n > bt.Seqs() {
			return b.job, entry{}, fmt.Errorf("batched %s cannot take %d sequences", batchName(*bt), n)
		}
		for rep := 0; rep < cfg.runs(); rep++ {
			rs := head(rep)
			err := b.dispatch("gated_delta_net_inplace_ids_batched", a,
				batchVariant(*bt), args(rs),
				map[string]bind{"q": whole(q), "k": whole(k), "v": whole(v), "g": whole(g), "beta": whole(beta), "cache": whole(cache),
					"dst": whole(dst), "state_dst": {cache, uint64(rs) * slotBytes, uint64(n) * slotBytes},
					"ids": {idsBuf, uint64(rep) * idsStride(n), uint64(4 * n)}})
			if err != nil {
				return b.job, entry{}, err
			}
		}
	}
	impl := a.String()
	if cfg.shuffledIDs {
		impl += " shuffled"
	}
	if cfg.permutedIDs {
		impl += " permuted"
	}
	if noGather {
		impl += " no gather"
	}
	if tile != nil {
		impl += fmt.Sprintf(" %dx%d", tile.nw, tile.cpw)
	}
	if bt := sc.batch; bt != nil {
		impl += " batched " + batchName(*bt)
	}
	e := entry{bench: "gdn_ids", shape: fmt.Sprintf("H=%d", H), n: n, impl: impl, bytes: 2 * float64(slotBytes) * float64(n), launches: b.launches}
	b.timing(cfg, &e)
	return b.job, e, nil
}

// convJob is op D (ids: gather + compute; with batchNS > 0 its one
// dispatch at that NS) or op C at one shape, d_conv 4 with SiLU.
func convJob(cfg config, comp *vulkan.Compiler, C, n int, withIDs bool, batchNS int) (vkrun.Job, entry, error) {
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(uint64(C), uint64(n))), offTable: batchNS > 0}
	row := 3 * C
	rowBytes := uint64(4 * row)
	cells, err := pool(n, cfg.runs(), rowBytes, cfg.convPool, cfg.poolCap)
	if err != nil {
		return b.job, entry{}, err
	}
	head := func(rep int) int { return rep * n % (cells - n) }
	cache := b.buffer(uint64(cells)*rowBytes, b.f32s(1<<14, -1, 1))
	w := b.buffer(uint64(16*C), b.f32s(4*C, -1, 1))
	x := b.buffer(uint64(4*C*n), b.f32s(4096, -1, 1))
	dst := b.buffer(uint64(4*C*n), nil)
	args := map[string]uint32{"n_ch": uint32(C), "n_seqs": uint32(n), "cs1": 3, "cs2": uint32(row), "w1": 4,
		"x2": uint32(C), "sd1": uint32(row), "d2": uint32(C)}
	window := func(rep int) bind { return bind{cache, uint64(head(rep)) * rowBytes, uint64(n) * rowBytes} }
	variant := map[string]int64{"d_conv": 4, "SILU": 1}
	native := ir.Native("vulkan")
	if !withIDs {
		// As bench/cuda: the taps come from pool rows half a pool away from
		// the destination window, so op C reads DRAM as op D does.
		states := func(rep int) bind {
			return bind{cache, uint64((head(rep)+cells/2)%(cells-n)) * rowBytes, uint64(n) * rowBytes}
		}
		for rep := 0; rep < cfg.runs(); rep++ {
			err := b.dispatch("ssm_conv_update_inplace", native, variant, args, map[string]bind{
				"conv_states": states(rep), "conv_kernel": whole(w), "x_cur": whole(x), "conv_state_dst": window(rep), "dst": whole(dst)})
			if err != nil {
				return b.job, entry{}, err
			}
		}
		e := entry{bench: "conv", shape: fmt.Sprintf("C=%d", C), n: n, impl: native.String(), bytes: 2 * float64(rowBytes) * float64(n), launches: b.launches}
		b.timing(cfg, &e)
		return b.job, e, nil
	}
	scratch := b.buffer(uint64(n)*rowBytes, nil)
	idsBytes := make([]byte, uint64(cfg.runs())*idsStride(n))
	for rep := 0; rep < cfg.runs(); rep++ {
		perm := b.rng.Perm(cells)[:n] // shuffled sources across the pool
		ids := make([]int32, n)
		for s := range ids {
			ids[s] = int32(perm[s])
		}
		putIDs(idsBytes, rep, ids)
	}
	idsBuf := b.buffer(0, idsBytes)
	if batchNS > 0 {
		for rep := 0; rep < cfg.runs(); rep++ {
			args["rs_head"] = uint32(head(rep))
			err := b.dispatch("ssm_conv_update_inplace_ids_batched", native, map[string]int64{"d_conv": 4, "SILU": 1, "NS": int64(batchNS)}, args, map[string]bind{
				"cache": whole(cache), "conv_kernel": whole(w), "x_cur": whole(x), "conv_state_dst": window(rep),
				"ids": {idsBuf, uint64(rep) * idsStride(n), uint64(4 * n)}, "dst": whole(dst)})
			if err != nil {
				return b.job, entry{}, err
			}
		}
		impl := native.String() + " batched"
		if ns, _ := ops.TargetOf("vulkan").ConvBatch(); batchNS != ns {
			impl += fmt.Sprintf(" NS=%d", batchNS) // a tuning shape
		}
		e := entry{bench: "conv_ids", shape: fmt.Sprintf("C=%d", C), n: n, impl: impl, bytes: 2 * float64(rowBytes) * float64(n), launches: b.launches}
		b.timing(cfg, &e)
		return b.job, e, nil
	}
	for rep := 0; rep < cfg.runs(); rep++ {
		rs := uint32(head(rep))
		ids := bind{idsBuf, uint64(rep) * idsStride(n), uint64(4 * n)}
		err := b.dispatch(ops.GatherOp, ir.Portable, map[string]int64{},
			map[string]uint32{"row_len": uint32(row), "n_seqs": uint32(n), "rs_head": rs},
			map[string]bind{"cache": whole(cache), "ids": ids, "scratch": whole(scratch)})
		if err != nil {
			return b.job, entry{}, err
		}
		args["rs_head"] = rs
		err = b.dispatch("ssm_conv_update_inplace_ids", native, variant, args, map[string]bind{
			"cache": whole(cache), "conv_kernel": whole(w), "x_cur": whole(x), "conv_state_dst": window(rep),
			"ids": ids, "scratch": whole(scratch), "dst": whole(dst)})
		if err != nil {
			return b.job, entry{}, err
		}
	}
	e := entry{bench: "conv_ids", shape: fmt.Sprintf("C=%d", C), n: n, impl: native.String(), bytes: 2 * float64(rowBytes) * float64(n), launches: b.launches}
	b.timing(cfg, &e)
	return b.job, e, nil
}

// copyShader moves 16 bytes per invocation: the device's copy rate, the
// reference for "% of copy" (bench/cuda uses cudaMemcpy device to device).
const copyShader = `#version 450
layout(local_size_x = 256) in;
layout(binding = 0, std430) readonly buffer buf_src { uvec4 src[]; };
layout(binding = 1, std430) writeonly buffer buf_dst { uvec4 dst[]; };
layout(push_constant) uniform parameter { uint n; } pc;
void main() {
    uint i = gl_WorkGroupID.x * 256u + gl_LocalInvocationID.x;
    if (i < pc.n) dst[i] = src[i];
}
`

func copyJob(cfg config, comp *vulkan.Compiler) (vkrun.Job, entry, error) {
	b := &builder{comp: comp, rng: rand.New(rand.NewPCG(1, 2))}
	spv, err := comp.Build(context.Background(), []spvbuild.Unit{{File: "bench/vulkan/copy.comp", Source: []byte(copyShader), Name: "bench copy"}})
	if err != nil {
		return b.job, entry{}, err
	}
	src := b.buffer(cfg.copyBytes, b.f32s(1<<14, -1, 1))
	dst := b.buffer(cfg.copyBytes, nil)
	n := uint32(cfg.copyBytes / 16)
	for rep := 0; rep < cfg.runs(); rep++ {
		b.job.Dispatches = append(b.job.Dispatches, vkrun.Dispatch{SPIRV: spv[0], Push: binary.LittleEndian.AppendUint32(nil, n),
			Groups: [3]uint32{(n + 255) / 256, 1, 1}, Bindings: []int{src, dst}})
	}
	e := entry{bench: "copy", shape: fmt.Sprintf("%dMiB", cfg.copyBytes>>20), impl: "shader", bytes: 2 * float64(cfg.copyBytes)}
	b.timing(cfg, &e)
	return b.job, e, nil
}

// emptyShader does nothing: its timing is the floor of one dispatch and its
// barrier, which every kernel here pays (emptyJob times its variants).
const emptyShader = `#version 450
layout(local_size_x = 64) in;
void main() {}
`

// The empty dispatch's variants: as the sweep's jobs, a timestamp after
// each, the other barrier, and op B's ten bindings and 80 bytes of push
// constants (what binding a kernel's buffers adds to the floor).
type emptyKind int

const (
	emptyPlain emptyKind = iota
	emptyStampEach
	emptyOtherBarrier
	emptyOpBBindings
)

func emptyJob(cfg config, comp *vulkan.Compiler, kind emptyKind) (vkrun.Job, entry, error) {
	b := &builder{comp: comp}
	spv, err := comp.Build(context.Background(), []spvbuild.Unit{{File: "bench/vulkan/empty.comp", Source: []byte(emptyShader), Name: "bench empty"}})
	if err != nil {
		return b.job, entry{}, err
	}
	d := vkrun.Dispatch{SPIRV: spv[0], Groups: [3]uint32{1, 1, 1}}
	e := entry{bench: "empty", shape: "1group", impl: "shader"}
	if kind == emptyOpBBindings {
		for range 10 {
			d.Bindings = append(d.Bindings, b.buffer(256, nil))
		}
		d.Push = make([]byte, 80)
		e.impl = "shader, 10 bindings+push"
	}
	for rep := 0; rep < cfg.runs(); rep++ {
		b.job.Dispatches = append(b.job.Dispatches, d)
	}
	b.timing(cfg, &e)
	switch kind {
	case emptyStampEach:
		b.job.TimeEvery, e.perInterval, e.impl = 1, 1, "shader, timestamp each"
	case emptyOtherBarrier:
		b.job.GGMLBarrier, e.ownBarrier = cfg.kgBarrier, true
		e.impl = map[bool]string{true: "shader, ggml barrier", false: "shader, kernelgen barrier"}[cfg.kgBarrier]
	}
	return b.job, e, nil
}

func buildAll(cfg config, comp *vulkan.Compiler) ([]vkrun.Job, []entry, error) {
	var jobs []vkrun.Job
	var plan []entry
	add := func(j vkrun.Job, e entry, err error) error {
		if err != nil {
			return err
		}
		j.DeviceLocal, j.NoReadback = true, !e.readback
		if !e.ownBarrier {
			j.GGMLBarrier = !cfg.kgBarrier
		}
		e.name = fmt.Sprintf("%02d_%s_%s_n%d_%s", len(jobs), e.bench, e.shape, e.n, strings.NewReplacer(" ", "_", "=", "").Replace(e.impl))
		jobs, plan = append(jobs, j), append(plan, e)
		return nil
	}
	if slices.Contains(cfg.only, "chaincheck") {
		return jobs, plan, chainCheckJobs(cfg, comp, add)
	}
	if err := add(copyJob(cfg, comp)); err != nil {
		return nil, nil, err
	}
	for _, kind := range []emptyKind{emptyPlain, emptyStampEach, emptyOtherBarrier, emptyOpBBindings} {
		if err := add(emptyJob(cfg, comp, kind)); err != nil {
			return nil, nil, err
		}
	}
	// Today's schedule and the chained one, only when asked for (-only chain).
	if slices.Contains(cfg.only, "chain") {
		for _, gdn := range []bool{true, false} {
			hcs := cfg.channels
			if gdn {
				hcs = cfg.heads
			}
			for _, hc := range hcs {
				for _, n := range cfg.seqs {
					for _, split := range append([]int{0}, cfg.chainSplits...) {
						if err := add(chainJob(cfg, comp, gdn, hc, n, split, partsAll, ops.Batch{}, tiling{})); err != nil {
							return nil, nil, err
						}
					}
					// op B's one-dispatch schedule at each -batched shape
					// that takes n (tuning runs)
					for _, bt := range cfg.batches {
						if !gdn || n > bt.Seqs() {
							continue
						}
						if err := add(chainJob(cfg, comp, gdn, hc, n, 0, partsAll, bt, tiling{})); err != nil {
							return nil, nil, err
						}
					}
					// op B's block schedule at each -blocks tiling, and its
					// gather alone (tuning runs)
					for _, t := range cfg.blockTilings {
						if !gdn {
							continue
						}
						for _, parts := range []string{partsAll, partsGather} {
							if parts == partsGather && n < 2 {
								continue // the gather's guard: nothing to time
							}
							if err := add(chainJob(cfg, comp, gdn, hc, n, 0, parts, ops.Batch{}, t)); err != nil {
								return nil, nil, err
							}
						}
					}
					// where the chained schedule's cost goes (split 8): the
					// chain gather where it runs (its guard), the computes
					// from 16
					var parts []string
					if n >= 2 {
						parts = append(parts, partsGather)
					}
					if n >= 16 {
						parts = append(parts, partsCompute, partsTodayCompute)
					}
					for _, parts := range parts {
						if err := add(chainJob(cfg, comp, gdn, hc, n, 8, parts, ops.Batch{}, tiling{})); err != nil {
							return nil, nil, err
						}
					}
				}
			}
		}
	}
	for _, H := range cfg.heads {
		if !cfg.wants("gdn") {
			break
		}
		for _, n := range cfg.seqs {
			native := ir.Native("vulkan")
			for _, a := range []ir.Arith{native, ir.Portable} {
				if err := add(gdnJob(cfg, comp, a, H, n, schedule{})); err != nil {
					return nil, nil, err
				}
			}
			if err := add(gdnJob(cfg, comp, native, H, n, schedule{noGather: true})); err != nil {
				return nil, nil, err
			}
			for _, t := range cfg.tilings {
				if err := add(gdnJob(cfg, comp, native, H, n, schedule{noGather: true, tile: &t})); err != nil {
					return nil, nil, err
				}
			}
			// The table's batched shape at n, then the tuning ones: where n
			// fits. A shape split by aliasing runs with the chained compute
			// after it, in -only chain.
			var batches []ops.Batch
			if bt, ok := ops.TargetOf("vulkan").GDNBatchAt(sv, n); ok {
				batches = append(batches, bt)
			}
			for _, bt := range append(batches, cfg.batches...) {
				if n > bt.Seqs() || bt.Aliased {
					continue
				}
				if err := add(gdnJob(cfg, comp, native, H, n, schedule{batch: &bt})); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	// Op B's parts at one sequence, only when asked for (-only probe).
	if slices.Contains(cfg.only, "probe") {
		if err := probeJobs(cfg, comp, add); err != nil {
			return nil, nil, err
		}
	}
	// One layer's decode step, only when asked for (-only layer).
	for _, m := range cfg.models {
		if !slices.Contains(cfg.only, "layer") {
			break
		}
		for _, n := range cfg.seqs {
			for _, fused := range []bool{false, true} {
				if err := add(layerJob(cfg, comp, m, n, fused)); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	for _, C := range cfg.channels {
		if !cfg.wants("conv") {
			break
		}
		for _, n := range cfg.seqs {
			for _, ids := range []bool{true, false} {
				if err := add(convJob(cfg, comp, C, n, ids, 0)); err != nil {
					return nil, nil, err
				}
			}
			// The table's NS, then the tuning ones: where n fits.
			nss := cfg.convBatches
			if ns, ok := ops.TargetOf("vulkan").ConvBatch(); ok {
				nss = append([]int{ns}, nss...)
			}
			for _, ns := range nss {
				if n > ns {
					continue
				}
				if err := add(convJob(cfg, comp, C, n, true, ns)); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return jobs, plan, nil
}

// row is one reported measurement.
type row struct {
	entry
	device       string
	us, minUS    float64 // per repetition: the median block, the fastest block
	gbs, pctCopy float64
	err          string
}

func report(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	csvPath := fs.String("csv", "", "also write bench/cuda's CSV columns (bench,shape,n_seqs,impl,us,pct_copy) here")
	compare := comparisonFlag(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: go run ./bench/vulkan report [-csv FILE] [-cuda FILE] results.tar|DIR")
	}
	files, err := readResults(fs.Arg(0))
	if err != nil {
		return err
	}
	plan, ok := files[planFile]
	if !ok {
		return fmt.Errorf("%s has no %s", fs.Arg(0), planFile)
	}
	rows, err := measure(string(plan), files)
	if err != nil {
		return err
	}
	copyGBs := 0.0
	for _, r := range rows {
		if r.bench == "copy" && r.err == "" {
			copyGBs = r.gbs
		}
	}
	dev := ""
	for _, r := range rows {
		if r.device != "" {
			dev = r.device
			break
		}
	}
	fmt.Fprintf(w, "device: %s; shader copy %.0f GB/s (read+write)\n", dev, copyGBs)
	fmt.Fprintf(w, "%-9s %-7s %6s  %-26s %10s %10s %8s %7s\n", "bench", "shape", "n_seqs", "impl", "us", "min us", "GB/s", "% copy")
	var csv strings.Builder
	csv.WriteString("bench,shape,n_seqs,impl,us,pct_copy\n")
	for _, r := range rows {
		if r.err != "" {
			fmt.Fprintf(w, "%-9s %-7s %6d  %-26s %s\n", r.bench, r.shape, r.n, r.impl, r.err)
			continue
		}
		if copyGBs > 0 {
			r.pctCopy = 100 * r.gbs / copyGBs
		}
		fmt.Fprintf(w, "%-9s %-7s %6d  %-26s %10.2f %10.2f %8.1f %6.1f%%\n", r.bench, r.shape, r.n, r.impl, r.us, r.minUS, r.gbs, r.pctCopy)
		fmt.Fprintf(&csv, "%s,%s,%d,vulkan %s,%.2f,%.1f\n", r.bench, r.shape, r.n, r.impl, r.us, r.pctCopy)
	}
	if err := compare(w, rows); err != nil {
		return err
	}
	if *csvPath != "" {
		return os.WriteFile(*csvPath, []byte(csv.String()), 0o644)
	}
	return nil
}

// glueImpl is the Vulkan row that times what the glue dispatches for an
// ids op at n sequences (identity sources, state_dst the cache's window):
// the batched kernel at the table's shape for its n_seqs (ops.Target.GDNBatchFrom
// to NS; op D's 2..NS), otherwise the gather
// (left out at one sequence) and the compute dispatch.
func glueImpl(bench string, n int) string {
	native := ir.Native("vulkan").String()
	switch bench {
	case "gdn_ids":
		if bt, ok := ops.TargetOf("vulkan").GDNBatchAt(sv, n); ok && !bt.Aliased { // split by aliasing: -only chain times it
			return native + " batched " + batchName(bt)
		}
	case "conv_ids":
		if ns, ok := ops.TargetOf("vulkan").ConvBatch(); ok && n >= 2 && n <= ns {
			return native + " batched"
		}
	}
	return native
}

// measure turns each job's timestamps into a row: the median and the
// minimum over the timed blocks after the warm-up, per repetition (a
// block's time / its repetitions, as bench/cuda reports). Plans from
// before the blocks had one timed block: their median is its mean.
func measure(plan string, files map[string][]byte) ([]row, error) {
	var rows []row
	sc := bufio.NewScanner(strings.NewReader(plan))
	for sc.Scan() {
		f := strings.Split(sc.Text(), "\t")
		if len(f) < 6 || len(f) > 8 {
			return nil, fmt.Errorf("%s: malformed line %q", planFile, sc.Text())
		}
		n, _ := strconv.Atoi(f[3])
		bytes, _ := strconv.ParseFloat(f[5], 64)
		per := 1 // plans before the two-block timing: a timestamp per repetition
		if len(f) >= 7 {
			if per, _ = strconv.Atoi(f[6]); per < 1 {
				return nil, fmt.Errorf("%s: malformed line %q", planFile, sc.Text())
			}
		}
		r := row{entry: entry{name: f[0], bench: f[1], shape: f[2], n: n, impl: f[4], bytes: bytes, perInterval: per}}
		out, ok := files[r.name+".out"]
		if !ok {
			r.err = "no result: " + firstLine(string(files[r.name+".log"]))
			rows = append(rows, r)
			continue
		}
		res, err := vkrun.DecodeOutput(out)
		if err != nil || len(res.Times) < 2 {
			r.err = fmt.Sprintf("bad result (%v, %d times)", err, len(res.Times))
			rows = append(rows, r)
			continue
		}
		r.device = res.Device
		if len(f) == 8 {
			// A series: the job timed each part in turn, each with its
			// warm-up interval; a row per part.
			series := strings.Split(f[7], ",")
			per := len(res.Times) / len(series)
			if per < 2 || per*len(series) != len(res.Times) {
				r.err = fmt.Sprintf("bad result (%d times for %d parts)", len(res.Times), len(series))
				rows = append(rows, r)
				continue
			}
			for i, part := range series {
				pr := r
				pr.impl = part + " " + r.impl
				pr.us, pr.minUS = timedMedian(res.Times[i*per:(i+1)*per], r.perInterval)
				pr.gbs = pr.bytes / (pr.us * 1e3)
				rows = append(rows, pr)
			}
			continue
		}
		r.us, r.minUS = timedMedian(res.Times, r.perInterval)
		r.gbs = r.bytes / (r.us * 1e3)
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// timedMedian is the median and the minimum of intervals after the first
// (the warm-up), per repetition (per repetitions an interval holds).
func timedMedian(times []float64, per int) (med, least float64) {
	timed := make([]float64, 0, len(times)-1)
	for _, t := range times[1:] {
		timed = append(timed, t/float64(per))
	}
	slices.Sort(timed)
	return median(timed), timed[0]
}

// median of sorted xs.
func median(xs []float64) float64 {
	m := len(xs) / 2
	if len(xs)%2 == 0 {
		return (xs[m-1] + xs[m]) / 2
	}
	return xs[m]
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "(no log)"
	}
	return s
}

// readResults reads run.sh's results.tar, or a directory of the same files.
func readResults(path string) (map[string][]byte, error) {
	files := map[string][]byte{}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		entries, err := os.ReadDir(path)
		if err != nil {
			return nil, err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				b, err := os.ReadFile(filepath.Join(path, e.Name()))
				if err != nil {
					return nil, err
				}
				files[e.Name()] = b
			}
		}
		return files, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[filepath.Base(h.Name)] = b
	}
	return files, nil
}
