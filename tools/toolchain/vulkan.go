package toolchain

// The Vulkan backend's tools (internal/backend/vulkan owns this file).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// VulkanTools are the Vulkan chain: the GLSL compiler and SPIR-V validator
// of its checks, and the drivers its kernels run on.
var VulkanTools = []Tool{
	{
		Name:        "glslangValidator",
		Candidates:  []string{"glslangValidator"},
		VersionArgs: []string{"--version"},
		Purpose:     "GLSL -> SPIR-V for the Vulkan backend",
		Install:     "apt-get install -y glslang-tools",
		Required:    RequiredCI,
	},
	{
		Name:        "spirv-val",
		Candidates:  []string{"spirv-val"},
		VersionArgs: []string{"--version"},
		Purpose:     "validates the SPIR-V modules of the Vulkan backend",
		Install:     "apt-get install -y spirv-tools",
		Required:    RequiredCI,
	},
	{
		Name:       "vulkaninfo",
		Candidates: []string{"vulkaninfo"},
		// vulkaninfo has no --version; the summary's first lines carry the
		// instance version.
		VersionArgs:   []string{"--summary"},
		VersionMarker: "Vulkan Instance Version",
		Purpose:       "reports which Vulkan devices the tests can run on",
		Install:       "apt-get install -y vulkan-tools",
		Required:      RequiredCI,
	},
	{
		// Not an executable: found through its Vulkan ICD manifest.
		Name:     "lavapipe",
		Purpose:  "CPU Vulkan driver that runs the Vulkan kernels without a GPU",
		Install:  "apt-get install -y mesa-vulkan-drivers",
		Required: RequiredCI,
		Find:     probeLavapipe,
	},
}

// icdDirs are where the Vulkan loader looks for driver manifests when no
// environment variable overrides them (a seam for tests).
var icdDirs = []string{"/usr/local/share/vulkan/icd.d", "/usr/share/vulkan/icd.d", "/etc/vulkan/icd.d"}

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

// VulkanDevice is one Vulkan device as vulkaninfo reports it: what
// ggml-vulkan's device selection reads, its subgroup sizes, and its verdict.
type VulkanDevice struct {
	Name       string `json:"name"`
	Type       string `json:"type"`        // "CPU", "DISCRETE_GPU", "INTEGRATED_GPU", ...
	Driver     string `json:"driver"`      // driverInfo, e.g. "Mesa 22.3.6 (LLVM 15.0.6)"
	APIVersion string `json:"api_version"` // e.g. "1.3.230"
	// SubgroupSize is the default subgroup size; Min and Max the range
	// VK_EXT_subgroup_size_control can ask for (0 where not reported).
	SubgroupSize    int  `json:"subgroup_size"`
	MinSubgroupSize int  `json:"min_subgroup_size"`
	MaxSubgroupSize int  `json:"max_subgroup_size"`
	Storage16Bit    bool `json:"storage_buffer_16bit"` // storageBuffer16BitAccess, which ggml-vulkan requires
	// GGML is the ggml backend that can drive the device ("vulkan"), ""
	// where ggml-vulkan cannot; GGMLCheck says how.
	GGML      string `json:"ggml"`
	GGMLCheck string `json:"ggml_check"`
}

// VulkanDevices lists the Vulkan devices the loader finds, through
// vulkaninfo. No device is an empty list; a missing vulkaninfo is an error.
func VulkanDevices(ctx context.Context) ([]VulkanDevice, error) {
	path, err := lookPath("vulkaninfo")
	if err != nil {
		return nil, fmt.Errorf("vulkaninfo not found: %w (apt-get install -y vulkan-tools)", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path)
	// The loader warns without a runtime directory; the warning is noise here.
	cmd.Env = append(os.Environ(), "XDG_RUNTIME_DIR="+os.TempDir())
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("vulkaninfo: %w", err)
	}
	return parseVulkaninfo(string(out)), nil
}

var (
	gpuHeadingRE = regexp.MustCompile(`^GPU\d+:\s*$`)
	vkFieldRE    = regexp.MustCompile(`^\s+(\w+)\s+=\s+(.*?)\s*$`)
)

// parseVulkaninfo reads vulkaninfo's text report: one "GPUn:" section per
// device, each field ("\tname = value") taken where it first appears in it.
func parseVulkaninfo(s string) []VulkanDevice {
	var devs []map[string]string
	for _, l := range strings.Split(s, "\n") {
		if gpuHeadingRE.MatchString(l) {
			devs = append(devs, map[string]string{})
			continue
		}
		if len(devs) == 0 {
			continue
		}
		if m := vkFieldRE.FindStringSubmatch(l); m != nil {
			if _, seen := devs[len(devs)-1][m[1]]; !seen {
				devs[len(devs)-1][m[1]] = m[2]
			}
		}
	}
	out := []VulkanDevice{}
	for _, d := range devs {
		atoi := func(k string) int { n, _ := strconv.Atoi(d[k]); return n }
		v := VulkanDevice{Name: d["deviceName"], Type: strings.TrimPrefix(d["deviceType"], "PHYSICAL_DEVICE_TYPE_"),
			Driver: d["driverInfo"], APIVersion: strings.Fields(d["apiVersion"] + " ")[0],
			SubgroupSize: atoi("subgroupSize"), MinSubgroupSize: atoi("minSubgroupSize"), MaxSubgroupSize: atoi("maxSubgroupSize"),
			Storage16Bit: d["storageBuffer16BitAccess"] == "true"}
		v.GGML, v.GGMLCheck = ggmlVulkanCheck(v)
		out = append(out, v)
	}
	return out
}

// ggmlVulkanCheck is what ggml-vulkan's device selection (ggml_vk_instance_init,
// ggml d9b30952 and d99724f2) makes of a device: it needs Vulkan 1.2 and
// picks, unless GGML_VK_VISIBLE_DEVICES names devices, the discrete and
// integrated GPUs with storageBuffer16BitAccess.
func ggmlVulkanCheck(v VulkanDevice) (backend, check string) {
	var major, minor int
	if f := strings.Split(v.APIVersion, "."); len(f) >= 2 {
		major, _ = strconv.Atoi(f[0])
		minor, _ = strconv.Atoi(f[1])
	}
	switch {
	case major < 1 || (major == 1 && minor < 2):
		return "", "not driven by ggml-vulkan: Vulkan 1.2 required (the device offers " + v.APIVersion + ")"
	case !v.Storage16Bit:
		return "", "not driven by ggml-vulkan: no storageBuffer16BitAccess"
	case v.Type != "DISCRETE_GPU" && v.Type != "INTEGRATED_GPU":
		return "vulkan", "ggml-vulkan drives it only when GGML_VK_VISIBLE_DEVICES names it (a " + v.Type + " device is not picked by default)"
	}
	return "vulkan", "ggml-vulkan picks it by default"
}
