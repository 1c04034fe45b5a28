package toolchain

// The Vulkan backend's tools (internal/backend/vulkan owns this file).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
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
