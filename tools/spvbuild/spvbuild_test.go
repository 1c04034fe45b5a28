package spvbuild

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func tools(t *testing.T) *Tools {
	t.Helper()
	t.Setenv("KERNELGEN_CACHE", t.TempDir())
	tl, err := FindTools(context.Background())
	if err != nil {
		if os.Getenv("KERNELGEN_REQUIRE_TOOLS") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return tl
}

const shader = `#version 450
layout(local_size_x = N) in;
layout(binding = 0, std430) buffer buf_x { float x[]; };
void main() {
    x[gl_GlobalInvocationID.x] *= 2.0;
}
`

func TestBuildCachesAndReportsErrorsAtTheGeneratedLine(t *testing.T) {
	tl := tools(t)
	ctx := context.Background()
	unit := Unit{File: "generated/vulkan/x.comp", Source: []byte(shader), Defines: map[string]string{"N": "64"}, Name: "x N=64"}
	res, err := tl.Build(ctx, []Unit{unit}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Cached || len(res[0].SPIRV) < 20 || string(res[0].SPIRV[:4]) != "\x03\x02\x23\x07" {
		t.Fatalf("first build: cached=%v, %d bytes, magic %x", res[0].Cached, len(res[0].SPIRV), res[0].SPIRV[:4])
	}
	again, err := tl.Build(ctx, []Unit{unit}, nil)
	if err != nil || !again[0].Cached || string(again[0].SPIRV) != string(res[0].SPIRV) {
		t.Fatalf("warm build: err=%v cached=%v", err, again[0].Cached)
	}
	// Another define is another module.
	unit.Defines = map[string]string{"N": "32"}
	if r, err := tl.Build(ctx, []Unit{unit}, nil); err != nil || r[0].Cached {
		t.Fatalf("new variant: err=%v cached=%v", err, r[0].Cached)
	}

	bad := Unit{File: "generated/vulkan/bad.comp", Source: []byte(strings.Replace(shader, "*= 2.0;", "*= undefined_name;", 1)), Defines: map[string]string{"N": "8"}, Name: "bad"}
	_, err = tl.Build(ctx, []Unit{bad}, nil)
	if err == nil || !strings.Contains(err.Error(), "generated/vulkan/bad.comp:5:") || !strings.Contains(err.Error(), "undefined_name") {
		t.Fatalf("compile error not mapped to the generated file and line: %v", err)
	}

	// A warning (glslang exits 0) fails the build too, mapped the same way.
	warn := Unit{File: "generated/vulkan/warn.comp", Source: []byte(strings.Replace(shader, "*= 2.0;", "*= 2.0; float a__b = 1.0;", 1)), Defines: map[string]string{"N": "8"}, Name: "warn"}
	_, err = tl.Build(ctx, []Unit{warn}, nil)
	if err == nil || !strings.Contains(err.Error(), "glslangValidator warned") || !strings.Contains(err.Error(), "generated/vulkan/warn.comp:5:") {
		t.Fatalf("warning not reported as a failure at the generated line: %v", err)
	}
}

func TestMissingGlslangNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := FindTools(context.Background())
	if !errors.Is(err, ErrMissingTool) || !strings.Contains(err.Error(), "apt-get install glslang-tools") {
		t.Fatalf("FindTools = %v", err)
	}
}

// A defect shared by many variants is reported once, with the variants it
// failed named (a few, then a count), not once per variant; distinct
// messages stay apart.
func TestFailuresAreGroupedByMessage(t *testing.T) {
	tl := tools(t)
	bad := strings.Replace(shader, "*= 2.0;", "*= undefined_name;", 1)
	var units []Unit
	for _, n := range []string{"1", "2", "4", "8", "16", "32", "64"} {
		units = append(units, Unit{File: "generated/vulkan/bad.comp", Source: []byte(bad), Defines: map[string]string{"N": n}, Name: "bad N=" + n})
	}
	units = append(units, Unit{File: "generated/vulkan/other.comp", Source: []byte(strings.Replace(shader, "*= 2.0;", "*= other_name;", 1)), Defines: map[string]string{"N": "8"}, Name: "other"})
	_, err := tl.Build(context.Background(), units, nil)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if n, m := strings.Count(msg, "undefined_name"), strings.Count(msg, "other_name"); n != m {
		// One copy of glslang's messages each: the same count of the name.
		t.Errorf("the shared message names undefined_name %d times, the single one other_name %d:\n%s", n, m, msg)
	}
	if !strings.Contains(msg, "generated/vulkan/bad.comp: glslangValidator failed on 7 variants (bad N=1, bad N=2, bad N=4, bad N=8, and 3 more):") {
		t.Errorf("no grouped heading:\n%s", msg)
	}
	if !strings.Contains(msg, "generated/vulkan/other.comp (other): glslangValidator failed:") || !strings.Contains(msg, "other_name") {
		t.Errorf("the other shader's failure is missing:\n%s", msg)
	}
}

// An interrupted build says so, not that the variants failed.
func TestInterruptedBuild(t *testing.T) {
	tl := tools(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := tl.Build(ctx, []Unit{{File: "generated/vulkan/x.comp", Source: []byte(shader), Defines: map[string]string{"N": "8"}, Name: "x"}}, nil)
	if !errors.Is(err, context.Canceled) || strings.Contains(err.Error(), "failed") {
		t.Errorf("err = %v", err)
	}
}

// A work directory a killed build left in the cache is removed by the next
// build once it is stale; a fresh one (a live build's) stays.
func TestBuildRemovesStaleWorkDirs(t *testing.T) {
	tl := tools(t)
	dir, err := CacheDir()
	if err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(dir, ".build-killed")
	live := filepath.Join(dir, ".build-live")
	for _, d := range []string{old, live} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	then := time.Now().Add(-2 * time.Hour)
	os.Chtimes(old, then, then)
	if _, err := tl.Build(context.Background(), []Unit{{File: "generated/vulkan/x.comp", Source: []byte(shader), Defines: map[string]string{"N": "8"}, Name: "x"}}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a stale work directory survived: %v", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a fresh work directory was removed: %v", err)
	}
}
