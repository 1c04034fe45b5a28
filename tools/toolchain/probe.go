package toolchain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
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
	// icdDirs are where the Vulkan loader looks for driver manifests when
	// no environment variable overrides them.
	icdDirs = []string{"/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"}
)

// Result is what Probe learned about a tool.
type Result struct {
	Tool Tool
	// Found reports whether a usable executable (or, for lavapipe, a driver
	// manifest) exists.
	Found bool
	// Path is the executable, or lavapipe's manifest.
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
	switch t.Name {
	case "lavapipe":
		return probeLavapipe(t)
	case "xcrun-metal":
		if goos != "darwin" {
			return Result{Tool: t, Err: fmt.Errorf("%s is macOS-only (this is %s)", t.Name, goos)}
		}
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
		version := parseVersion(t.Name, string(stdout))
		if version == "" {
			version = parseVersion(t.Name, string(stderr))
		}
		if reason := reject(t, c, path, version, runErr); reason != "" {
			rejected = append(rejected, reason)
			continue
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

var clangMajorRE = regexp.MustCompile(`clang version (\d+)`)

// reject says why a candidate that exists on PATH does not count, or "".
func reject(t Tool, candidate, path, version string, runErr error) string {
	switch {
	case t.Name == "clang++-22" && candidate == "clang++":
		// Unversioned clang++ is whatever the distribution ships; kernelgen
		// relies on clang 22's CUDA and C++ support.
		m := clangMajorRE.FindStringSubmatch(version)
		if m == nil {
			return fmt.Sprintf("%s: cannot read its version %q", path, version)
		}
		if major, _ := strconv.Atoi(m[1]); major < 22 {
			return fmt.Sprintf("%s is clang %d, need 22 or newer", path, major)
		}
	case t.Name == "xcrun-metal" && runErr != nil:
		// xcrun exists on every Mac; the metal compiler behind it may not.
		return fmt.Sprintf("%s cannot run metal: %v", path, runErr)
	}
	return ""
}

// versionMarkers name the line holding the version for tools whose first
// line with a digit is something else (a copyright, a banner).
var versionMarkers = map[string]string{
	"nvcc":       "release",
	"acpp":       "AdaptiveCpp version",
	"vulkaninfo": "Vulkan Instance Version",
}

// parseVersion picks the version line out of a tool's output: the marked
// line when the tool has a marker, else the first non-empty line with a digit.
func parseVersion(name, out string) string {
	lines := strings.Split(out, "\n")
	if marker, ok := versionMarkers[name]; ok {
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

// ProbeAll probes every known tool concurrently; the results are in Known()
// order.
func ProbeAll(ctx context.Context) []Result {
	tools := Known()
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

// probeLavapipe finds Mesa's lavapipe through its ICD manifest, since the
// driver is a shared library loaded by the Vulkan loader, not a program.
func probeLavapipe(t Tool) Result {
	dirs, manifests := lavapipeManifests()
	if len(manifests) == 0 {
		return Result{Tool: t, Err: fmt.Errorf("no lavapipe ICD manifest (lvp_icd*.json) in %s", strings.Join(dirs, ", "))}
	}
	var firstErr error
	for _, m := range manifests {
		v, err := manifestAPIVersion(m)
		if err == nil {
			return Result{Tool: t, Found: true, Path: m, Version: v}
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	// The manifest exists, so the driver is installed, but broken.
	return Result{Tool: t, Found: true, Path: manifests[0], Err: firstErr}
}

// lavapipeManifests returns where it looked and the lavapipe manifests
// found there. Like the Vulkan loader, VK_DRIVER_FILES (or the older
// VK_ICD_FILENAMES) replaces the standard directories — a manifest there
// would not be loaded — and VK_ADD_DRIVER_FILES adds to them. Entries may
// be manifest files or directories.
func lavapipeManifests() (searched, manifests []string) {
	entries := icdDirs
	for _, env := range []string{"VK_DRIVER_FILES", "VK_ICD_FILENAMES"} {
		if v := os.Getenv(env); v != "" {
			entries = filepath.SplitList(v)
			break
		}
	}
	if v := os.Getenv("VK_ADD_DRIVER_FILES"); v != "" {
		entries = append(filepath.SplitList(v), entries...)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		if e == "" {
			continue
		}
		searched = append(searched, e)
		fi, err := os.Stat(e)
		if err != nil {
			continue
		}
		var found []string
		if fi.IsDir() {
			found, _ = filepath.Glob(filepath.Join(e, "lvp_icd*.json"))
			sort.Strings(found)
		} else if ok, _ := filepath.Match("lvp_icd*.json", filepath.Base(e)); ok {
			found = []string{e}
		}
		for _, f := range found {
			if !seen[f] {
				seen[f] = true
				manifests = append(manifests, f)
			}
		}
	}
	return searched, manifests
}

// manifestAPIVersion reads the Vulkan API version an ICD manifest declares.
func manifestAPIVersion(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var m struct {
		ICD struct {
			APIVersion string `json:"api_version"`
		} `json:"ICD"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if m.ICD.APIVersion == "" {
		return "", fmt.Errorf("%s: no ICD.api_version", path)
	}
	return m.ICD.APIVersion, nil
}
