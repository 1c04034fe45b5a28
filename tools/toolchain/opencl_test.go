package toolchain

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseClinfoList(t *testing.T) {
	in := "Platform #0: Portable Computing Language\n `-- Device #0: pthread-skylake-avx512-Intel(R) Xeon(R) Processor\n" +
		"Platform #1: Intel(R) OpenCL Graphics\n +-- Device #0: Intel(R) Arc(TM) A770 Graphics\n `-- Device #1: Intel(R) UHD Graphics 770\n" +
		"Platform #2: Empty\n"
	want := []OpenCLPlatform{
		{Name: "Portable Computing Language", Devices: []string{"pthread-skylake-avx512-Intel(R) Xeon(R) Processor"}},
		{Name: "Intel(R) OpenCL Graphics", Devices: []string{"Intel(R) Arc(TM) A770 Graphics", "Intel(R) UHD Graphics 770"}},
		{Name: "Empty", Devices: []string{}},
	}
	if got := parseClinfoList(in); !reflect.DeepEqual(got, want) {
		t.Errorf("parseClinfoList = %+v\nwant %+v", got, want)
	}
	if got := parseClinfoList(""); len(got) != 0 || got == nil {
		t.Errorf("no platforms: %#v, want an empty list", got)
	}
}

// clinfo --raw as PoCL 3.1 (bookworm), PoCL 6.0 (trixie) and rusticl on
// llvmpipe (Mesa 25.0.7, RUSTICL_FEATURES=fp16) print it, cut to the
// lines read, and an Intel GPU; each verdict is the line ggml-opencl
// logged for that runtime (docs/runtimes.md).
const rawTwoPlatforms = `#PLATFORMS                                        2
  CL_PLATFORM_NAME                                Portable Computing Language
  CL_PLATFORM_VERSION                             OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC, SPIR, LLVM 15.0.6, SLEEF, DISTRO, POCL_DEBUG

  CL_PLATFORM_NAME                                Intel(R) OpenCL Graphics
  CL_PLATFORM_VERSION                             OpenCL 3.0 

[POCL/*]    CL_PLATFORM_NAME                                Portable Computing Language
[POCL/*]  #DEVICES                                          1
[POCL/0]    CL_DEVICE_NAME                                  pthread-skylake-avx512-Intel(R) Xeon(R) Processor
[POCL/0]    CL_DEVICE_VERSION                               OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512
[POCL/0]    CL_DRIVER_VERSION                               3.1+debian
[POCL/0]    CL_DEVICE_OPENCL_C_VERSION                      OpenCL C 1.2 PoCL
[POCL/0]    CL_DEVICE_OPENCL_C_ALL_VERSIONS                 OpenCL C:0x400000 OpenCL C:0x401000 OpenCL C:0x402000 OpenCL C:0xc00000
[POCL/0]    CL_DEVICE_EXTENSIONS                            cl_khr_byte_addressable_store cl_khr_global_int32_base_atomics   cl_khr_fp64 cl_khr_int64_base_atomics
[INTEL/*]   CL_PLATFORM_NAME                                Intel(R) OpenCL Graphics
[INTEL/*] #DEVICES                                          2
[INTEL/0]   CL_DEVICE_NAME                                  Intel(R) Arc(TM) A770 Graphics
[INTEL/0]   CL_DEVICE_VERSION                               OpenCL 3.0 NEO 
[INTEL/0]   CL_DRIVER_VERSION                               24.35.30872.22
[INTEL/0]   CL_DEVICE_OPENCL_C_ALL_VERSIONS                 OpenCL C:0x400000 OpenCL C:0x401000 OpenCL C:0x402000 OpenCL C:0xc00000
[INTEL/0]   CL_DEVICE_EXTENSIONS                            cl_khr_fp16 cl_khr_subgroups cl_intel_subgroups cl_intel_required_subgroup_size
[INTEL/1]   CL_DEVICE_NAME                                  Intel(R) UHD Graphics 770
[INTEL/1]   CL_DEVICE_VERSION                               OpenCL 3.0 NEO 
[INTEL/1]   CL_DRIVER_VERSION                               24.35.30872.22
[INTEL/1]   CL_DEVICE_OPENCL_C_ALL_VERSIONS                 OpenCL C:0x400000 OpenCL C:0xc00000
[INTEL/1]   CL_DEVICE_EXTENSIONS                            cl_khr_fp16 cl_khr_subgroup_shuffle
`

const rawPoCL6 = `  CL_PLATFORM_NAME                                Portable Computing Language
  CL_PLATFORM_VERSION                             OpenCL 3.0 PoCL 6.0+debian  Linux, None+Asserts, RELOC, SPIR-V, LLVM 18.1.8, SLEEF, DISTRO, POCL_DEBUG
[POCL/*]    CL_PLATFORM_NAME                                Portable Computing Language
[POCL/0]    CL_DEVICE_NAME                                  cpu-skylake-avx512-Intel(R) Xeon(R) Processor
[POCL/0]    CL_DEVICE_VERSION                               OpenCL 3.0 PoCL HSTR: cpu-x86_64-pc-linux-gnu-skylake-avx512
[POCL/0]    CL_DRIVER_VERSION                               6.0+debian
[POCL/0]    CL_DEVICE_OPENCL_C_ALL_VERSIONS                 OpenCL C:0x400000 OpenCL C:0x401000 OpenCL C:0x402000 OpenCL C:0xc00000
[POCL/0]    CL_DEVICE_EXTENSIONS                            cl_khr_byte_addressable_store cl_khr_subgroups cl_khr_subgroup_ballot cl_khr_subgroup_shuffle cl_intel_subgroups cl_khr_fp64
`

const rawRusticl = `  CL_PLATFORM_NAME                                rusticl
  CL_PLATFORM_VERSION                             OpenCL 3.0 
[MESA/*]    CL_PLATFORM_NAME                                rusticl
[MESA/0]    CL_DEVICE_NAME                                  llvmpipe (LLVM 19.1.7, 256 bits)
[MESA/0]    CL_DEVICE_VERSION                               OpenCL 3.0 
[MESA/0]    CL_DRIVER_VERSION                               25.0.7-2+deb13u1
[MESA/0]    CL_DEVICE_OPENCL_C_VERSION                      OpenCL C 1.2 
[MESA/0]    CL_DEVICE_OPENCL_C_ALL_VERSIONS                 OpenCL C:0xc00000 OpenCL C:0x402000 OpenCL C:0x401000 OpenCL C:0x400000
[MESA/0]    CL_DEVICE_EXTENSIONS                            cl_khr_byte_addressable_store cl_khr_fp16 cl_khr_fp64 cl_khr_subgroup_shuffle cl_khr_subgroup_shuffle_relative
`

func TestClinfoRawDeviceFacts(t *testing.T) {
	ps := []OpenCLPlatform{{Name: "Portable Computing Language"}, {Name: "Intel(R) OpenCL Graphics"}}
	addClinfoRaw(ps, rawTwoPlatforms)
	if got := ps[0].Version; got != "OpenCL 3.0 PoCL 3.1+debian  Linux, None+Asserts, RELOC, SPIR, LLVM 15.0.6, SLEEF, DISTRO, POCL_DEBUG" {
		t.Errorf("platform 0 version %q", got)
	}
	if len(ps[0].Info) != 1 || len(ps[1].Info) != 2 {
		t.Fatalf("devices per platform: %d, %d; want 1, 2", len(ps[0].Info), len(ps[1].Info))
	}
	pocl := ps[0].Info[0]
	want := OpenCLDevice{Name: "pthread-skylake-avx512-Intel(R) Xeon(R) Processor",
		Version: "OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512", Driver: "3.1+debian",
		OpenCLC: "3.0", Subgroups: []string{},
		GGMLCheck: "dropped by ggml-opencl: device does not support FP16 (no cl_khr_fp16)"}
	if !reflect.DeepEqual(pocl, want) {
		t.Errorf("PoCL 3.1:\n got %+v\nwant %+v", pocl, want)
	}
	arc := ps[1].Info[0]
	if arc.GGML != "opencl" || !arc.FP16 || arc.OpenCLC != "3.0" ||
		!reflect.DeepEqual(arc.Subgroups, []string{"cl_khr_subgroups", "cl_intel_subgroups", "cl_intel_required_subgroup_size"}) ||
		!strings.Contains(arc.GGMLCheck, "-DGGML_OPENCL_USE_ADRENO_KERNELS=OFF") {
		t.Errorf("Intel Arc: %+v", arc)
	}
	// OpenCL C 3.0 with only the shuffle extension: no cl_khr_subgroups
	if uhd := ps[1].Info[1]; uhd.GGML != "" || uhd.GGMLCheck != "dropped by ggml-opencl: device does not support subgroups (no cl_khr_subgroups or cl_intel_subgroups)" {
		t.Errorf("UHD: %+v", uhd)
	}
}

func TestClinfoRawGGMLVerdicts(t *testing.T) {
	for _, c := range []struct{ name, raw, check string }{
		{"PoCL 6.0", rawPoCL6, "dropped by ggml-opencl: device does not support FP16 (no cl_khr_fp16)"},
		{"rusticl", rawRusticl, `dropped by ggml-opencl: unsupported GPU "llvmpipe (LLVM 19.1.7, 256 bits)" (it takes only devices named Adreno, Qualcomm or Intel)`},
	} {
		ps := []OpenCLPlatform{{}}
		addClinfoRaw(ps, c.raw)
		if len(ps[0].Info) != 1 {
			t.Fatalf("%s: %d devices", c.name, len(ps[0].Info))
		}
		if d := ps[0].Info[0]; d.GGMLCheck != c.check || d.GGML != "" || d.OpenCLC != "3.0" {
			t.Errorf("%s: %+v\nwant check %q", c.name, d, c.check)
		}
	}
	// an OpenCL 2 platform reads CL_DEVICE_OPENCL_C_VERSION
	ps := []OpenCLPlatform{{}}
	addClinfoRaw(ps, "  CL_PLATFORM_VERSION  OpenCL 1.2 X\n[X/*] CL_PLATFORM_NAME X\n[X/0] CL_DEVICE_NAME Intel(R) HD\n[X/0] CL_DEVICE_OPENCL_C_VERSION OpenCL C 1.2 \n[X/0] CL_DEVICE_EXTENSIONS cl_khr_fp16\n")
	if d := ps[0].Info[0]; d.OpenCLC != "1.2" || d.GGMLCheck != "dropped by ggml-opencl: OpenCL 2.0 or above is required (OpenCL C 1.2)" {
		t.Errorf("OpenCL 1.2: %+v", d)
	}
}
