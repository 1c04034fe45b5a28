// Package vulkan runs kernelgen's generated GLSL on a real Vulkan driver
// through verify/vkrun: lavapipe in CI at subgroup 8 (reductions of 16 and
// 32 lanes take the shared-memory path) and, in child processes
// (TestOtherSubgroupWidths), at 4 and 16; a GPU on a GPU host (NVIDIA:
// subgroup 32, the subgroup-shuffle path).
//
// [Job] turns a verify/cases case into one vkrun job: the case's buffers in
// order, one dispatch per launch (gather, then compute, for the ids ops;
// vkrun's barrier between dispatches is the ordering point), binding i =
// kernel buffer i, the args as push constants in IR order ([Push]), groups =
// Launch.Grid. SPIR-V comes from a [SPIRVFunc]; [Compiler.SPIRV] builds each
// variant's [Unit] (glsl.Emit + glsl.Defines, named glsl.FileName) with
// tools/spvbuild and mirrors it under $KERNELGEN_CACHE/vulkan-spirv,
// keyed without tool versions, so a host without glslang runs from a cache
// filled elsewhere.
//
// # Tests
//
// For every op x {portable, native-vulkan} (the gathers once) x every
// variant: one random case (cases.Small) against the Go reference, portable
// bit for bit and native within NMSE. And the native contract's invariant,
// under both contracts: generated fused == generated non-fused bit for bit
// on the same driver (op A vs gated_delta_net with K = 1; op B vs
// gated_delta_net fed the pre-op states gathered on the host; ops C and D
// with SiLU off vs ssm_conv over [taps, x]). A missing runner toolchain,
// glslang or device skips, and fails where KERNELGEN_REQUIRE_TOOLS is set.
//
// The portable contract needs IEEE binary32 with a fused multiply-add,
// denormals and signed zeros, and drivers differ: lavapipe rounds fma()
// twice and folds -0.0 + 0.0, the H100's driver flushes denormals and folds
// -0.0 + 0.0. The generated GLSL spells the fma (kg_fma, exact through
// doubles: it needs shaderFloat64) and the zero add itself. Denormals it
// asks for with SPV_KHR_float_controls' DenormPreserve in a second build of
// each portable shader (glsl.DenormPreserve), which the tests run where the
// device offers shaderDenormPreserveFloat32 (then every portable case must
// be bit for bit). lavapipe does not offer it but keeps denormals anyway;
// the H100's driver (580) neither offers it nor keeps them. The tests probe
// the driver first (TestDriverArithmetic); only on a device that flushes
// denormals and cannot be asked not to are portable cases that are not bit
// for bit held to the native tolerance and skipped with the reason;
// TestCasesMatchReference logs how many were bit for bit.
// TestPortableFMAIsCorrectlyRounded checks kg_fma alone on 8192 hard and
// random operand triples.
//
// KERNELGEN_VK_DEVICE picks the device ("NVIDIA", "#1"), as in vkrun;
// unset, the tests use lavapipe. On 2 cores the package takes ~15 s with a
// cold SPIR-V cache (~140 variants compiled once, in parallel).
//
// # On a GPU host
//
// Build here (Debian with glslang-tools, spirv-tools, gcc, libvulkan-dev,
// mesa-vulkan-drivers: scripts/setup.sh), from the repository root, into
// verify/vulkan/.gpu, which git ignores:
//
//	export KERNELGEN_CACHE=$PWD/verify/vulkan/.gpu/cache
//	go test -count=1 ./verify/vulkan ./verify/vkrun   # fills the cache: runner + SPIR-V
//	go test -c -o verify/vulkan/.gpu/vulkan.test ./verify/vulkan
//	go test -c -o verify/vulkan/.gpu/vkrun.test ./verify/vkrun
//	go run ./bench/vulkan -o verify/vulkan/.gpu/bench  # benchmark jobs + runner
//	mkdir -p verify/vulkan/.gpu/debs && cp verify/vkrun/.gpu/debs/*.deb verify/vulkan/.gpu/debs/
//
// (the loader packages: libvulkan1 libglvnd0 libegl1 libglx0 libgl1
// libopengl0 libgles2, fetched with apt-get download as verify/vkrun/doc.go
// says). The directory is ~30 MB. On the GPU host, with verify/vulkan/.gpu
// carried (device tool: carry ["verify/vulkan/.gpu"]), from the repository
// root:
//
//	for f in verify/vulkan/.gpu/debs/*.deb; do dpkg -x $f /; done; ldconfig
//	export XDG_RUNTIME_DIR=$(mktemp -d) KERNELGEN_CACHE=$PWD/verify/vulkan/.gpu/cache KERNELGEN_VK_DEVICE=NVIDIA
//	(cd verify/vulkan && KERNELGEN_REQUIRE_TOOLS=1 .gpu/vulkan.test -test.v > $OUT/vulkan_test.log 2>&1)
//	(cd verify/vkrun && ../vulkan/.gpu/vkrun.test -test.v > $OUT/vkrun_test.log 2>&1)
//	grep -hE '^(--- |ok|FAIL)|portable: |IEEE' $OUT/vulkan_test.log $OUT/vkrun_test.log
//	OUT=$OUT bash verify/vulkan/.gpu/bench/run.sh
//
// (where the loader finds no driver, add
// VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json).
// The whole run takes about a minute on the H100. Back here, the benchmark
// table (bench/vulkan's doc says what it measures):
//
//	go run ./bench/vulkan report -csv bench_vulkan.csv FILES_AT/results.tar
package vulkan
