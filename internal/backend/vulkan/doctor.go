package vulkan

import (
	"context"
	"fmt"

	"github.com/kernelgen/kernelgen/internal/backend"
	"github.com/kernelgen/kernelgen/tools/toolchain"
)

// devices is doctor --json's "vulkan": what the Vulkan loader finds
// (vulkaninfo).
type devices struct {
	Devices []toolchain.VulkanDevice `json:"devices"`
	Error   string                   `json:"error,omitempty"` // why they could not be listed
}

// doctor lists the Vulkan devices, their subgroup sizes and whether
// ggml-vulkan can drive each.
func doctor(ctx context.Context, _ []toolchain.Result) backend.Fact {
	ds, err := toolchain.VulkanDevices(ctx)
	return backend.Found(name, "Vulkan devices", "apt-get install -y mesa-vulkan-drivers for lavapipe, which CI runs the Vulkan kernels on", ds, err,
		func(ds []toolchain.VulkanDevice, why string) any { return devices{Devices: ds, Error: why} },
		func(d toolchain.VulkanDevice) []string {
			return []string{fmt.Sprintf("Vulkan device: %s (%s, %s, Vulkan %s), subgroup %d (min %d, max %d); %s",
				d.Name, d.Type, d.Driver, d.APIVersion, d.SubgroupSize, d.MinSubgroupSize, d.MaxSubgroupSize, d.GGMLCheck)}
		})
}
