package spvbuild

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
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
