// Package vkrun runs SPIR-V compute shaders on a real Vulkan driver: Mesa's
// lavapipe (a CPU driver, subgroup size 8) in CI, a GPU driver on a GPU host.
//
// Go has no Vulkan bindings in the module proxy, so the work is done by a small
// C program, csrc/vkrun.c (embedded in this package; Go refuses .c files
// beside non-cgo Go files), which [Build] compiles with
// the system C compiler and caches by content hash. [Runner.Run] writes a job
// file, runs the program and reads the buffers back.
//
// # The runner program
//
//	vkrun JOB_FILE OUT_FILE   run the job, write every buffer to OUT_FILE
//	vkrun --list              one line per physical device (see below)
//
// Building it needs a C11 compiler and the Vulkan headers (Debian:
// libvulkan-dev); running it needs libc and a Vulkan driver
// (mesa-vulkan-drivers for lavapipe, or the GPU vendor's), normally reached
// through the Vulkan loader (libvulkan.so.1, Debian libvulkan1):
//
//	cc -std=c11 -O2 -o vkrun csrc/vkrun.c -ldl
//
// On success the first line on stderr is "device: <name> subgroup=<n>" (the
// device's default subgroup size); nothing else is printed unless the loader
// or driver prints something. A failure prints one line starting "vkrun: "
// and exits with
//
//	1  usage, job-file or I/O error; malformed SPIR-V; a missing entry point
//	2  a Vulkan call failed: the line names the call and the VkResult
//	   (a fence wait past the job's timeout is VK_TIMEOUT)
//	3  the device lacks a feature or limit the job needs (a required subgroup
//	   size out of range, full subgroups, push-constant size, workgroup size...)
//	4  no Vulkan device: no loader, no driver, or none matching the selection;
//	   the line says to install mesa-vulkan-drivers (lavapipe) or a GPU driver
//
// [Runner.Run] maps 4 to [ErrNoDevice] and 3 to [ErrUnsupported]; every
// error it returns carries the runner's stderr.
//
// Where Vulkan comes from: the loader, libvulkan.so.1, opened with dlopen
// (so a missing loader is not a dynamic-linker failure), or the file
// $KERNELGEN_VULKAN_LOADER names (exit 4 when it cannot be loaded). Where there is no loader, or with
// KERNELGEN_VULKAN_LOADER=icd, the program reads the driver manifests itself
// ($VK_DRIVER_FILES or $VK_ICD_FILENAMES, else /usr/local/etc, /usr/local/share,
// /etc and /usr/share vulkan/icd.d) and calls each driver's
// vk_icdGetInstanceProcAddr directly; devices are then numbered across
// drivers in manifest order. The loader's own variables (VK_DRIVER_FILES,
// VK_ICD_FILENAMES, VK_LOADER_DEBUG, ...) work as usual.
//
// The device gets every core feature it supports enabled (Vulkan 1.1, 1.2 and
// 1.3 feature structs, or VK_EXT_subgroup_size_control on older devices),
// except robustBufferAccess, which would hide out-of-bounds accesses. Every
// buffer is host-visible, host-coherent memory unless the job asks for
// device-local buffers (then filled and read back through a staging buffer
// of at most 64 MiB). All dispatches are recorded into one command buffer
// with a full compute-to-compute memory barrier (shader and memory writes to
// shader and memory reads and writes) between consecutive dispatches and a
// compute-to-host barrier after the last. Dispatches with identical
// pipelines (module, entry, constants, layout) share one pipeline.
//
// # Pipeline statistics
//
// With KERNELGEN_VULKAN_STATS set to anything non-empty, a device that
// offers VK_KHR_pipeline_executable_properties builds each pipeline with its
// statistics captured, and the program writes them to stderr
// ([Result.Log]), a line per executable, named as the driver names them:
//
//	vkrun: stats: dispatch 1 (main) CS: Register Count=40 Binary Size=15104 Stack Size=0 ...
//
// A device without the extension gets one line saying so, and the job runs
// as usual. bench/vulkan's run.sh keeps each job's stderr in its .log, so
// `KERNELGEN_VULKAN_STATS=1 bash DIR/run.sh` shows what NVIDIA's compiler
// made of every kernel timed.
//
// # Benchmarks
//
// [Job.TimeEvery] writes GPU timestamps (vkCmdWriteTimestamp, bottom of
// pipe) before the first dispatch and after every TimeEvery dispatches;
// [Result.Times] holds the intervals in microseconds (timestampPeriod from
// the device limits). A benchmark lists every repetition's dispatches, each
// with its own push constants and binding ranges ([Dispatch.Offsets],
// [Dispatch.Ranges]), so the destination window can move every repetition;
// a module repeated across dispatches travels once. [Job.Sizes] sizes
// buffers beyond their contents (the contents repeat), [Job.DeviceLocal]
// keeps them in device memory and [Job.NoReadback] skips reading them back.
//
// Before creating pipelines the program reads the SPIR-V: it checks the
// header and instruction word counts, finds the GLCompute entry point by name
// (listing the ones there are when it is missing, rather than handing the
// driver an invalid pipeline) and, where it is a constant or a
// specialization constant, the workgroup size, which it checks against the
// device's limits, the required subgroup size and the full-subgroups rule
// (local_size_x a multiple of the required, or else the maximum, subgroup
// size).
//
// # --list output
//
// One line per device, tab-separated key=value fields (values hold no tab):
//
//	index=0  name=llvmpipe (LLVM 15.0.6, 256 bits)  type=cpu  api=1.3.230
//	vendor=0x10005  device_id=0x0000  driver=llvmpipe  driver_info=Mesa 22.3.6 (LLVM 15.0.6)
//	subgroup=8  min_subgroup=8  max_subgroup=8  max_workgroup_subgroups=32
//	size_control=1  full_subgroups=1  subgroup_compute=1
//	ops=basic,vote,arithmetic,ballot,shuffle,shuffle_relative,quad
//
// min_subgroup, max_subgroup and max_workgroup_subgroups appear only where
// subgroup size control exists (Vulkan 1.3 or VK_EXT_subgroup_size_control);
// size_control=1 means a compute shader may require a subgroup size;
// driver fields appear for Vulkan 1.2 devices. [Runner.Devices] parses it.
//
// # Job file (format version 1)
//
// All integers little-endian. "str" and "blob" are a u32 byte length followed
// by that many bytes (no terminator, no padding).
//
//	magic          8 bytes  "KGVKJOB\x00"
//	version        u32      1
//	flags          u32      bit 0: device-local buffers; bit 1: patterned
//	                        buffers (below); bit 2: no read-back (every
//	                        output buffer has size 0); bit 3: timestamps
//	device index   i32      >= 0: that physical device; -1: by name or first
//	device name    str      with index -1: the first device whose name
//	                        contains it (ASCII case-insensitive); "" = first device
//	timeout        u32      milliseconds to wait for a fence; 0 = 60000,
//	                        0xffffffff = no bound
//	period         u32      only with flag bit 3: a timestamp before the
//	                        first dispatch and after every period dispatches
//	                        (the dispatch count is a multiple of it)
//	buffer count   u32
//	  per buffer:  u64 size, then size bytes (initial contents); a size-0
//	               buffer is bound as a zeroed 4-byte dummy. With flag
//	               bit 1: u64 size, u64 length L <= size, L bytes, repeated
//	               to fill the buffer (zeros when L = 0)
//	dispatch count u32      >= 1, run in order
//	  per dispatch:
//	    spirv        blob   a SPIR-V module, a positive multiple of 4 bytes;
//	                        or length 0 and a u32 index of an earlier
//	                        dispatch whose module this one uses
//	    entry        str    entry point name (GLCompute)
//	    spec count   u32    then per constant: u32 constant_id, u32 value
//	                        (every constant is 4 bytes: bools as 0/1, floats
//	                        as their IEEE bits)
//	    push         blob   push-constant bytes (padded with zeros to a
//	                        multiple of 4; the pipeline layout gets one
//	                        COMPUTE range of that size at offset 0, none if empty)
//	    groups       3 x u32  vkCmdDispatch group counts x, y, z
//	    binding count u32   then per binding: u32 index into the job's
//	                        buffers; binding k of set 0 is that buffer
//	    required subgroup size u32  0 = none; else
//	                        VkPipelineShaderStageRequiredSubgroupSizeCreateInfo
//	    flags        u32    bit 0: require full subgroups
//	                        (VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT);
//	                        bit 1: binding ranges follow
//	    ranges       only with bit 1: per binding u64 offset (a multiple
//	                 of minStorageBufferOffsetAlignment), u64 range (0: to
//	                 the end of the buffer)
//
// Nothing may follow the last dispatch.
//
// # Output file (format version 1)
//
//	magic          8 bytes  "KGVKOUT\x00"
//	version        u32      1
//	subgroup size  u32      the device's default subgroup size
//	device name    str
//	buffer count   u32      as in the job
//	  per buffer:  u64 size (as in the job; 0 for a dummy or without
//	               read-back), then the bytes read back
//	timestamps     only when the job asked for them: "KGVKTIME", u32 count,
//	               then count f64 intervals in microseconds
//
// # Building, caching, carrying
//
// [Build] runs "$CC -std=c11 -O2 -Wall [$KERNELGEN_VKRUN_CFLAGS] -o BIN
// vkrun.c -ldl" (CC defaults to cc) and caches BIN under
// $KERNELGEN_CACHE/vkrun (default: kernelgen/vkrun in the user cache
// directory), keyed by the source and flags only, so a cache built on one
// machine is warm on another. KERNELGEN_VKRUN names a prebuilt program to
// use instead. The program needs only libc at run time (plus the loader
// and/or a driver, found as above), so one built on Debian 12 (glibc 2.36)
// runs on newer distributions such as Ubuntu 24.04.
//
// Job.Device defaults to $KERNELGEN_VK_DEVICE ("NVIDIA", "#1", ...), and the
// tests run on lavapipe unless it is set. [CompileGLSL], the tests' GLSL
// helper, caches modules under $KERNELGEN_CACHE/vkrun-glsl, so a machine
// without glslang runs the tests from a cache filled elsewhere:
//
//	# here (Debian, with glslang and libvulkan-dev)
//	export KERNELGEN_CACHE=$PWD/verify/vkrun/.gpu/cache
//	go test -count=1 ./verify/vkrun/ && go test -c -o verify/vkrun/.gpu/vkrun.test ./verify/vkrun/
//	# on the GPU host, with verify/vkrun/.gpu carried (git ignores it)
//	cd verify/vkrun && KERNELGEN_CACHE=$PWD/.gpu/cache KERNELGEN_VK_DEVICE=NVIDIA \
//	    XDG_RUNTIME_DIR=$(mktemp -d) .gpu/vkrun.test -test.v
//
// NVIDIA's Vulkan driver (libGLX_nvidia.so.0, named by nvidia_icd.json)
// fails to initialise without the libglvnd libraries: a host that has the
// driver but no libvulkan1/libglvnd0/libegl1/libglx0/libgl1 needs those
// unpacked first (dpkg -x PKG.deb /; ldconfig); with them, both the loader
// and the direct-driver path work.
package vkrun
