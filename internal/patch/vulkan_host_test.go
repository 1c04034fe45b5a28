package patch

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kernelgen/kernelgen/internal/registry"
	"github.com/kernelgen/kernelgen/internal/tier"
	"github.com/kernelgen/kernelgen/templates"
)

// vulkanReorderEdit is the Vulkan step's edit to ggml_vk_graph_optimize's is_src_of.
const vulkanReorderEdit = "in-place target kept in order by graph_optimize"

// runVulkanReorder builds testdata/vulkan-host/reorder.cpp over the stand-in
// ggml-vulkan.cpp, patched with the Vulkan step's reorder edit or (edit
// false) as it is, with the Vulkan glue's supports section as the
// stand-in's fused-supports.inc, and runs it: its output and whether it
// found no hazard.
func runVulkanReorder(t *testing.T, edit bool) (string, bool) {
	t.Helper()
	cxx := hostCXX(t)
	bs, err := registry.Resolve("vulkan")
	if err != nil {
		t.Fatal(err)
	}
	_, up, err := templates.UpstreamGlue(bs[0].Glue())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "fused-supports.inc"), []byte(up["upstream-supports"]), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ggml-vulkan.cpp", "reorder.cpp"} {
		data, err := os.ReadFile(filepath.Join("testdata/vulkan-host", name))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		if name == "ggml-vulkan.cpp" && edit {
			l := locate(editOf(t, stepOf(t, "vulkan"), vulkanReorderEdit), text)
			if l.State != Pending {
				t.Fatalf("edit %q is %v in the stand-in: %s", vulkanReorderEdit, l.State, l.Why)
			}
			text = insertAll(text, []Located{l})
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "reorder")
	ctx := tier.Context(t)
	args := append(append([]string{}, cxx[1:]...), "-std=c++17", "-Wall", "-Werror", "-Wno-unused-function", "reorder.cpp", "-o", bin)
	cmd := exec.CommandContext(ctx, cxx[0], args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("reorder.cpp does not build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
		t.Fatalf("reorder: %v\n%s", err, out)
	}
	return string(out), err == nil
}

// docs/ggml.md#hazards: ggml_vk_graph_optimize pulls a node forward past the
// nodes it does not depend on (is_src_of). With the Vulkan step's edit, a
// node touching the cache a fused node writes keeps its side of the writer,
// after the update or before it.
func TestVulkanReorderKeepsTheWrittenCache(t *testing.T) {
	if out, ok := runVulkanReorder(t, true); !ok {
		t.Fatalf("with the edit:\n%s", out)
	}
}

// The control: without the edit the stand-in's reorder moves each reader to
// the other side of its writer.
func TestVulkanReorderMovesReadersWithoutTheEdit(t *testing.T) {
	out, ok := runVulkanReorder(t, false)
	if ok {
		t.Fatalf("without the edit the reorder moved no reader:\n%s", out)
	}
	for _, want := range []string{
		"HAZARD update then read: the reorder moved state_reader before gdn",
		"HAZARD update then read: the reorder moved conv_reader before conv_update",
		"HAZARD read then update: the reorder moved state_reader after gdn",
		"HAZARD read then update: the reorder moved conv_reader after conv_update",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}

// A pipeline whose shader shuffles within the subgroup asks for the
// device's subgroup size, as ggml-vulkan's plain GDN pipelines do, so the
// shuffles see one size on drivers that vary it per pipeline; a shader
// without shuffles asks for none.
func TestVulkanShufflingPipelinesRequireASubgroupSize(t *testing.T) {
	step := stepOf(t, "vulkan")
	shuffles := map[string]bool{}
	for _, f := range step.Files {
		if strings.HasSuffix(f.Path, ".comp") {
			name := strings.TrimSuffix(filepath.Base(f.Path), ".comp")
			shuffles[name] = strings.Contains(string(f.Data), "subgroupShuffle")
		}
	}
	checked := 0
	for _, e := range step.Edits {
		lines := strings.Split(e.Text, "\n")
		for i, l := range lines {
			if !strings.Contains(l, "ggml_vk_create_pipeline") {
				continue
			}
			call := l
			if i+1 < len(lines) && !strings.HasSuffix(strings.TrimSpace(l), ";") {
				call += lines[i+1]
			}
			for name, shuffling := range shuffles {
				if !strings.Contains(call, name+"_f32_data") {
					continue
				}
				checked++
				if asks := strings.Contains(call, "device->subgroup_size"); asks != shuffling {
					t.Errorf("%s: shuffles %v, asks for the device's subgroup size %v: %s", name, shuffling, asks, strings.TrimSpace(call))
				}
			}
		}
	}
	if checked == 0 || !shuffles["gated_delta_net_inplace"] {
		t.Fatalf("checked %d pipelines (shaders %v): the test no longer finds what it looks at", checked, shuffles)
	}
}

// vulkanFusionText is testdata/vulkan-host/fusion.cpp with the first
// parts of the Vulkan fusion steps applied (its shaders, then the matchers
// and dispatch).
func vulkanFusionText(t *testing.T, parts int) string {
	return fusionStandIn(t, "vulkan", "vulkan-host", "src/ggml-vulkan/ggml-vulkan.cpp", parts)
}

func compileVulkanFusion(t *testing.T, text string) (string, bool) {
	return compileFusionStandIn(t, "ggml-vulkan.cpp", text)
}

// The fusion form's Vulkan step, placed in a stand-in of ggml-vulkan.cpp
// (its anchors and the calls the step makes, with ggml's signatures),
// compiles: the matchers, the record functions over the ops form's
// pipelines and push constants, the context member and the calls in
// build_graph and graph_compute.
func TestVulkanFusionStepCompiles(t *testing.T) {
	if out, ok := compileVulkanFusion(t, vulkanFusionText(t, 2)); !ok {
		t.Fatalf("the fusion step does not compile:\n%s", out)
	}
}

// The GDN pipelines ask for full subgroups as ggml-vulkan's plain GDN
// pipelines do where they shuffle, wherever Vulkan allows it (the
// workgroup's x size a multiple of the subgroup size: S_v 32 to 128 on
// subgroups of 32, none on 64): testdata/vulkan-host/pipelines.cpp runs the
// step's pipeline creation over a stand-in that records what each asks for.
func TestVulkanPipelinesAskForFullSubgroupsWhereAllowed(t *testing.T) {
	cxx := hostCXX(t)
	bs, err := registry.Resolve("vulkan")
	if err != nil {
		t.Fatal(err)
	}
	_, up, err := templates.UpstreamGlue(bs[0].Glue())
	if err != nil {
		t.Fatal(err)
	}
	xID := ""
	for _, f := range stepOf(t, "vulkan").Files {
		if strings.HasSuffix(f.Path, "gated_delta_net_inplace.comp") {
			if m := regexp.MustCompile(`local_size_x_id = (\d+)`).FindStringSubmatch(string(f.Data)); m != nil {
				xID = m[1]
			}
		}
	}
	if xID == "" {
		t.Fatal("gated_delta_net_inplace.comp takes its local size x from no specialization constant")
	}
	dir := t.TempDir()
	for name, section := range map[string]string{"members.inc": "upstream-pipeline-members", "push.inc": "upstream-push-constants", "create.inc": "upstream-create-pipelines"} {
		text, ok := up[section]
		if !ok {
			t.Fatalf("the Vulkan glue has no section %s", section)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	src, err := filepath.Abs("testdata/vulkan-host/pipelines.cpp")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "pipelines")
	ctx := tier.Context(t)
	args := append(append([]string{}, cxx[1:]...), "-std=c++17", "-Wall", "-Werror", "-I", dir, "-DKG_GDN_X_ID="+xID, src, "-o", bin)
	if out, err := exec.CommandContext(ctx, cxx[0], args...).CombinedOutput(); err != nil {
		t.Fatalf("pipelines.cpp does not build: %v\n%s", err, out)
	}
	out, err := exec.CommandContext(ctx, bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), " 0 failures") {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", strings.TrimSpace(string(out)))
}

// Its first patch, the shaders and their pipelines, builds on its own.
func TestVulkanFusionShadersCompileAlone(t *testing.T) {
	if out, ok := compileVulkanFusion(t, vulkanFusionText(t, 1)); !ok {
		t.Fatalf("the shaders' step does not compile on its own:\n%s", out)
	}
}
