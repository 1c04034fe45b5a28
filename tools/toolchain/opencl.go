package toolchain

// The OpenCL backend's tools (internal/backend/opencl owns this file).

import (
	"cmp"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
)

// Clinfo lists the OpenCL platforms.
var Clinfo = Tool{
	Name:        "clinfo",
	Candidates:  []string{"clinfo"},
	VersionArgs: []string{"--version"},
	Purpose:     "lists the OpenCL platforms the OpenCL backend's checks can run on (PoCL in CI: pocl-opencl-icd, built against ocl-icd-opencl-dev)",
	Install:     "apt-get install -y clinfo pocl-opencl-icd ocl-icd-opencl-dev",
	Required:    RequiredCI,
}

// OpenCLPlatform is one OpenCL platform and its devices, as `clinfo -l`
// lists them, with what `clinfo --raw` says of each device (Info; absent
// where clinfo --raw could not be read).
type OpenCLPlatform struct {
	Name    string         `json:"name"`
	Version string         `json:"version,omitempty"` // CL_PLATFORM_VERSION: the runtime and its version
	Devices []string       `json:"devices"`
	Info    []OpenCLDevice `json:"device_info,omitempty"`
}

// OpenCLDevice is one device's facts that ggml-opencl's device check
// (ggml_opencl_is_device_supported) reads, and its verdict.
type OpenCLDevice struct {
	Name    string `json:"name"`
	Version string `json:"version"`  // CL_DEVICE_VERSION
	Driver  string `json:"driver"`   // CL_DRIVER_VERSION
	OpenCLC string `json:"opencl_c"` // the OpenCL C version ggml-opencl takes (major.minor)
	FP16    bool   `json:"fp16"`     // cl_khr_fp16
	// Subgroups are the device's subgroup extensions (cl_khr_subgroups,
	// cl_intel_subgroups, cl_khr_subgroup_shuffle, ...), in its order.
	Subgroups []string `json:"subgroups"`
	// GGML is the ggml backend that can drive the device ("opencl"), ""
	// where ggml-opencl drops it; GGMLCheck says why either way.
	GGML      string `json:"ggml"`
	GGMLCheck string `json:"ggml_check"`
}

// OpenCLPlatforms lists the OpenCL platforms the ICD loader finds, through
// clinfo. No platform is an empty list, not an error; a missing clinfo is.
func OpenCLPlatforms(ctx context.Context) ([]OpenCLPlatform, error) {
	path, err := lookPath("clinfo")
	if err != nil {
		return nil, fmt.Errorf("clinfo not found: %w (apt-get install -y clinfo)", err)
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "-l").Output()
	if err != nil {
		return nil, fmt.Errorf("clinfo -l: %w", err)
	}
	ps := parseClinfoList(string(out))
	if raw, err := exec.CommandContext(ctx, path, "--raw").Output(); err == nil {
		addClinfoRaw(ps, string(raw))
	}
	return ps, nil
}

// addClinfoRaw fills each platform's Version and Info from `clinfo --raw`:
// the platforms' blocks ("  CL_PLATFORM_NAME  NAME", in order) and then,
// per platform, "[SFX/*] CL_PLATFORM_NAME NAME" and its devices' lines
// "[SFX/N] KEY VALUE". Platforms are matched in order.
func addClinfoRaw(ps []OpenCLPlatform, raw string) {
	type dev map[string]string
	var versions []string
	var devs [][]dev
	cur := -1
	for _, l := range strings.Split(raw, "\n") {
		if !strings.HasPrefix(l, "[") {
			if k, v := rawField(l); k == "CL_PLATFORM_VERSION" {
				versions = append(versions, v)
			}
			continue
		}
		tag, rest, ok := strings.Cut(l[1:], "]")
		if !ok {
			continue
		}
		_, idx, _ := strings.Cut(tag, "/")
		k, v := rawField(rest)
		if idx == "*" {
			if k == "CL_PLATFORM_NAME" {
				devs = append(devs, nil)
				cur = -1
			}
			continue
		}
		n, err := strconv.Atoi(idx)
		if err != nil || len(devs) == 0 {
			continue
		}
		p := len(devs) - 1
		for len(devs[p]) <= n {
			devs[p] = append(devs[p], dev{})
		}
		cur = n
		devs[p][cur][k] = v
	}
	for i := range ps {
		if i < len(versions) {
			ps[i].Version = versions[i]
		}
		if i >= len(devs) {
			continue
		}
		for _, d := range devs[i] {
			ps[i].Info = append(ps[i].Info, openCLDevice(ps[i].Version, d))
		}
	}
}

// rawField splits a clinfo --raw line into its key and value.
func rawField(l string) (key, value string) {
	f := strings.Fields(l)
	if len(f) == 0 {
		return "", ""
	}
	return f[0], strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), f[0]))
}

func openCLDevice(platformVersion string, d map[string]string) OpenCLDevice {
	exts := d["CL_DEVICE_EXTENSIONS"]
	o := OpenCLDevice{Name: d["CL_DEVICE_NAME"], Version: d["CL_DEVICE_VERSION"], Driver: d["CL_DRIVER_VERSION"], Subgroups: []string{},
		// ggml-opencl looks for the names with strstr, as here
		FP16: strings.Contains(exts, "cl_khr_fp16")}
	for _, e := range strings.Fields(exts) {
		if strings.Contains(e, "subgroup") {
			o.Subgroups = append(o.Subgroups, e)
		}
	}
	major, minor := openCLCVersion(platformVersion, d)
	if major > 0 {
		o.OpenCLC = fmt.Sprintf("%d.%d", major, minor)
	}
	if why := ggmlOpenCLDrops(o, major, exts); why != "" {
		o.GGMLCheck = "dropped by ggml-opencl: " + why
	} else {
		o.GGML = "opencl"
		o.GGMLCheck = "accepted by ggml-opencl (fp16, OpenCL C " + o.OpenCLC + ", subgroups)"
		if !adreno(o) {
			o.GGMLCheck += "; built with -DGGML_OPENCL_USE_ADRENO_KERNELS=OFF, as a device that is not an Adreno needs"
		}
	}
	return o
}

// openCLCVersion is the OpenCL C version ggml-opencl's get_opencl_c_version
// takes: on an OpenCL 3 platform the largest of CL_DEVICE_OPENCL_C_ALL_VERSIONS
// ("OpenCL C:0xc00000 ..."), else CL_DEVICE_OPENCL_C_VERSION ("OpenCL C 1.2 ...").
func openCLCVersion(platformVersion string, d map[string]string) (major, minor int) {
	if pm, _ := clVersion(strings.TrimPrefix(platformVersion, "OpenCL ")); pm >= 3 {
		var best uint64
		for _, f := range strings.Fields(d["CL_DEVICE_OPENCL_C_ALL_VERSIONS"]) {
			_, hex, ok := strings.Cut(f, ":0x")
			if !ok {
				continue
			}
			if v, err := strconv.ParseUint(hex, 16, 32); err == nil && v > best {
				best = v
			}
		}
		return int(best >> 22), int(best>>12) & 0x3ff
	}
	return clVersion(strings.TrimPrefix(d["CL_DEVICE_OPENCL_C_VERSION"], "OpenCL C "))
}

// clVersion reads "MAJOR.MINOR ..." (0, 0 when it cannot).
func clVersion(s string) (major, minor int) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return 0, 0
	}
	a, b, _ := strings.Cut(f[0], ".")
	major, _ = strconv.Atoi(a)
	minor, _ = strconv.Atoi(b)
	return major, minor
}

func adreno(d OpenCLDevice) bool {
	return strings.Contains(d.Name, "Adreno") || strings.Contains(d.Name, "Qualcomm") || strings.Contains(d.Version, "Adreno")
}

// ggmlOpenCLDrops says why ggml-opencl's ggml_opencl_is_device_supported
// (ggml d9b30952 and d99724f2 alike) drops the device, "" where it keeps it:
// a device it does not name as Adreno, Qualcomm or Intel; OpenCL C below
// 2.0; no cl_khr_fp16; OpenCL C 3 without cl_khr_subgroups or
// cl_intel_subgroups. Its checks run in that order; the first failing one
// is what it logs.
func ggmlOpenCLDrops(d OpenCLDevice, openclCMajor int, exts string) string {
	has := func(x string) bool { return strings.Contains(exts, x) }
	switch {
	case !adreno(d) && !strings.Contains(d.Name, "Intel"):
		return fmt.Sprintf("unsupported GPU %q (it takes only devices named Adreno, Qualcomm or Intel)", d.Name)
	case openclCMajor < 2:
		return "OpenCL 2.0 or above is required (OpenCL C " + cmp.Or(d.OpenCLC, "unknown") + ")"
	case !d.FP16:
		return "device does not support FP16 (no cl_khr_fp16)"
	case openclCMajor == 3 && !has("cl_khr_subgroups") && !has("cl_intel_subgroups"):
		return "device does not support subgroups (no cl_khr_subgroups or cl_intel_subgroups)"
	}
	return ""
}

// parseClinfoList reads `clinfo -l`: "Platform #N: NAME" lines, each
// followed by " `-- Device #M: NAME" (or " +-- ...") lines.
func parseClinfoList(s string) []OpenCLPlatform {
	ps := []OpenCLPlatform{}
	for _, l := range strings.Split(s, "\n") {
		if name, ok := strings.CutPrefix(l, "Platform #"); ok {
			if _, n, ok := strings.Cut(name, ": "); ok {
				ps = append(ps, OpenCLPlatform{Name: strings.TrimSpace(n), Devices: []string{}})
			}
			continue
		}
		if i := strings.Index(l, "Device #"); i >= 0 && len(ps) > 0 {
			if _, n, ok := strings.Cut(l[i:], ": "); ok {
				ps[len(ps)-1].Devices = append(ps[len(ps)-1].Devices, strings.TrimSpace(n))
			}
		}
	}
	return ps
}
