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
	fact := backend.Fact{Key: name}
	switch {
	case err != nil:
		fact.Value = devices{Devices: []toolchain.VulkanDevice{}, Error: err.Error()}
		fact.Lines = []string{fmt.Sprintf("Vulkan devices: not listed (%s)", err)}
	case len(ds) == 0:
		fact.Value = devices{Devices: ds}
		fact.Lines = []string{"Vulkan devices: none found (apt-get install -y mesa-vulkan-drivers for lavapipe, which CI runs the Vulkan kernels on)"}
	default:
		fact.Value = devices{Devices: ds}
		for _, d := range ds {
			fact.Lines = append(fact.Lines, fmt.Sprintf("Vulkan device: %s (%s, %s, Vulkan %s), subgroup %d (min %d, max %d); %s",
				d.Name, d.Type, d.Driver, d.APIVersion, d.SubgroupSize, d.MinSubgroupSize, d.MaxSubgroupSize, d.GGMLCheck))
		}
	}
	return fact
}
