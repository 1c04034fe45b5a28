package toolchain

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Seams for tests.
var (
	lookPath     = exec.LookPath
	goos         = runtime.GOOS
	probeTimeout = 10 * time.Second
)

// Result is what Probe learned about a tool.
type Result struct {
	Tool Tool
	// Found reports whether a usable executable (or, for a tool found its
	// own way, a driver manifest) exists.
	Found bool
	// Path is the executable, or what Tool.Find found.
	Path string
	// Version is one line describing the version, "" when none was printed.
	Version string
	// Err says why the tool was not found, or what went wrong reading the
	// version of one that was.
	Err error
}

// Probe finds t and reads its version, within ctx and at most
// probeTimeout (10 s) in total.
func Probe(ctx context.Context, t Tool) Result {
	if t.Find != nil {
		return t.Find(t)
	}
	if t.OS != "" && goos != t.OS {
		return Result{Tool: t, Err: fmt.Errorf("%s is %s-only (this is %s)", t.Name, osName(t.OS), goos)}
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()

	var rejected []string
	for _, c := range t.Candidates {
		path, err := lookPath(c)
		if err != nil {
			continue
		}
		stdout, stderr, runErr := run(ctx, path, t.VersionArgs, nil, false)
		version := parseVersion(t.VersionMarker, string(stdout))
		if version == "" {
			version = parseVersion(t.VersionMarker, string(stderr))
		}
		if t.Reject != nil {
			if reason := t.Reject(c, path, version, runErr); reason != "" {
				rejected = append(rejected, reason)
				continue
			}
		}
		return Result{Tool: t, Found: true, Path: path, Version: version, Err: runErr}
	}
	msg := fmt.Sprintf("%s not found on PATH", strings.Join(t.Candidates, " or "))
	if len(t.Candidates) == 0 {
		msg = fmt.Sprintf("%s has no executable to look for", t.Name)
	}
	if len(rejected) > 0 {
		msg += " (" + strings.Join(rejected, "; ") + ")"
	}
	return Result{Tool: t, Err: errors.New(msg)}
}

// osName is how an error names a GOOS.
func osName(goos string) string {
	if goos == "darwin" {
		return "macOS"
	}
	return goos
}

var clangMajorRE = regexp.MustCompile(`clang version (\d+)`)

// rejectOldClang rejects an unversioned clang++ older than 22: it is
// whatever the distribution ships, and kernelgen relies on clang 22's CUDA
// and C++ support.
func rejectOldClang(candidate, path, version string, _ error) string {
	if candidate != "clang++" {
		return ""
	}
	m := clangMajorRE.FindStringSubmatch(version)
	if m == nil {
		return fmt.Sprintf("%s: cannot read its version %q", path, version)
	}
	if major, _ := strconv.Atoi(m[1]); major < 22 {
		return fmt.Sprintf("%s is clang %d, need 22 or newer", path, major)
	}
	return ""
}

// parseVersion picks the version line out of a tool's output: the line
// holding marker when it is set and found, else the first non-empty line
// with a digit.
func parseVersion(marker, out string) string {
	lines := strings.Split(out, "\n")
	if marker != "" {
		for _, l := range lines {
			if strings.Contains(l, marker) {
				return strings.TrimSpace(l)
			}
		}
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if strings.ContainsAny(l, "0123456789") {
			return l
		}
	}
	return ""
}

// ProbeAll probes the tools concurrently; the results are in their order.
func ProbeAll(ctx context.Context, tools []Tool) []Result {
	results := make([]Result, len(tools))
	var wg sync.WaitGroup
	for i, t := range tools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = Probe(ctx, t)
		}()
	}
	wg.Wait()
	return results
}
