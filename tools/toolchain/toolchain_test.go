package toolchain

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeDir puts an empty temporary directory alone on PATH and returns it;
// fake tools written there are the only programs Probe can find.
func fakeDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("fake tools are shell scripts")
	}
	dir := t.TempDir()
	t.Setenv("PATH", dir)
	return dir
}

// fake writes an executable shell script named name into dir. Only shell
// builtins are on PATH inside it.
func fake(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// sleepCmd resolves sleep before fakeDir hides it from PATH.
func sleepCmd(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep command")
	}
	return p
}

// everyTool is the shared tools and each backend's, as doctor lists them.
func everyTool() []Tool {
	all := Known()
	all = append(all, XcrunMetal)
	all = append(all, VulkanTools...)
	return append(all, ICPX, ACPP, NVCC, Clinfo)
}

func mustLookup(t *testing.T, name string) Tool {
	t.Helper()
	for _, tool := range everyTool() {
		if tool.Name == name {
			return tool
		}
	}
	t.Fatalf("no tool %q", name)
	return Tool{}
}

func TestKnown(t *testing.T) {
	want := []string{"go", "just", "g++", "clang++-22", "xcrun-metal", "glslangValidator", "spirv-val",
		"vulkaninfo", "lavapipe", "icpx", "acpp", "nvcc", "clinfo"}
	var got []string
	for _, tool := range everyTool() {
		got = append(got, tool.Name)
		if tool.Purpose == "" || tool.Install == "" {
			t.Errorf("%s: empty Purpose or Install", tool.Name)
		}
		if tool.Required != RequiredCI && tool.Required != Optional {
			t.Errorf("%s: Required = %q", tool.Name, tool.Required)
		}
		if tool.Name != "lavapipe" && (len(tool.Candidates) == 0 || len(tool.VersionArgs) == 0) {
			t.Errorf("%s: no candidates or version args", tool.Name)
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tool names = %v, want %v", got, want)
	}
	for _, tool := range Known() {
		l, err := Lookup(tool.Name)
		if err != nil || l.Name != tool.Name || !reflect.DeepEqual(l.Candidates, tool.Candidates) {
			t.Errorf("Lookup(%q) = %+v, %v; want %+v", tool.Name, l, err, tool)
		}
	}

	// Callers cannot corrupt the table.
	Known()[3].Candidates[0] = "x"
	if mustLookup(t, "clang++-22").Candidates[0] != "clang++-22" {
		t.Error("Known() shares its slices with the table")
	}

	_, err := Lookup("gcc")
	if err == nil || !strings.Contains(err.Error(), `"gcc"`) || !strings.Contains(err.Error(), "go, just, g++, clang++-22") {
		t.Errorf("Lookup(gcc) error = %v; want it to name the tool and list valid names", err)
	}

	for name, pkg := range map[string]string{
		"glslangValidator": "apt-get install -y glslang-tools",
		"spirv-val":        "apt-get install -y spirv-tools",
		"clang++-22":       "apt-get install -y clang-22",
		"g++":              "apt-get install -y g++",
		"vulkaninfo":       "apt-get install -y vulkan-tools",
		"lavapipe":         "apt-get install -y mesa-vulkan-drivers",
		"just":             "npm install -g rust-just",
	} {
		if got := mustLookup(t, name).Install; got != pkg {
			t.Errorf("%s: Install = %q, want %q", name, got, pkg)
		}
	}
}

func TestProbeFound(t *testing.T) {
	dir := fakeDir(t)
	path := fake(t, dir, "glslangValidator", `
[ "$1" = --version ] || exit 9
echo "Glslang Version: 11:12.0.0"
echo "ESSL Version: OpenGL ES GLSL 3.20 glslang Khronos. 12.0.0"`)
	r := Probe(context.Background(), mustLookup(t, "glslangValidator"))
	if !r.Found || r.Err != nil || r.Path != path || r.Version != "Glslang Version: 11:12.0.0" {
		t.Errorf("Probe = %+v", r)
	}
	if r, err := Require(context.Background(), mustLookup(t, "glslangValidator")); err != nil || r.Path != path {
		t.Errorf("Require = %+v, %v", r, err)
	}
}

func TestProbeNotFound(t *testing.T) {
	fakeDir(t)
	r := Probe(context.Background(), mustLookup(t, "spirv-val"))
	if r.Found || r.Err == nil || !strings.Contains(r.Err.Error(), "spirv-val not found on PATH") {
		t.Errorf("Probe = %+v", r)
	}

	_, err := Require(context.Background(), mustLookup(t, "spirv-val"))
	var missing *MissingError
	if !errors.As(err, &missing) || missing.Tool.Name != "spirv-val" {
		t.Fatalf("Require error = %#v; want *MissingError", err)
	}
	for _, want := range []string{"spirv-val", "validates the SPIR-V", "not found on PATH", "install: apt-get install -y spirv-tools"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Require error %q lacks %q", err, want)
		}
	}
}

func TestParseVersion(t *testing.T) {
	for _, c := range []struct{ name, out, want string }{
		{"g++", "g++ (Debian 12.2.0-14+deb12u1) 12.2.0\nCopyright (C) 2022 Free Software Foundation, Inc.\n", "g++ (Debian 12.2.0-14+deb12u1) 12.2.0"},
		{"go", "go version go1.26.8 linux/amd64\n", "go version go1.26.8 linux/amd64"},
		{"spirv-val", "\n  \nSPIRV-Tools v2023.1 unknown hash\nTargets:\n", "SPIRV-Tools v2023.1 unknown hash"},
		{"just", "just 1.40.0", "just 1.40.0"},
		{"just", "no digits here\n", ""},
		{"nvcc", "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2024 NVIDIA Corporation\nBuilt on Thu_Sep_12_02:18:05_PDT_2024\nCuda compilation tools, release 12.6, V12.6.77\nBuild cuda_12.6.r12.6/compiler.34841621_0\n",
			"Cuda compilation tools, release 12.6, V12.6.77"},
		{"acpp", "acpp [AdaptiveCpp compilation driver], Copyright (C) 2018-2024 Aksel Alpay and the AdaptiveCpp project\n  AdaptiveCpp version: 24.06.0+git.1\n  Installation root: /opt/acpp\n",
			"AdaptiveCpp version: 24.06.0+git.1"},
		{"vulkaninfo", "==========\nVULKANINFO\n==========\n\nVulkan Instance Version: 1.3.239\n\n\nInstance Extensions: count = 20\n", "Vulkan Instance Version: 1.3.239"},
		// Without the marker line, the generic rule still finds something.
		{"nvcc", "nvcc 1.0\n", "nvcc 1.0"},
		{"xcrun-metal", "Apple metal version 32023.404 (metalfe-32023.404)\nTarget: air64-apple-darwin24.0.0\n", "Apple metal version 32023.404 (metalfe-32023.404)"},
	} {
		if got := parseVersion(mustLookup(t, c.name).VersionMarker, c.out); got != c.want {
			t.Errorf("parseVersion(%s, %q) = %q, want %q", c.name, c.out, got, c.want)
		}
	}
}

func TestProbeVersionOnStderr(t *testing.T) {
	dir := fakeDir(t)
	fake(t, dir, "icpx", `echo "Intel(R) oneAPI DPC++/C++ Compiler 2025.0.0" >&2`)
	r := Probe(context.Background(), mustLookup(t, "icpx"))
	if !r.Found || r.Err != nil || r.Version != "Intel(R) oneAPI DPC++/C++ Compiler 2025.0.0" {
		t.Errorf("Probe = %+v", r)
	}
}

// acpp forwards --version to its clang; AdaptiveCpp's own version comes
// from --acpp-version.
func TestProbeACPPVersion(t *testing.T) {
	dir := fakeDir(t)
	want := fake(t, dir, "acpp", `case "$1" in
--acpp-version) echo "acpp [AdaptiveCpp compilation driver], Copyright (C) 2018-2024 Aksel Alpay and the AdaptiveCpp project"
  echo "  AdaptiveCpp version: 24.10.0+git.49544a48.20241009.branch.develop"
  echo "  Installation root: /opt/acpp";;
*) echo "Debian clang version 16.0.6 (15~deb12u1)";;
esac`)
	r := Probe(context.Background(), mustLookup(t, "acpp"))
	if !r.Found || r.Err != nil || r.Path != want || r.Version != "AdaptiveCpp version: 24.10.0+git.49544a48.20241009.branch.develop" {
		t.Errorf("Probe = %+v", r)
	}
}

func TestProbeFailingVersion(t *testing.T) {
	dir := fakeDir(t)
	fake(t, dir, "vulkaninfo", `echo "ERROR: Cannot create Vulkan instance." >&2; exit 1`)
	r := Probe(context.Background(), mustLookup(t, "vulkaninfo"))
	var re *RunError
	if !r.Found || !errors.As(r.Err, &re) || re.ExitCode != 1 {
		t.Fatalf("Probe = %+v; want found with a *RunError", r)
	}
	_, err := Require(context.Background(), mustLookup(t, "vulkaninfo"))
	var missing *MissingError
	if err == nil || errors.As(err, &missing) || !strings.Contains(err.Error(), "Cannot create Vulkan instance") {
		t.Errorf("Require error = %v; want a broken-tool error", err)
	}
}

func TestProbeClang(t *testing.T) {
	clang := func(major string) string {
		return `echo "Debian clang version ` + major + `.1.8 (1~deb12u1)"; echo "Target: x86_64-pc-linux-gnu"`
	}
	tool := mustLookup(t, "clang++-22")

	t.Run("versioned", func(t *testing.T) {
		dir := fakeDir(t)
		want := fake(t, dir, "clang++-22", clang("22"))
		fake(t, dir, "clang++", clang("23"))
		if r := Probe(context.Background(), tool); !r.Found || r.Path != want || r.Version != "Debian clang version 22.1.8 (1~deb12u1)" {
			t.Errorf("Probe = %+v; want %s", r, want)
		}
	})
	for _, major := range []string{"22", "23", "100"} {
		t.Run("plain"+major, func(t *testing.T) {
			dir := fakeDir(t)
			want := fake(t, dir, "clang++", clang(major))
			if r := Probe(context.Background(), tool); !r.Found || r.Path != want || r.Err != nil {
				t.Errorf("Probe = %+v; want %s", r, want)
			}
		})
	}
	t.Run("tooOld", func(t *testing.T) {
		dir := fakeDir(t)
		fake(t, dir, "clang++", clang("19"))
		r := Probe(context.Background(), tool)
		if r.Found || r.Err == nil || !strings.Contains(r.Err.Error(), "is clang 19, need 22 or newer") {
			t.Errorf("Probe = %+v", r)
		}
		_, err := Require(context.Background(), mustLookup(t, "clang++-22"))
		if err == nil || !strings.Contains(err.Error(), "apt-get install -y clang-22") {
			t.Errorf("Require error = %v", err)
		}
	})
	t.Run("unparsable", func(t *testing.T) {
		dir := fakeDir(t)
		fake(t, dir, "clang++", `echo "Homebrew something 1.0"`)
		if r := Probe(context.Background(), tool); r.Found || !strings.Contains(r.Err.Error(), "cannot read its version") {
			t.Errorf("Probe = %+v", r)
		}
	})
}

func TestProbeXcrunMetal(t *testing.T) {
	tool := mustLookup(t, "xcrun-metal")
	setGOOS := func(t *testing.T, s string) {
		old := goos
		goos = s
		t.Cleanup(func() { goos = old })
	}

	t.Run("notMac", func(t *testing.T) {
		dir := fakeDir(t)
		fake(t, dir, "xcrun", `echo "Apple metal version 1.0"`)
		setGOOS(t, "linux")
		r := Probe(context.Background(), tool)
		if r.Found || r.Err == nil || !strings.Contains(r.Err.Error(), "macOS-only") {
			t.Errorf("Probe = %+v", r)
		}
	})
	t.Run("mac", func(t *testing.T) {
		dir := fakeDir(t)
		want := fake(t, dir, "xcrun", `
[ "$1 $2" = "metal --version" ] || exit 9
echo "Apple metal version 32023.404 (metalfe-32023.404)"
echo "Target: air64-apple-darwin24.0.0"`)
		setGOOS(t, "darwin")
		r := Probe(context.Background(), tool)
		if !r.Found || r.Path != want || r.Version != "Apple metal version 32023.404 (metalfe-32023.404)" {
			t.Errorf("Probe = %+v", r)
		}
	})
	t.Run("macNoMetal", func(t *testing.T) {
		dir := fakeDir(t)
		fake(t, dir, "xcrun", `echo 'xcrun: error: unable to find utility "metal", not a developer tool or in PATH' >&2; exit 72`)
		setGOOS(t, "darwin")
		r := Probe(context.Background(), tool)
		if r.Found || r.Err == nil || !strings.Contains(r.Err.Error(), "unable to find utility") {
			t.Errorf("Probe = %+v", r)
		}
	})
}

func TestRunOutputAndEnv(t *testing.T) {
	dir := fakeDir(t)
	t.Setenv("LC_ALL", "en_US.UTF-8")
	tool := fake(t, dir, "echoer", `
echo "LC_ALL=$LC_ALL args=$*"
while read -r line; do echo "in: $line"; done`)
	out, err := Run(context.Background(), tool, []string{"a", "b c"}, []byte("x\ny\n"), true)
	if err != nil {
		t.Fatal(err)
	}
	if want := "LC_ALL=C args=a b c\nin: x\nin: y\n"; string(out) != want {
		t.Errorf("stdout = %q, want %q", out, want)
	}
}

func TestRunExitStatus(t *testing.T) {
	dir := fakeDir(t)
	tool := fake(t, dir, "compiler", `echo partial; echo "  error: bad thing in x.comp  " >&2; exit 3`)
	out, err := Run(context.Background(), tool, []string{"-V", "x y.comp"}, nil, false)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("err = %#v; want *RunError", err)
	}
	if re.ExitCode != 3 || re.Stderr != "error: bad thing in x.comp" || re.Path != tool {
		t.Errorf("RunError = %+v", re)
	}
	if want := "compiler -V \"x y.comp\": exit status 3; stderr:\nerror: bad thing in x.comp"; err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}
	if string(out) != "partial\n" {
		t.Errorf("stdout = %q; want what was written before the failure", out)
	}
}

func TestRunNotStartable(t *testing.T) {
	dir := fakeDir(t)
	_, err := Run(context.Background(), filepath.Join(dir, "absent"), []string{"-x"}, nil, false)
	var re *RunError
	if !errors.As(err, &re) || re.ExitCode != -1 || !strings.HasPrefix(err.Error(), "absent -x: ") {
		t.Errorf("err = %v", err)
	}
}

func TestRunStrictStderr(t *testing.T) {
	dir := fakeDir(t)
	warn := fake(t, dir, "warner", `echo out; echo "warning: implicit conversion" >&2`)
	blank := fake(t, dir, "blank", `echo out; echo "  " >&2`)

	if out, err := Run(context.Background(), warn, nil, nil, false); err != nil || string(out) != "out\n" {
		t.Errorf("lenient: %q, %v", out, err)
	}
	out, err := Run(context.Background(), warn, []string{"--check"}, nil, true)
	var re *RunError
	if !errors.Is(err, ErrStderr) || !errors.As(err, &re) || re.ExitCode != 0 {
		t.Fatalf("strict: err = %#v", err)
	}
	if want := "warner --check: exit status 0 but wrote to stderr; stderr:\nwarning: implicit conversion"; err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}
	if string(out) != "out\n" {
		t.Errorf("strict: stdout = %q", out)
	}
	if _, err := Run(context.Background(), blank, nil, nil, true); err != nil {
		t.Errorf("blank stderr under strict: %v", err)
	}
}

func TestRunStderrCapped(t *testing.T) {
	dir := fakeDir(t)
	tool := fake(t, dir, "noisy", `
i=0
while [ $i -lt 1000 ]; do echo "error $i: é something went wrong" >&2; i=$((i+1)); done
exit 1`)
	_, err := Run(context.Background(), tool, nil, nil, false)
	var re *RunError
	if !errors.As(err, &re) {
		t.Fatalf("err = %#v", err)
	}
	if len(re.Stderr) > stderrCap+100 || !strings.HasPrefix(re.Stderr, "error 0: ") || !strings.Contains(re.Stderr, "more bytes)") {
		t.Errorf("stderr not capped: %d bytes, tail %q", len(re.Stderr), re.Stderr[max(0, len(re.Stderr)-80):])
	}
	if len(err.Error()) > stderrCap+200 {
		t.Errorf("message is %d bytes", len(err.Error()))
	}
}

func TestCapWriterRuneBoundary(t *testing.T) {
	w := &capWriter{limit: 4}
	w.Write([]byte("abcé!")) // é straddles the cap
	if got := w.text(); got != "abc\n... (3 more bytes)" {
		t.Errorf("text = %q", got)
	}
}

func TestRunTimeout(t *testing.T) {
	sleep := sleepCmd(t)
	dir := fakeDir(t)
	// Not exec'd: the sleep child keeps the pipes open after sh is killed,
	// as a compiler driver's subprocess would.
	tool := fake(t, dir, "slow", `echo started >&2; '`+sleep+`' 30`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := Run(ctx, tool, []string{"-O3"}, nil, false)
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Run took %v after a 200ms deadline", elapsed)
	}
	var re *RunError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &re) || re.ExitCode != -1 {
		t.Fatalf("err = %#v", err)
	}
	if want := "slow -O3: timed out, killed; stderr:\nstarted"; err.Error() != want {
		t.Errorf("message = %q, want %q", err, want)
	}
}

func TestProbeTimeout(t *testing.T) {
	sleep := sleepCmd(t)
	dir := fakeDir(t)
	fake(t, dir, "nvcc", `exec '`+sleep+`' 30`)
	old := probeTimeout
	probeTimeout = 200 * time.Millisecond
	t.Cleanup(func() { probeTimeout = old })
	r := Probe(context.Background(), mustLookup(t, "nvcc"))
	if !r.Found || !errors.Is(r.Err, context.DeadlineExceeded) {
		t.Errorf("Probe = %+v", r)
	}
}

func writeManifest(t *testing.T, dir, name, apiVersion string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	body := `{"file_format_version": "1.0.0", "ICD": {"library_path": "libvulkan_lvp.so", "api_version": "` + apiVersion + `"}}`
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProbeLavapipe(t *testing.T) {
	tool := mustLookup(t, "lavapipe")
	setDirs := func(t *testing.T, dirs ...string) {
		old := icdDirs
		icdDirs = dirs
		t.Cleanup(func() { icdDirs = old })
	}
	clearEnv := func(t *testing.T) {
		for _, v := range []string{"VK_DRIVER_FILES", "VK_ICD_FILENAMES", "VK_ADD_DRIVER_FILES"} {
			t.Setenv(v, "")
		}
	}

	t.Run("driverFilesDir", func(t *testing.T) {
		clearEnv(t)
		dir := t.TempDir()
		writeManifest(t, dir, "radeon_icd.x86_64.json", "1.4.0")
		want := writeManifest(t, dir, "lvp_icd.x86_64.json", "1.3.255")
		t.Setenv("VK_DRIVER_FILES", filepath.Join(t.TempDir(), "missing")+string(filepath.ListSeparator)+dir)
		r := Probe(context.Background(), tool)
		if !r.Found || r.Err != nil || r.Path != want || r.Version != "1.3.255" {
			t.Errorf("Probe = %+v", r)
		}
	})
	t.Run("icdFilenamesFile", func(t *testing.T) {
		clearEnv(t)
		want := writeManifest(t, t.TempDir(), "lvp_icd.aarch64.json", "1.1.230")
		t.Setenv("VK_ICD_FILENAMES", want)
		if r := Probe(context.Background(), tool); !r.Found || r.Path != want || r.Version != "1.1.230" {
			t.Errorf("Probe = %+v", r)
		}
	})
	t.Run("overrideHidesStandardDirs", func(t *testing.T) {
		clearEnv(t)
		std := t.TempDir()
		writeManifest(t, std, "lvp_icd.x86_64.json", "1.3.0")
		setDirs(t, std)
		empty := t.TempDir()
		t.Setenv("VK_DRIVER_FILES", empty)
		r := Probe(context.Background(), tool)
		if r.Found || r.Err == nil || !strings.Contains(r.Err.Error(), empty) {
			t.Errorf("Probe = %+v", r)
		}
		_, err := Require(context.Background(), tool)
		if err == nil || !strings.Contains(err.Error(), "apt-get install -y mesa-vulkan-drivers") {
			t.Errorf("Require error = %v", err)
		}
	})
	t.Run("standardDirs", func(t *testing.T) {
		clearEnv(t)
		std := t.TempDir()
		want := writeManifest(t, std, "lvp_icd.x86_64.json", "1.3.0")
		setDirs(t, filepath.Join(std, "absent"), std)
		if r := Probe(context.Background(), tool); !r.Found || r.Path != want || r.Version != "1.3.0" {
			t.Errorf("Probe = %+v", r)
		}
	})
	t.Run("addDriverFiles", func(t *testing.T) {
		clearEnv(t)
		setDirs(t, t.TempDir())
		dir := t.TempDir()
		want := writeManifest(t, dir, "lvp_icd.json", "1.2.0")
		t.Setenv("VK_ADD_DRIVER_FILES", dir)
		if r := Probe(context.Background(), tool); !r.Found || r.Path != want {
			t.Errorf("Probe = %+v", r)
		}
	})
	t.Run("brokenManifest", func(t *testing.T) {
		clearEnv(t)
		dir := t.TempDir()
		path := filepath.Join(dir, "lvp_icd.x86_64.json")
		if err := os.WriteFile(path, []byte(`{"ICD": {`), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("VK_DRIVER_FILES", dir)
		r := Probe(context.Background(), tool)
		if !r.Found || r.Path != path || r.Err == nil || r.Version != "" {
			t.Errorf("Probe = %+v", r)
		}
	})
}

func TestProbeAllOrder(t *testing.T) {
	dir := fakeDir(t)
	fake(t, dir, "just", `echo "just 1.40.0"`)
	fake(t, dir, "g++", `echo "g++ (Fake) 12.2.0"`)
	t.Setenv("VK_DRIVER_FILES", t.TempDir())
	tools := everyTool()
	results := ProbeAll(context.Background(), tools)
	if len(results) != len(tools) {
		t.Fatalf("%d results for %d tools", len(results), len(tools))
	}
	for i, r := range results {
		if r.Tool.Name != tools[i].Name {
			t.Errorf("result %d is %s, want %s", i, r.Tool.Name, tools[i].Name)
		}
		wantFound := r.Tool.Name == "just" || r.Tool.Name == "g++"
		if r.Found != wantFound || (!r.Found && r.Err == nil) {
			t.Errorf("%s: %+v", r.Tool.Name, r)
		}
	}
}

// TestRealTools probes the host's actual g++ and go, checking the parsing
// against real output.
func TestRealTools(t *testing.T) {
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not installed")
	}
	gxx := Probe(context.Background(), mustLookup(t, "g++"))
	if !gxx.Found || gxx.Err != nil || !strings.ContainsAny(gxx.Version, "0123456789") {
		t.Errorf("g++: %+v", gxx)
	}
	goTool := Probe(context.Background(), mustLookup(t, "go"))
	if !goTool.Found || goTool.Err != nil || !strings.HasPrefix(goTool.Version, "go version go1.") {
		t.Errorf("go: %+v", goTool)
	}
	t.Logf("g++: %s (%s); go: %s (%s)", gxx.Version, gxx.Path, goTool.Version, goTool.Path)
}
