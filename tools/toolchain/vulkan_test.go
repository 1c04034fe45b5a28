package toolchain

import (
	"reflect"
	"testing"
)

// vulkaninfo's text report, cut to the lines read, for lavapipe (Mesa 22.3)
// and a discrete GPU without 16-bit storage.
const vulkaninfoTwo = `==========
VULKANINFO
==========

Vulkan Instance Version: 1.3.239

Device Properties and Extensions:
=================================
GPU0:
VkPhysicalDeviceProperties:
---------------------------
	apiVersion        = 1.3.230 (4206822)
	deviceType        = PHYSICAL_DEVICE_TYPE_CPU
	deviceName        = llvmpipe (LLVM 15.0.6, 256 bits)
VkPhysicalDeviceDriverProperties:
	driverInfo      = Mesa 22.3.6 (LLVM 15.0.6)
VkPhysicalDeviceSubgroupProperties:
	subgroupSize              = 8
VkPhysicalDeviceSubgroupSizeControlProperties:
	minSubgroupSize              = 8
	maxSubgroupSize              = 8
VkPhysicalDeviceVulkan11Properties:
	subgroupSize                      = 16
VkPhysicalDevice16BitStorageFeatures:
	storageBuffer16BitAccess           = true

GPU1:
VkPhysicalDeviceProperties:
	apiVersion        = 1.1.0 (4198400)
	deviceType        = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU
	deviceName        = Old GPU
	storageBuffer16BitAccess           = false
`

func TestParseVulkaninfo(t *testing.T) {
	got := parseVulkaninfo(vulkaninfoTwo)
	want := []VulkanDevice{
		{Name: "llvmpipe (LLVM 15.0.6, 256 bits)", Type: "CPU", Driver: "Mesa 22.3.6 (LLVM 15.0.6)", APIVersion: "1.3.230",
			SubgroupSize: 8, MinSubgroupSize: 8, MaxSubgroupSize: 8, Storage16Bit: true, GGML: "vulkan",
			GGMLCheck: "ggml-vulkan drives it only when GGML_VK_VISIBLE_DEVICES names it (a CPU device is not picked by default)"},
		{Name: "Old GPU", Type: "DISCRETE_GPU", APIVersion: "1.1.0",
			GGMLCheck: "not driven by ggml-vulkan: Vulkan 1.2 required (the device offers 1.1.0)"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseVulkaninfo:\n got %+v\nwant %+v", got, want)
	}
	if got := parseVulkaninfo("no devices\n"); got == nil || len(got) != 0 {
		t.Errorf("no devices: %#v, want an empty list", got)
	}
	d := VulkanDevice{Type: "DISCRETE_GPU", APIVersion: "1.3.0", Storage16Bit: true}
	if b, c := ggmlVulkanCheck(d); b != "vulkan" || c != "ggml-vulkan picks it by default" {
		t.Errorf("a discrete GPU: %q, %q", b, c)
	}
	d.Storage16Bit = false
	if b, c := ggmlVulkanCheck(d); b != "" || c != "not driven by ggml-vulkan: no storageBuffer16BitAccess" {
		t.Errorf("no 16-bit storage: %q, %q", b, c)
	}
}
