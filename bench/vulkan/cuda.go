package main

// The comparison with bench/cuda's CSV: CUDA's tiling and its flag live
// here, in a file the CUDA backend owns (internal/backend/cuda).

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/kernelgen/kernelgen/ops"
)

// comparisonFlag is report's -cuda, bench/cuda's CSV to print beside; it
// returns what report runs on its rows once the flags are parsed (nothing
// without the flag).
func comparisonFlag(fs *flag.FlagSet) func(w io.Writer, rows []row) error {
	path := fs.String("cuda", "", "bench/cuda's kg_bench CSV from the same machine: also print the glue's Vulkan dispatch beside CUDA's, as markdown")
	return func(w io.Writer, rows []row) error {
		if *path == "" {
			return nil
		}
		data, err := os.ReadFile(*path)
		if err != nil {
			return err
		}
		if err := beside(w, rows, string(data)); err != nil {
			return fmt.Errorf("%s: %w", *path, err)
		}
		return nil
	}
}

// beside prints, for ops B and D, the glue's Vulkan dispatch beside the
// generated CUDA kernels from bench/cuda's CSV (same shapes): CUDA launched
// with programmatic dependent launch, replayed from a CUDA graph (ggml-cuda's
// decode path) and in plain stream order, and Vulkan's speed as CUDA's time
// over Vulkan's. Shapes either side lacks are left out.
func beside(w io.Writer, rows []row, cudaCSV string) error {
	type key struct {
		bench, shape string
		n            int
		impl         string
	}
	cr := csv.NewReader(strings.NewReader(cudaCSV))
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return err
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != "bench,shape,n_seqs,impl,us,pct_copy" {
		return errors.New("not a kg_bench CSV (header bench,shape,n_seqs,impl,us,pct_copy)")
	}
	cuda := map[key]float64{}
	for i, f := range recs[1:] {
		if len(f) < 6 {
			return fmt.Errorf("line %d: %d fields, want 6", i+2, len(f))
		}
		// kg_bench before 2026-11-23 wrote impls such as "NW=16,CPW=4"
		// unquoted: the impl is everything between n_seqs and us.
		impl := strings.Join(f[3:len(f)-2], ",")
		n, err1 := strconv.Atoi(f[2])
		us, err2 := strconv.ParseFloat(f[len(f)-2], 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("line %d: %q", i+2, strings.Join(f, ","))
		}
		cuda[key{f[0], f[1], n, impl}] = us
	}
	// kg_bench's rows of what the CUDA glue dispatches at n: PDL, graph,
	// stream order.
	impls := func(bench string, n int) ([3]string, bool) {
		switch bench {
		case "gdn_ids":
			nw, cpw := ops.TargetOf("cuda").GDNTiling(sv)
			if snw, scpw, maxSeqs, ok := ops.TargetOf("cuda").GDNSmallTiling(sv); ok && n <= maxSeqs {
				nw, cpw = snw, scpw
			}
			return [3]string{fmt.Sprintf("generated NW=%d,CPW=%d", nw, cpw), fmt.Sprintf("generated %d,%d graph", nw, cpw), fmt.Sprintf("generated %d,%d serial", nw, cpw)}, true
		case "conv_ids":
			return [3]string{"generated", "generated graph", ""}, true
		}
		return [3]string{}, false
	}
	cell := func(us float64) string {
		if us == 0 || math.IsNaN(us) {
			return "-"
		}
		return fmt.Sprintf("%.2f", us)
	}
	speed := func(cu, vk float64) string {
		if cu == 0 || math.IsNaN(cu) {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*cu/vk)
	}
	fmt.Fprintf(w, "\n| op | shape | n_seqs | Vulkan (glue) us | CUDA PDL us | CUDA graph us | CUDA serial us | vs PDL | vs graph | vs serial |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		names, ok := impls(r.bench, r.n)
		if !ok || r.err != "" || r.impl != glueImpl(r.bench, r.n) {
			continue
		}
		var t [3]float64
		for i, impl := range names {
			if impl != "" {
				t[i] = cuda[key{r.bench, r.shape, r.n, impl}]
			}
		}
		if t[0] == 0 && t[1] == 0 {
			continue
		}
		op := map[string]string{"gdn_ids": "B", "conv_ids": "D"}[r.bench]
		fmt.Fprintf(w, "| %s | %s | %d | %.2f | %s | %s | %s | %s | %s | %s |\n", op, r.shape, r.n, r.us,
			cell(t[0]), cell(t[1]), cell(t[2]), speed(t[0], r.us), speed(t[1], r.us), speed(t[2], r.us))
	}
	return nil
}
