/*
 * vkrun: runs the compute dispatches that a kernelgen job file describes on
 * one Vulkan device and writes every storage buffer back to a file.
 *
 *   vkrun JOB_FILE OUT_FILE     run a job (formats: see ../doc.go)
 *   vkrun --list                print every physical device, one per line
 *
 * Exit codes: 0 ok; 1 usage, job file or I/O error (also: malformed SPIR-V, a
 * missing entry point); 2 a Vulkan call failed (the message names the call
 * and the VkResult); 3 the device lacks a feature or limit the job needs;
 * 4 no Vulkan device (no loader, no driver, or no device matching the
 * selection).
 *
 * The Vulkan loader is opened with dlopen (libvulkan.so.1, or the file named
 * by $KERNELGEN_VULKAN_LOADER), so a missing loader is not a dynamic-linker
 * failure: without one (or with KERNELGEN_VULKAN_LOADER=icd) the installed
 * drivers are found through their manifests and called directly. Building
 * needs only the Vulkan headers (Debian: libvulkan-dev) and a C11 compiler:
 *
 *   cc -std=c11 -O2 -o vkrun vkrun.c -ldl
 *
 * Correctness first: by default every buffer lives in host-visible,
 * host-coherent memory and all dispatches go into one command buffer with a
 * full compute->compute memory barrier between consecutive dispatches. For
 * benchmarks a job may ask for device-local buffers (uploaded and read back
 * through a staging buffer), buffers initialised from a repeated pattern (so
 * a pool of gigabytes needs no gigabytes of job file), no read-back, and GPU
 * timestamps every N dispatches.
 */
#define _POSIX_C_SOURCE 200809L
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>

#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef VK_VERSION_1_2
#error "vkrun needs Vulkan 1.2 or newer headers (Debian: apt-get install libvulkan-dev)"
#endif

enum {
	EXIT_USAGE = 1,
	EXIT_VULKAN = 2,
	EXIT_UNSUPPORTED = 3,
	EXIT_NO_DEVICE = 4,
};

#define JOB_MAGIC "KGVKJOB\0"
#define OUT_MAGIC "KGVKOUT\0"
#define FORMAT_VERSION 1u
#define FLAG_FULL_SUBGROUPS 1u
#define FLAG_BIND_RANGES 2u
#define JOB_DEVICE_LOCAL 1u
#define JOB_TILED 2u
#define JOB_NO_READBACK 4u
#define JOB_TIMESTAMPS 8u
#define JOB_GGML_BARRIER 16u /* ggml_vk_sync_buffers' barrier between dispatches */
#define JOB_FLAGS_KNOWN 31u
#define TIME_MAGIC "KGVKTIME"
/* Staging chunk for device-local buffers. */
#define STAGE_MAX ((VkDeviceSize)64 << 20)
#define DEFAULT_TIMEOUT_MS 60000u

#define NO_DEVICE_HINT                                                          \
	"install a Vulkan driver: mesa-vulkan-drivers (lavapipe, a CPU driver) "  \
	"on Debian/Ubuntu, or the GPU vendor's driver; the loader is libvulkan1"

/* ------------------------------------------------------------------------ */
/* Errors                                                                     */

static void die(int code, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fputs("vkrun: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	/* _exit: skip driver atexit handlers, which may wait on a hung device. */
	_exit(code);
}

static const char *result_name(VkResult r)
{
	switch (r) {
#define NAME(x) \
	case x: \
		return #x;
		NAME(VK_SUCCESS)
		NAME(VK_NOT_READY)
		NAME(VK_TIMEOUT)
		NAME(VK_EVENT_SET)
		NAME(VK_EVENT_RESET)
		NAME(VK_INCOMPLETE)
		NAME(VK_ERROR_OUT_OF_HOST_MEMORY)
		NAME(VK_ERROR_OUT_OF_DEVICE_MEMORY)
		NAME(VK_ERROR_INITIALIZATION_FAILED)
		NAME(VK_ERROR_DEVICE_LOST)
		NAME(VK_ERROR_MEMORY_MAP_FAILED)
		NAME(VK_ERROR_LAYER_NOT_PRESENT)
		NAME(VK_ERROR_EXTENSION_NOT_PRESENT)
		NAME(VK_ERROR_FEATURE_NOT_PRESENT)
		NAME(VK_ERROR_INCOMPATIBLE_DRIVER)
		NAME(VK_ERROR_TOO_MANY_OBJECTS)
		NAME(VK_ERROR_FORMAT_NOT_SUPPORTED)
		NAME(VK_ERROR_FRAGMENTED_POOL)
		NAME(VK_ERROR_UNKNOWN)
		NAME(VK_ERROR_OUT_OF_POOL_MEMORY)
		NAME(VK_ERROR_INVALID_EXTERNAL_HANDLE)
		NAME(VK_ERROR_FRAGMENTATION)
		NAME(VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS)
		NAME(VK_ERROR_INVALID_SHADER_NV)
#undef NAME
	default:
		return "unrecognized VkResult";
	}
}

static const char *result_hint(VkResult r)
{
	if (r == VK_ERROR_DEVICE_LOST)
		return " (the device was lost: a shader may have faulted, e.g. an "
		       "out-of-bounds access, or run too long)";
	if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
		return " (the buffers may be too large for this device)";
	return "";
}

#define VKCHECK(what, call)                                                    \
	do {                                                                   \
		VkResult r_ = (call);                                          \
		if (r_ != VK_SUCCESS)                                          \
			die(EXIT_VULKAN, "%s failed: %s (%d)%s", (what),       \
			    result_name(r_), (int)r_, result_hint(r_));        \
	} while (0)

static int contains_fold(const char *hay, const char *needle);

static void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		die(EXIT_USAGE, "out of memory allocating %zu x %zu bytes", n, size);
	return p;
}

/* ------------------------------------------------------------------------ */
/* Vulkan entry points, loaded at run time                                    */

static PFN_vkGetInstanceProcAddr get_instance_proc;

#define INSTANCE_FUNCS(X)                                                      \
	X(vkDestroyInstance)                                                   \
	X(vkEnumeratePhysicalDevices)                                          \
	X(vkGetPhysicalDeviceProperties)                                       \
	X(vkGetPhysicalDeviceProperties2)                                      \
	X(vkGetPhysicalDeviceFeatures2)                                        \
	X(vkGetPhysicalDeviceQueueFamilyProperties)                            \
	X(vkGetPhysicalDeviceMemoryProperties)                                 \
	X(vkEnumerateDeviceExtensionProperties)                                \
	X(vkCreateDevice)                                                      \
	X(vkGetDeviceProcAddr)

#define DEVICE_FUNCS(X)                                                        \
	X(vkDestroyDevice)                                                     \
	X(vkGetDeviceQueue)                                                    \
	X(vkCreateBuffer)                                                      \
	X(vkDestroyBuffer)                                                     \
	X(vkGetBufferMemoryRequirements)                                       \
	X(vkAllocateMemory)                                                    \
	X(vkFreeMemory)                                                        \
	X(vkBindBufferMemory)                                                  \
	X(vkMapMemory)                                                         \
	X(vkUnmapMemory)                                                       \
	X(vkCreateDescriptorSetLayout)                                         \
	X(vkDestroyDescriptorSetLayout)                                        \
	X(vkCreateDescriptorPool)                                              \
	X(vkDestroyDescriptorPool)                                             \
	X(vkAllocateDescriptorSets)                                            \
	X(vkUpdateDescriptorSets)                                              \
	X(vkCreatePipelineLayout)                                              \
	X(vkDestroyPipelineLayout)                                             \
	X(vkCreateShaderModule)                                                \
	X(vkDestroyShaderModule)                                               \
	X(vkCreateComputePipelines)                                            \
	X(vkDestroyPipeline)                                                   \
	X(vkCreateCommandPool)                                                 \
	X(vkDestroyCommandPool)                                                \
	X(vkAllocateCommandBuffers)                                            \
	X(vkBeginCommandBuffer)                                                \
	X(vkEndCommandBuffer)                                                  \
	X(vkCmdBindPipeline)                                                   \
	X(vkCmdBindDescriptorSets)                                             \
	X(vkCmdPushConstants)                                                  \
	X(vkCmdDispatch)                                                       \
	X(vkCmdPipelineBarrier)                                                \
	X(vkCmdCopyBuffer)                                                     \
	X(vkCmdFillBuffer)                                                     \
	X(vkCmdResetQueryPool)                                                 \
	X(vkCmdWriteTimestamp)                                                 \
	X(vkCreateQueryPool)                                                   \
	X(vkDestroyQueryPool)                                                  \
	X(vkGetQueryPoolResults)                                               \
	X(vkCreateFence)                                                       \
	X(vkDestroyFence)                                                      \
	X(vkResetFences)                                                       \
	X(vkQueueSubmit)                                                       \
	X(vkWaitForFences)                                                     \
	X(vkDeviceWaitIdle)

#define DECLARE(f) static PFN_##f f;
INSTANCE_FUNCS(DECLARE)
DEVICE_FUNCS(DECLARE)
#undef DECLARE

/* Where Vulkan comes from: the loader (libvulkan.so.1) or, on a machine that
 * has a driver but no loader, every installed driver (ICD) called directly:
 * an ICD's vk_icdGetInstanceProcAddr serves the same entry points. */
typedef struct {
	char label[1024]; /* the library, for messages */
	PFN_vkGetInstanceProcAddr gipa;
} backend;

static backend *backends;
static uint32_t nbackends;
static int icd_mode;
static char notes[4096]; /* why drivers were skipped, for the no-device message */
static char searched[1024]; /* where driver manifests were looked for */

static void note(const char *fmt, ...)
{
	char one[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(one, sizeof one, fmt, ap);
	va_end(ap);
	size_t used = strlen(notes);
	snprintf(notes + used, sizeof notes - used, "%s%s", used ? "; " : "", one);
}

static void add_backend(const char *label, PFN_vkGetInstanceProcAddr gipa)
{
	for (uint32_t i = 0; i < nbackends; i++)
		if (!strcmp(backends[i].label, label))
			return; /* one driver listed by two manifests */
	backend *b = realloc(backends, (nbackends + 1) * sizeof *backends);
	if (!b)
		die(EXIT_USAGE, "out of memory");
	backends = b;
	snprintf(backends[nbackends].label, sizeof backends[nbackends].label, "%s", label);
	backends[nbackends].gipa = gipa;
	nbackends++;
}

static int open_loader_lib(const char *name, int required)
{
	void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		if (required)
			die(EXIT_NO_DEVICE,
			    "no Vulkan device: cannot load the Vulkan loader %s "
			    "($KERNELGEN_VULKAN_LOADER): %s; %s",
			    name, dlerror(), NO_DEVICE_HINT);
		return 0;
	}
	PFN_vkGetInstanceProcAddr gipa;
	/* POSIX guarantees a data pointer from dlsym converts to a function pointer. */
	*(void **)&gipa = dlsym(lib, "vkGetInstanceProcAddr");
	if (!gipa)
		die(EXIT_NO_DEVICE, "no Vulkan device: %s has no vkGetInstanceProcAddr; %s", name,
		    NO_DEVICE_HINT);
	add_backend(name, gipa);
	return 1;
}

/* The string value of "key" in a small JSON text (an ICD manifest). */
static char *json_string(const char *text, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\"", key);
	const char *p = strstr(text, pat);
	if (!p)
		return NULL;
	p += strlen(pat);
	while (isspace((unsigned char)*p))
		p++;
	if (*p++ != ':')
		return NULL;
	while (isspace((unsigned char)*p))
		p++;
	if (*p++ != '"')
		return NULL;
	char *out = xcalloc(1, strlen(p) + 1), *o = out;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		*o++ = *p;
	}
	if (*p != '"') {
		free(out);
		return NULL;
	}
	return out;
}

typedef VkResult (*negotiate_fn)(uint32_t *);

static void try_icd_manifest(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		note("%s: %s", path, strerror(errno));
		return;
	}
	static char text[65536];
	size_t n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = 0;
	char *lib = json_string(text, "library_path");
	if (!lib) {
		note("%s: no library_path", path);
		return;
	}
	char resolved[2048];
	const char *slash = strrchr(path, '/');
	if (lib[0] != '/' && strchr(lib, '/') && slash) /* relative to the manifest */
		snprintf(resolved, sizeof resolved, "%.*s/%s", (int)(slash - path), path, lib);
	else
		snprintf(resolved, sizeof resolved, "%s", lib);
	free(lib);
	void *h = dlopen(resolved, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		note("driver %s: %s", resolved, dlerror());
		return;
	}
	PFN_vkGetInstanceProcAddr gipa;
	*(void **)&gipa = dlsym(h, "vk_icdGetInstanceProcAddr");
	if (!gipa)
		*(void **)&gipa = dlsym(h, "vkGetInstanceProcAddr");
	if (!gipa) {
		note("driver %s: no vk_icdGetInstanceProcAddr", resolved);
		return;
	}
	negotiate_fn negotiate;
	*(void **)&negotiate = dlsym(h, "vk_icdNegotiateLoaderICDInterfaceVersion");
	if (negotiate) {
		/* Interface 5: the driver honours VkApplicationInfo.apiVersion. */
		uint32_t version = 5;
		VkResult r = negotiate(&version);
		if (r != VK_SUCCESS) {
			note("driver %s: vk_icdNegotiateLoaderICDInterfaceVersion failed: %s (%d)%s",
			     resolved, result_name(r), (int)r,
			     contains_fold(resolved, "nvidia")
				     ? " (NVIDIA's Vulkan driver also needs the libglvnd libraries: "
				       "libglvnd0 libegl1 libglx0 libgl1)"
				     : "");
			return;
		}
	}
	add_backend(resolved, gipa);
}

static int is_json(const char *name)
{
	size_t n = strlen(name);
	return n > 5 && !strcmp(name + n - 5, ".json");
}

static int compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A manifest, or a directory of them (in name order). */
static void try_icd_path(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		try_icd_manifest(path);
		return;
	}
	DIR *d = opendir(path);
	if (!d)
		return;
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL)
		if (is_json(e->d_name)) {
			char **grown = realloc(names, (n + 1) * sizeof *names);
			if (!grown || !(grown[n] = strdup(e->d_name)))
				die(EXIT_USAGE, "out of memory");
			names = grown;
			n++;
		}
	closedir(d);
	if (n)
		qsort(names, n, sizeof *names, compare_names);
	for (size_t i = 0; i < n; i++) {
		char full[4096];
		snprintf(full, sizeof full, "%s/%s", path, names[i]);
		try_icd_manifest(full);
		free(names[i]);
	}
	free(names);
}

/* The drivers the loader would find: $VK_DRIVER_FILES or $VK_ICD_FILENAMES
 * (colon-separated manifests or directories), else the standard manifest
 * directories. */
static void find_icds(void)
{
	icd_mode = 1;
	const char *env = getenv("VK_DRIVER_FILES");
	if (!env || !*env)
		env = getenv("VK_ICD_FILENAMES");
	if (env && *env) {
		snprintf(searched, sizeof searched, "%s", env);
		char *copy = strdup(env);
		if (!copy)
			die(EXIT_USAGE, "out of memory");
		for (char *save = NULL, *tok = strtok_r(copy, ":", &save); tok;
		     tok = strtok_r(NULL, ":", &save))
			try_icd_path(tok);
		free(copy);
		return;
	}
	static const char *const dirs[] = {
		"/usr/local/etc/vulkan/icd.d",
		"/usr/local/share/vulkan/icd.d",
		"/etc/vulkan/icd.d",
		"/usr/share/vulkan/icd.d",
	};
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		size_t used = strlen(searched);
		snprintf(searched + used, sizeof searched - used, "%s%s", i ? ":" : "", dirs[i]);
		try_icd_path(dirs[i]);
	}
}

/* $KERNELGEN_VULKAN_LOADER: a loader library to use, or "icd" for no loader
 * (drivers called directly); unset: libvulkan.so.1, else the drivers. */
static void load_backends(void)
{
	const char *env = getenv("KERNELGEN_VULKAN_LOADER");
	if (env && !strcmp(env, "icd")) {
		find_icds();
	} else if (env && *env) {
		open_loader_lib(env, 1);
	} else {
		static const char *const names[] = {
#ifdef __APPLE__
			"libvulkan.1.dylib", "libvulkan.dylib",
#else
			"libvulkan.so.1", "libvulkan.so",
#endif
		};
		for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
			if (open_loader_lib(names[i], 0))
				return;
		note("the Vulkan loader %s is missing (%s)", names[0], dlerror());
		find_icds();
	}
	if (nbackends == 0)
		die(EXIT_NO_DEVICE, "no Vulkan device: %s%sno usable Vulkan driver manifest in %s; %s",
		    notes, notes[0] ? "; " : "", searched, NO_DEVICE_HINT);
}

static PFN_vkVoidFunction must_load(VkInstance inst, const char *name)
{
	PFN_vkVoidFunction f = get_instance_proc(inst, name);
	if (!f)
		die(EXIT_VULKAN, "vkGetInstanceProcAddr(%s) returned NULL", name);
	return f;
}

/* ------------------------------------------------------------------------ */
/* The job                                                                    */

typedef struct {
	uint32_t id, value;
} spec_const;

typedef struct {
	uint32_t *code; /* aligned copy of the SPIR-V words */
	size_t code_bytes;
	char *entry;
	uint32_t nspec;
	spec_const *spec;
	uint8_t *push; /* padded to a multiple of 4 */
	uint32_t push_bytes, push_padded;
	uint32_t groups[3];
	uint32_t nbind;
	uint32_t *bind;
	uint64_t *bind_off, *bind_range; /* range 0: to the end of the buffer */
	uint32_t required_subgroup_size;
	uint32_t flags;
	uint32_t local[3];
	int local_known;
	int needs_float64; /* the module declares the Float64 capability */
	int needs_denorm_preserve; /* ... the DenormPreserve capability */
	uint32_t pipe; /* the first dispatch with an identical pipeline */
} dispatch;

typedef struct {
	uint32_t flags;
	int32_t device_index;
	char *device_name;
	uint32_t timeout_ms;
	uint32_t time_every; /* JOB_TIMESTAMPS: a timestamp every this many dispatches */
	uint32_t nbuf;
	uint64_t *buf_size;
	uint64_t *buf_init; /* bytes of buf_data, repeated to buf_size (0: zeros) */
	const uint8_t **buf_data;
	uint32_t ndisp;
	dispatch *disp;
} job;

typedef struct {
	const uint8_t *p;
	size_t n, off;
} reader;

static void need(reader *r, uint64_t len, const char *what)
{
	if (len > r->n - r->off)
		die(EXIT_USAGE,
		    "job file: truncated: %s needs %llu bytes at offset %zu, %zu left",
		    what, (unsigned long long)len, r->off, r->n - r->off);
}

static uint32_t rd_u32(reader *r, const char *what)
{
	need(r, 4, what);
	const uint8_t *b = r->p + r->off;
	r->off += 4;
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 |
	       (uint32_t)b[3] << 24;
}

static uint64_t rd_u64(reader *r, const char *what)
{
	uint64_t lo = rd_u32(r, what);
	uint64_t hi = rd_u32(r, what);
	return lo | hi << 32;
}

static const uint8_t *rd_bytes(reader *r, uint64_t len, const char *what)
{
	need(r, len, what);
	const uint8_t *b = r->p + r->off;
	r->off += (size_t)len;
	return b;
}

static char *rd_string(reader *r, const char *what)
{
	uint32_t len = rd_u32(r, what);
	const uint8_t *b = rd_bytes(r, len, what);
	if (memchr(b, 0, len))
		die(EXIT_USAGE, "job file: %s contains a NUL byte", what);
	char *s = xcalloc(1, (size_t)len + 1);
	memcpy(s, b, len);
	return s;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die(EXIT_USAGE, "cannot open job file %s: %s", path, strerror(errno));
	struct stat st;
	if (fstat(fileno(f), &st) != 0)
		die(EXIT_USAGE, "cannot stat job file %s: %s", path, strerror(errno));
	size_t n = (size_t)st.st_size;
	uint8_t *buf = xcalloc(1, n + 1);
	if (n && fread(buf, 1, n, f) != n)
		die(EXIT_USAGE, "cannot read job file %s", path);
	fclose(f);
	*len = n;
	return buf;
}

static void parse_job(const uint8_t *data, size_t len, job *j)
{
	reader r = {data, len, 0};
	const uint8_t *magic = rd_bytes(&r, 8, "magic");
	if (memcmp(magic, JOB_MAGIC, 8) != 0)
		die(EXIT_USAGE, "job file: bad magic (not a kernelgen vkrun job)");
	uint32_t version = rd_u32(&r, "version");
	if (version != FORMAT_VERSION)
		die(EXIT_USAGE, "job file: format version %u, this vkrun reads version %u",
		    version, FORMAT_VERSION);
	uint32_t flags = rd_u32(&r, "job flags");
	if (flags & ~JOB_FLAGS_KNOWN)
		die(EXIT_USAGE, "job file: unknown job flags 0x%x", flags & ~JOB_FLAGS_KNOWN);
	j->flags = flags;
	j->device_index = (int32_t)rd_u32(&r, "device index");
	j->device_name = rd_string(&r, "device name");
	j->timeout_ms = rd_u32(&r, "timeout");
	if (j->timeout_ms == 0)
		j->timeout_ms = DEFAULT_TIMEOUT_MS;
	if (flags & JOB_TIMESTAMPS) {
		j->time_every = rd_u32(&r, "timestamp period");
		if (j->time_every == 0)
			die(EXIT_USAGE, "job file: timestamp period 0");
	}

	j->nbuf = rd_u32(&r, "buffer count");
	need(&r, (uint64_t)j->nbuf * 8, "buffer table");
	j->buf_size = xcalloc(j->nbuf, sizeof *j->buf_size);
	j->buf_init = xcalloc(j->nbuf, sizeof *j->buf_init);
	j->buf_data = xcalloc(j->nbuf, sizeof *j->buf_data);
	for (uint32_t i = 0; i < j->nbuf; i++) {
		j->buf_size[i] = rd_u64(&r, "buffer size");
		j->buf_init[i] = j->buf_size[i];
		if (flags & JOB_TILED) {
			j->buf_init[i] = rd_u64(&r, "buffer pattern length");
			if (j->buf_init[i] > j->buf_size[i])
				die(EXIT_USAGE,
				    "job file: buffer %u: pattern of %llu bytes, the buffer has %llu",
				    i, (unsigned long long)j->buf_init[i],
				    (unsigned long long)j->buf_size[i]);
		}
		j->buf_data[i] = rd_bytes(&r, j->buf_init[i], "buffer bytes");
	}

	j->ndisp = rd_u32(&r, "dispatch count");
	if (j->ndisp == 0)
		die(EXIT_USAGE, "job file: no dispatches");
	if ((flags & JOB_TIMESTAMPS) && j->ndisp % j->time_every != 0)
		die(EXIT_USAGE, "job file: %u dispatches, not a multiple of the timestamp period %u",
		    j->ndisp, j->time_every);
	need(&r, (uint64_t)j->ndisp * 44, "dispatch table");
	j->disp = xcalloc(j->ndisp, sizeof *j->disp);
	for (uint32_t i = 0; i < j->ndisp; i++) {
		dispatch *d = &j->disp[i];
		uint32_t n = rd_u32(&r, "SPIR-V length");
		if (n == 0) {
			/* The module of an earlier dispatch, sent once. */
			uint32_t from = rd_u32(&r, "shared SPIR-V dispatch");
			if (from >= i)
				die(EXIT_USAGE,
				    "dispatch %u: shares the SPIR-V of dispatch %u, not an earlier one",
				    i, from);
			d->code = j->disp[from].code;
			d->code_bytes = j->disp[from].code_bytes;
		} else {
			const uint8_t *code = rd_bytes(&r, n, "SPIR-V");
			if (n % 4 != 0)
				die(EXIT_USAGE,
				    "dispatch %u: SPIR-V is %u bytes, not a positive multiple of 4",
				    i, n);
			d->code = xcalloc(n / 4, 4);
			memcpy(d->code, code, n);
			d->code_bytes = n;
		}
		d->entry = rd_string(&r, "entry point");
		if (!*d->entry)
			die(EXIT_USAGE, "dispatch %u: empty entry point name", i);
		d->nspec = rd_u32(&r, "spec constant count");
		need(&r, (uint64_t)d->nspec * 8, "spec constants");
		d->spec = xcalloc(d->nspec, sizeof *d->spec);
		for (uint32_t k = 0; k < d->nspec; k++) {
			d->spec[k].id = rd_u32(&r, "spec constant id");
			d->spec[k].value = rd_u32(&r, "spec constant value");
			for (uint32_t m = 0; m < k; m++)
				if (d->spec[m].id == d->spec[k].id)
					die(EXIT_USAGE,
					    "dispatch %u: specialization constant %u given twice",
					    i, d->spec[k].id);
		}
		d->push_bytes = rd_u32(&r, "push constant length");
		const uint8_t *push = rd_bytes(&r, d->push_bytes, "push constants");
		d->push_padded = (d->push_bytes + 3u) & ~3u;
		d->push = xcalloc(1, d->push_padded);
		if (d->push_bytes)
			memcpy(d->push, push, d->push_bytes);
		for (int k = 0; k < 3; k++)
			d->groups[k] = rd_u32(&r, "group count");
		d->nbind = rd_u32(&r, "binding count");
		need(&r, (uint64_t)d->nbind * 4, "bindings");
		d->bind = xcalloc(d->nbind, sizeof *d->bind);
		d->bind_off = xcalloc(d->nbind, sizeof *d->bind_off);
		d->bind_range = xcalloc(d->nbind, sizeof *d->bind_range);
		for (uint32_t k = 0; k < d->nbind; k++) {
			d->bind[k] = rd_u32(&r, "binding");
			if (d->bind[k] >= j->nbuf)
				die(EXIT_USAGE,
				    "dispatch %u: binding %u names buffer %u, the job has %u buffers",
				    i, k, d->bind[k], j->nbuf);
		}
		d->required_subgroup_size = rd_u32(&r, "required subgroup size");
		d->flags = rd_u32(&r, "dispatch flags");
		if (d->flags & ~(FLAG_FULL_SUBGROUPS | FLAG_BIND_RANGES))
			die(EXIT_USAGE, "dispatch %u: unknown dispatch flags 0x%x", i, d->flags);
		if (d->flags & FLAG_BIND_RANGES) {
			need(&r, (uint64_t)d->nbind * 16, "binding ranges");
			for (uint32_t k = 0; k < d->nbind; k++) {
				d->bind_off[k] = rd_u64(&r, "binding offset");
				d->bind_range[k] = rd_u64(&r, "binding range");
				uint64_t size = j->buf_size[d->bind[k]];
				uint64_t off = d->bind_off[k], end = off + d->bind_range[k];
				if (off > size || end > size || end < off)
					die(EXIT_USAGE,
					    "dispatch %u: binding %u: bytes [%llu, %llu) of buffer %u, "
					    "which has %llu",
					    i, k, (unsigned long long)off, (unsigned long long)end,
					    d->bind[k], (unsigned long long)size);
			}
		}
	}
	if (r.off != r.n)
		die(EXIT_USAGE, "job file: %zu trailing bytes after the last dispatch",
		    r.n - r.off);
}

/* ------------------------------------------------------------------------ */
/* SPIR-V inspection: entry point and workgroup size                          */

enum { SPV_MAGIC = 0x07230203u };
enum {
	OP_CAPABILITY = 17,
	OP_ENTRY_POINT = 15,
	OP_EXECUTION_MODE = 16,
	OP_CONSTANT = 43,
	OP_CONSTANT_COMPOSITE = 44,
	OP_SPEC_CONSTANT = 50,
	OP_SPEC_CONSTANT_COMPOSITE = 51,
	OP_DECORATE = 71,
	OP_EXECUTION_MODE_ID = 331,
};
enum { CAP_FLOAT64 = 10, CAP_DENORM_PRESERVE = 4464 };
enum { MODEL_GLCOMPUTE = 5, MODE_LOCAL_SIZE = 17, MODE_LOCAL_SIZE_ID = 38 };
enum { DECO_SPEC_ID = 1, DECO_BUILTIN = 11, BUILTIN_WORKGROUP_SIZE = 25 };

typedef struct {
	uint8_t kind; /* 0 unknown, 1 constant, 2 spec constant, 3 composite */
	uint8_t has_spec_id;
	uint32_t value, spec_id;
	uint32_t parts[3];
} spv_id;

static int resolve_u32(const spv_id *ids, uint32_t bound, uint32_t id,
		       const dispatch *d, uint32_t *out)
{
	if (id >= bound)
		return 0;
	const spv_id *s = &ids[id];
	if (s->kind == 1) {
		*out = s->value;
		return 1;
	}
	if (s->kind == 2) {
		*out = s->value;
		if (s->has_spec_id)
			for (uint32_t k = 0; k < d->nspec; k++)
				if (d->spec[k].id == s->spec_id)
					*out = d->spec[k].value;
		return 1;
	}
	return 0;
}

/* Checks the module's header and instruction stream, finds the GLCompute
 * entry point named d->entry (exit 1 when missing, listing the ones there
 * are) and, where it can, the workgroup size after specialization. */
static void inspect_spirv(uint32_t index, dispatch *d)
{
	const uint32_t *w = d->code;
	size_t n = d->code_bytes / 4;
	if (n < 5 || w[0] != SPV_MAGIC)
		die(EXIT_USAGE,
		    "dispatch %u: not a SPIR-V module (first word 0x%08x, want 0x%08x "
		    "little-endian)",
		    index, n ? w[0] : 0, SPV_MAGIC);
	uint32_t bound = w[3];
	if (bound == 0 || bound > (1u << 24))
		die(EXIT_USAGE, "dispatch %u: malformed SPIR-V: id bound %u", index, bound);
	spv_id *ids = xcalloc(bound, sizeof *ids);
	char names[1024] = "";
	int64_t entry_id = -1;
	uint32_t literal[3] = {1, 1, 1}, size_ids[3] = {0, 0, 0};
	int have_literal = 0, have_ids = 0;
	uint32_t workgroup_builtin = 0;

	for (size_t i = 5; i < n;) {
		uint32_t wc = w[i] >> 16, op = w[i] & 0xffffu;
		if (wc == 0 || wc > n - i)
			die(EXIT_USAGE,
			    "dispatch %u: malformed SPIR-V: instruction %u at word %zu has "
			    "word count %u, the module has %zu words",
			    index, op, i, wc, n);
		const uint32_t *in = w + i;
		switch (op) {
		case OP_CAPABILITY:
			if (wc >= 2 && in[1] == CAP_FLOAT64)
				d->needs_float64 = 1;
			if (wc >= 2 && in[1] == CAP_DENORM_PRESERVE)
				d->needs_denorm_preserve = 1;
			break;
		case OP_ENTRY_POINT:
			if (wc >= 4) {
				const char *name = (const char *)(in + 3);
				size_t max = (wc - 3) * 4;
				if (!memchr(name, 0, max))
					die(EXIT_USAGE,
					    "dispatch %u: malformed SPIR-V: unterminated "
					    "entry point name",
					    index);
				if (in[1] == MODEL_GLCOMPUTE) {
					if (strlen(names) + strlen(name) + 4 < sizeof names) {
						if (names[0])
							strcat(names, ", ");
						strcat(names, name);
					}
					if (strcmp(name, d->entry) == 0)
						entry_id = in[2];
				}
			}
			break;
		case OP_EXECUTION_MODE:
			if (wc >= 6 && in[2] == MODE_LOCAL_SIZE && (int64_t)in[1] == entry_id) {
				literal[0] = in[3], literal[1] = in[4], literal[2] = in[5];
				have_literal = 1;
			}
			break;
		case OP_EXECUTION_MODE_ID:
			if (wc >= 6 && in[2] == MODE_LOCAL_SIZE_ID && (int64_t)in[1] == entry_id) {
				size_ids[0] = in[3], size_ids[1] = in[4], size_ids[2] = in[5];
				have_ids = 1;
			}
			break;
		case OP_DECORATE:
			if (wc >= 4 && in[1] < bound) {
				if (in[2] == DECO_SPEC_ID) {
					ids[in[1]].has_spec_id = 1;
					ids[in[1]].spec_id = in[3];
				} else if (in[2] == DECO_BUILTIN && in[3] == BUILTIN_WORKGROUP_SIZE) {
					workgroup_builtin = in[1];
				}
			}
			break;
		case OP_CONSTANT:
		case OP_SPEC_CONSTANT:
			if (wc >= 4 && in[2] < bound) {
				ids[in[2]].kind = op == OP_CONSTANT ? 1 : 2;
				ids[in[2]].value = in[3];
			}
			break;
		case OP_CONSTANT_COMPOSITE:
		case OP_SPEC_CONSTANT_COMPOSITE:
			if (wc == 6 && in[2] < bound) {
				ids[in[2]].kind = 3;
				memcpy(ids[in[2]].parts, in + 3, sizeof ids[in[2]].parts);
			}
			break;
		}
		i += wc;
	}
	if (entry_id < 0)
		die(EXIT_USAGE,
		    "dispatch %u: entry point \"%s\" not found in the SPIR-V module "
		    "(its GLCompute entry points: %s)",
		    index, d->entry, names[0] ? names : "none");

	d->local_known = 0;
	if (workgroup_builtin && workgroup_builtin < bound && ids[workgroup_builtin].kind == 3) {
		const spv_id *c = &ids[workgroup_builtin];
		d->local_known = resolve_u32(ids, bound, c->parts[0], d, &d->local[0]) &&
				 resolve_u32(ids, bound, c->parts[1], d, &d->local[1]) &&
				 resolve_u32(ids, bound, c->parts[2], d, &d->local[2]);
	} else if (workgroup_builtin) {
		d->local_known = 0;
	} else if (have_ids) {
		d->local_known = resolve_u32(ids, bound, size_ids[0], d, &d->local[0]) &&
				 resolve_u32(ids, bound, size_ids[1], d, &d->local[1]) &&
				 resolve_u32(ids, bound, size_ids[2], d, &d->local[2]);
	} else if (have_literal) {
		memcpy(d->local, literal, sizeof d->local);
		d->local_known = 1;
	}
	free(ids);
}

/* ------------------------------------------------------------------------ */
/* Devices                                                                    */

typedef struct {
	VkPhysicalDevice pd;
	VkPhysicalDeviceProperties props;
	uint32_t api; /* min(instance API, device API): what we may use */
	uint32_t subgroup_size;
	VkSubgroupFeatureFlags subgroup_ops;
	VkShaderStageFlags subgroup_stages;
	int size_control_ext;   /* VK_EXT_subgroup_size_control is exposed */
	int executable_props;   /* VK_KHR_pipeline_executable_properties is exposed */
	int size_control_props; /* min/max below are valid */
	uint32_t min_subgroup, max_subgroup, max_workgroup_subgroups;
	VkShaderStageFlags required_size_stages;
	int size_control;   /* feature subgroupSizeControl */
	int full_subgroups; /* feature computeFullSubgroups */
	int portability_subset;
	int float64; /* feature shaderFloat64 */
	int denorm_preserve32; /* float controls: shaderDenormPreserveFloat32 */
	int have_driver;
	char driver_name[VK_MAX_DRIVER_NAME_SIZE];
	char driver_info[VK_MAX_DRIVER_INFO_SIZE];
} device_info;

static int at_least(uint32_t version, uint32_t major, uint32_t minor)
{
	uint32_t ma = VK_API_VERSION_MAJOR(version), mi = VK_API_VERSION_MINOR(version);
	return ma > major || (ma == major && mi >= minor);
}

static void query_device(VkPhysicalDevice pd, uint32_t instance_api, device_info *di)
{
	memset(di, 0, sizeof *di);
	di->pd = pd;
	vkGetPhysicalDeviceProperties(pd, &di->props);
	uint32_t dev_api = di->props.apiVersion;
	di->api = at_least(dev_api, VK_API_VERSION_MAJOR(instance_api),
			   VK_API_VERSION_MINOR(instance_api))
			  ? instance_api
			  : dev_api;

	uint32_t next = 0;
	VKCHECK("vkEnumerateDeviceExtensionProperties",
		vkEnumerateDeviceExtensionProperties(pd, NULL, &next, NULL));
	VkExtensionProperties *ext = xcalloc(next, sizeof *ext);
	VKCHECK("vkEnumerateDeviceExtensionProperties",
		vkEnumerateDeviceExtensionProperties(pd, NULL, &next, ext));
	for (uint32_t i = 0; i < next; i++) {
		if (!strcmp(ext[i].extensionName, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME))
			di->size_control_ext = 1;
		if (!strcmp(ext[i].extensionName, "VK_KHR_portability_subset"))
			di->portability_subset = 1;
		if (!strcmp(ext[i].extensionName,
			    VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME))
			di->executable_props = 1;
	}
	free(ext);
	if (!at_least(di->api, 1, 1))
		return; /* no subgroup queries below Vulkan 1.1 */
	int size_ctl = at_least(di->api, 1, 3) || di->size_control_ext;
	VkPhysicalDeviceFeatures2 core = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
	vkGetPhysicalDeviceFeatures2(pd, &core);
	di->float64 = core.features.shaderFloat64 == VK_TRUE;

	VkPhysicalDeviceSubgroupProperties sg = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
	VkPhysicalDeviceSubgroupSizeControlPropertiesEXT sgc = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
	VkPhysicalDeviceDriverProperties drv = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
	VkPhysicalDeviceFloatControlsProperties fc = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FLOAT_CONTROLS_PROPERTIES};
	VkPhysicalDeviceProperties2 p2 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = &sg};
	void **tail = &sg.pNext;
	if (size_ctl) {
		*tail = &sgc;
		tail = &sgc.pNext;
	}
	if (at_least(di->api, 1, 2)) {
		*tail = &drv;
		tail = &drv.pNext;
		*tail = &fc; /* float controls are core in 1.2 */
		tail = &fc.pNext;
	}
	vkGetPhysicalDeviceProperties2(pd, &p2);
	di->denorm_preserve32 = at_least(di->api, 1, 2) && fc.shaderDenormPreserveFloat32 == VK_TRUE;
	di->subgroup_size = sg.subgroupSize;
	di->subgroup_ops = sg.supportedOperations;
	di->subgroup_stages = sg.supportedStages;
	if (size_ctl) {
		di->size_control_props = 1;
		di->min_subgroup = sgc.minSubgroupSize;
		di->max_subgroup = sgc.maxSubgroupSize;
		di->max_workgroup_subgroups = sgc.maxComputeWorkgroupSubgroups;
		di->required_size_stages = sgc.requiredSubgroupSizeStages;

		VkPhysicalDeviceSubgroupSizeControlFeaturesEXT f = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT};
		VkPhysicalDeviceFeatures2 f2 = {
			.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = &f};
		vkGetPhysicalDeviceFeatures2(pd, &f2);
		di->size_control = f.subgroupSizeControl == VK_TRUE;
		di->full_subgroups = f.computeFullSubgroups == VK_TRUE;
	}
	if (at_least(di->api, 1, 2)) {
		di->have_driver = 1;
		memcpy(di->driver_name, drv.driverName, sizeof di->driver_name);
		memcpy(di->driver_info, drv.driverInfo, sizeof di->driver_info);
		di->driver_name[sizeof di->driver_name - 1] = 0;
		di->driver_info[sizeof di->driver_info - 1] = 0;
	}
}

static const char *device_type(VkPhysicalDeviceType t)
{
	switch (t) {
	case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
		return "integrated";
	case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
		return "discrete";
	case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
		return "virtual";
	case VK_PHYSICAL_DEVICE_TYPE_CPU:
		return "cpu";
	default:
		return "other";
	}
}

static void subgroup_ops_string(VkSubgroupFeatureFlags f, char *out, size_t len)
{
	static const struct {
		VkSubgroupFeatureFlags bit;
		const char *name;
	} ops[] = {
		{VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
		{VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
		{VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
		{VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
		{VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
		{VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
		{VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
		{VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"},
		{VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV, "partitioned_nv"},
	};
	out[0] = 0;
	for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
		if ((f & ops[i].bit) && strlen(out) + strlen(ops[i].name) + 2 < len) {
			if (out[0])
				strcat(out, ",");
			strcat(out, ops[i].name);
		}
}

/* One line per device: tab-separated key=value fields (values never hold a
 * tab or newline; names are sanitized). */
static void print_device(FILE *f, uint32_t index, device_info *di)
{
	char ops[256];
	char name[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE];
	snprintf(name, sizeof name, "%s", di->props.deviceName);
	for (char *c = name; *c; c++)
		if (*c == '\t' || *c == '\n' || *c == '\r')
			*c = ' ';
	subgroup_ops_string(di->subgroup_ops, ops, sizeof ops);
	uint32_t v = di->props.apiVersion;
	fprintf(f, "index=%u\tname=%s\ttype=%s\tapi=%u.%u.%u\tvendor=0x%04x\tdevice_id=0x%04x",
		index, name, device_type(di->props.deviceType), VK_API_VERSION_MAJOR(v),
		VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v), di->props.vendorID,
		di->props.deviceID);
	if (di->have_driver) {
		for (char *c = di->driver_info; *c; c++)
			if (*c == '\t' || *c == '\n' || *c == '\r')
				*c = ' ';
		fprintf(f, "\tdriver=%s\tdriver_info=%s", di->driver_name, di->driver_info);
	}
	fprintf(f, "\tsubgroup=%u", di->subgroup_size);
	if (di->size_control_props)
		fprintf(f, "\tmin_subgroup=%u\tmax_subgroup=%u\tmax_workgroup_subgroups=%u",
			di->min_subgroup, di->max_subgroup, di->max_workgroup_subgroups);
	fprintf(f, "\tfloat64=%d", di->float64);
	fprintf(f, "\tdenorm_preserve32=%d", di->denorm_preserve32);
	fprintf(f, "\tsize_control=%d\tfull_subgroups=%d\tsubgroup_compute=%d\tops=%s\n",
		di->size_control &&
			(di->required_size_stages & VK_SHADER_STAGE_COMPUTE_BIT) != 0,
		di->full_subgroups, (di->subgroup_stages & VK_SHADER_STAGE_COMPUTE_BIT) != 0,
		ops);
}

/* Fails softly (a note, return 0) when trying drivers one by one. */
#define SOFT_FAIL(code, ...)                                                   \
	do {                                                                   \
		if (icd_mode) {                                                \
			note(__VA_ARGS__);                                     \
			return 0;                                              \
		}                                                              \
		die(code, __VA_ARGS__);                                        \
	} while (0)

static uint32_t create_instance(const backend *b, VkInstance *inst)
{
	get_instance_proc = b->gipa;
	PFN_vkCreateInstance create =
		(PFN_vkCreateInstance)get_instance_proc(NULL, "vkCreateInstance");
	PFN_vkEnumerateInstanceVersion version =
		(PFN_vkEnumerateInstanceVersion)get_instance_proc(NULL, "vkEnumerateInstanceVersion");
	PFN_vkEnumerateInstanceExtensionProperties exts =
		(PFN_vkEnumerateInstanceExtensionProperties)get_instance_proc(
			NULL, "vkEnumerateInstanceExtensionProperties");
	if (!create || !exts)
		SOFT_FAIL(EXIT_NO_DEVICE, "no Vulkan device: %s is unusable (no vkCreateInstance); %s",
			  b->label, NO_DEVICE_HINT);
	uint32_t loader = VK_MAKE_VERSION(1, 0, 0);
	if (version && version(&loader) != VK_SUCCESS)
		loader = VK_MAKE_VERSION(1, 0, 0);
	if (!at_least(loader, 1, 1))
		SOFT_FAIL(EXIT_UNSUPPORTED, "%s supports only Vulkan %u.%u; vkrun needs 1.1 or newer",
			  b->label, VK_API_VERSION_MAJOR(loader), VK_API_VERSION_MINOR(loader));
	uint32_t api = at_least(loader, 1, 3)   ? VK_MAKE_VERSION(1, 3, 0)
		       : at_least(loader, 1, 2) ? VK_MAKE_VERSION(1, 2, 0)
						: VK_MAKE_VERSION(1, 1, 0);

	/* Portability enumeration lists MoltenVK-style drivers too; harmless elsewhere. */
	uint32_t n = 0;
	const char *enabled[1];
	uint32_t nenabled = 0;
	VkInstanceCreateFlags flags = 0;
	VkResult r = exts(NULL, &n, NULL);
	if (r == VK_SUCCESS && n) {
		VkExtensionProperties *e = xcalloc(n, sizeof *e);
		if (exts(NULL, &n, e) == VK_SUCCESS)
			for (uint32_t i = 0; i < n; i++)
				if (!strcmp(e[i].extensionName, "VK_KHR_portability_enumeration")) {
					enabled[nenabled++] = "VK_KHR_portability_enumeration";
					flags |= 0x00000001; /* ENUMERATE_PORTABILITY_BIT_KHR */
				}
		free(e);
	}
	VkApplicationInfo app = {
		.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO,
		.pApplicationName = "kernelgen-vkrun",
		.pEngineName = "kernelgen",
		.apiVersion = api,
	};
	VkInstanceCreateInfo ci = {
		.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO,
		.flags = flags,
		.pApplicationInfo = &app,
		.enabledExtensionCount = nenabled,
		.ppEnabledExtensionNames = enabled,
	};
	r = create(&ci, NULL, inst);
	if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
		SOFT_FAIL(EXIT_NO_DEVICE,
			  "no Vulkan device: vkCreateInstance found no driver "
			  "(VK_ERROR_INCOMPATIBLE_DRIVER); %s",
			  NO_DEVICE_HINT);
	if (r != VK_SUCCESS)
		SOFT_FAIL(EXIT_VULKAN, "vkCreateInstance failed (%s): %s (%d)", b->label,
			  result_name(r), (int)r);
#define LOAD(f) f = (PFN_##f)must_load(*inst, #f);
	INSTANCE_FUNCS(LOAD)
#undef LOAD
	return api;
}

/* The instance's devices; none is exit 4 through the loader, a note when
 * trying drivers one by one. */
static VkPhysicalDevice *physical_devices(const backend *b, VkInstance inst, uint32_t *count)
{
	*count = 0;
	VkResult r = vkEnumeratePhysicalDevices(inst, count, NULL);
	if (r == VK_SUCCESS && *count > 0) {
		VkPhysicalDevice *pds = xcalloc(*count, sizeof *pds);
		r = vkEnumeratePhysicalDevices(inst, count, pds);
		if ((r == VK_SUCCESS || r == VK_INCOMPLETE) && *count > 0)
			return pds;
		free(pds);
	}
	*count = 0;
	if (icd_mode) {
		if (r == VK_SUCCESS)
			note("driver %s: no device", b->label);
		else
			note("driver %s: no device (vkEnumeratePhysicalDevices: %s)", b->label,
			     result_name(r));
		return NULL;
	}
	if (r == VK_SUCCESS || r == VK_INCOMPLETE || r == VK_ERROR_INITIALIZATION_FAILED)
		die(EXIT_NO_DEVICE, "no Vulkan device: the loader found no physical device; %s",
		    NO_DEVICE_HINT);
	VKCHECK("vkEnumeratePhysicalDevices", r);
	return NULL;
}

typedef struct {
	VkInstance inst;
	uint32_t api;
	VkPhysicalDevice *pds;
	uint32_t n;
} session;

static int open_session(uint32_t index, session *s)
{
	memset(s, 0, sizeof *s);
	s->api = create_instance(&backends[index], &s->inst);
	if (!s->api)
		return 0;
	s->pds = physical_devices(&backends[index], s->inst, &s->n);
	if (!s->n) {
		vkDestroyInstance(s->inst, NULL);
		return 0;
	}
	return 1;
}

static void close_session(session *s)
{
	free(s->pds);
	vkDestroyInstance(s->inst, NULL);
}

static void die_no_device(void)
{
	die(EXIT_NO_DEVICE, "no Vulkan device: %s; %s", notes[0] ? notes : "none found",
	    NO_DEVICE_HINT);
}

static int contains_fold(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] &&
		       tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return 1;
	}
	return n == 0;
}

static int list_devices(void)
{
	load_backends();
	uint32_t global = 0;
	for (uint32_t b = 0; b < nbackends; b++) {
		session s;
		if (!open_session(b, &s))
			continue;
		for (uint32_t i = 0; i < s.n; i++) {
			device_info di;
			query_device(s.pds[i], s.api, &di);
			print_device(stdout, global++, &di);
		}
		close_session(&s);
	}
	if (global == 0)
		die_no_device();
	if (fflush(stdout) != 0)
		die(EXIT_USAGE, "writing the device list: %s", strerror(errno));
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Running a job                                                              */

typedef struct {
	VkBuffer buf;
	VkDeviceMemory mem;
	uint8_t *map;
	VkDeviceSize alloc_size;
} gpu_buffer;

static uint32_t pick_memory_type(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits)
{
	const VkMemoryPropertyFlags want =
		VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
	int64_t best = -1;
	for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
		if (!(bits & (1u << i)) || (f & want) != want)
			continue;
		if (best < 0)
			best = i;
		/* Cached memory reads back much faster. */
		if ((f & VK_MEMORY_PROPERTY_HOST_CACHED_BIT) &&
		    !(mp->memoryTypes[best].propertyFlags & VK_MEMORY_PROPERTY_HOST_CACHED_BIT))
			best = i;
	}
	if (best < 0)
		die(EXIT_UNSUPPORTED, "the device has no host-visible, host-coherent memory type "
				      "for storage buffers");
	return (uint32_t)best;
}

static void check_dispatch(uint32_t i, dispatch *d, const device_info *di, const job *j)
{
	const VkPhysicalDeviceLimits *lim = &di->props.limits;
	inspect_spirv(i, d);
	if (d->needs_float64 && !di->float64)
		die(EXIT_UNSUPPORTED,
		    "dispatch %u: the shader uses 64-bit floats (SPIR-V capability Float64), "
		    "but the device does not offer shaderFloat64",
		    i);
	/* The mode is only guaranteed to take effect where the device says so
	 * (the float controls properties); elsewhere it would silently not. */
	if (d->needs_denorm_preserve && !di->denorm_preserve32)
		die(EXIT_UNSUPPORTED,
		    "dispatch %u: the shader asks to preserve 32-bit denormals (SPIR-V "
		    "DenormPreserve), but the device does not offer shaderDenormPreserveFloat32; "
		    "use the shader built without KG_DENORM_PRESERVE",
		    i);
	if (d->push_padded > lim->maxPushConstantsSize)
		die(EXIT_UNSUPPORTED,
		    "dispatch %u: %u bytes of push constants, the device allows %u", i,
		    d->push_bytes, lim->maxPushConstantsSize);
	if (d->nbind > lim->maxPerStageDescriptorStorageBuffers)
		die(EXIT_UNSUPPORTED,
		    "dispatch %u: %u storage buffers, the device allows %u per stage", i,
		    d->nbind, lim->maxPerStageDescriptorStorageBuffers);
	for (uint32_t k = 0; k < d->nbind; k++) {
		uint64_t range = d->bind_range[k] ? d->bind_range[k]
						  : j->buf_size[d->bind[k]] - d->bind_off[k];
		if (range > lim->maxStorageBufferRange)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: binding %u covers %llu bytes of buffer %u, the device's "
			    "maxStorageBufferRange is %u",
			    i, k, (unsigned long long)range, d->bind[k],
			    lim->maxStorageBufferRange);
		if (d->bind_off[k] % lim->minStorageBufferOffsetAlignment != 0)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: binding %u at offset %llu, the device's "
			    "minStorageBufferOffsetAlignment is %llu",
			    i, k, (unsigned long long)d->bind_off[k],
			    (unsigned long long)lim->minStorageBufferOffsetAlignment);
	}
	for (int k = 0; k < 3; k++)
		if (d->groups[k] > lim->maxComputeWorkGroupCount[k])
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: %u workgroups in dimension %c, the device allows %u", i,
			    d->groups[k], "xyz"[k], lim->maxComputeWorkGroupCount[k]);
	uint64_t invocations = 0;
	if (d->local_known) {
		invocations = (uint64_t)d->local[0] * d->local[1] * d->local[2];
		for (int k = 0; k < 3; k++)
			if (d->local[k] == 0 || d->local[k] > lim->maxComputeWorkGroupSize[k])
				die(EXIT_UNSUPPORTED,
				    "dispatch %u: local_size_%c = %u, the device allows 1..%u", i,
				    "xyz"[k], d->local[k], lim->maxComputeWorkGroupSize[k]);
		if (invocations > lim->maxComputeWorkGroupInvocations)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: workgroup of %llu invocations, the device allows %u", i,
			    (unsigned long long)invocations, lim->maxComputeWorkGroupInvocations);
	}
	uint32_t req = d->required_subgroup_size;
	if (req) {
		if (!di->size_control)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: required subgroup size %u, but the device does not "
			    "support subgroupSizeControl (Vulkan 1.3 or VK_EXT_subgroup_size_control)",
			    i, req);
		if (!(di->required_size_stages & VK_SHADER_STAGE_COMPUTE_BIT))
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: required subgroup size %u, but the device cannot "
			    "require a subgroup size in compute shaders",
			    i, req);
		if ((req & (req - 1)) != 0 || req < di->min_subgroup || req > di->max_subgroup)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: required subgroup size %u is not a power of two in "
			    "the device's range [%u, %u]",
			    i, req, di->min_subgroup, di->max_subgroup);
		if (d->local_known && invocations > (uint64_t)req * di->max_workgroup_subgroups)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: workgroup of %llu invocations exceeds required subgroup "
			    "size %u x maxComputeWorkgroupSubgroups %u",
			    i, (unsigned long long)invocations, req, di->max_workgroup_subgroups);
	}
	if (d->flags & FLAG_FULL_SUBGROUPS) {
		if (!di->full_subgroups)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: full subgroups required, but the device does not support "
			    "computeFullSubgroups (Vulkan 1.3 or VK_EXT_subgroup_size_control)",
			    i);
		uint32_t unit = req ? req : di->max_subgroup;
		if (d->local_known && unit && d->local[0] % unit != 0)
			die(EXIT_UNSUPPORTED,
			    "dispatch %u: full subgroups need local_size_x (%u) to be a multiple "
			    "of %s (%u)",
			    i, d->local[0], req ? "the required subgroup size" : "maxSubgroupSize",
			    unit);
	}
}

/* Opens the session holding the selected device (devices are numbered
 * across drivers when there is no loader). */
static void select_device(const job *j, session *out, device_info *di)
{
	load_backends();
	char list[2048] = "";
	uint32_t global = 0;
	for (uint32_t b = 0; b < nbackends; b++) {
		session s;
		if (!open_session(b, &s))
			continue;
		for (uint32_t i = 0; i < s.n; i++, global++) {
			query_device(s.pds[i], s.api, di);
			int match = j->device_index >= 0 ? global == (uint32_t)j->device_index
				    : j->device_name[0]
					    ? contains_fold(di->props.deviceName, j->device_name)
					    : 1;
			if (match) {
				*out = s;
				return;
			}
			char one[VK_MAX_PHYSICAL_DEVICE_NAME_SIZE + 16];
			snprintf(one, sizeof one, "%s#%u %s", global ? ", " : "", global,
				 di->props.deviceName);
			if (strlen(list) + strlen(one) < sizeof list)
				strcat(list, one);
		}
		close_session(&s);
	}
	if (global == 0)
		die_no_device();
	if (j->device_index >= 0)
		die(EXIT_NO_DEVICE, "no Vulkan device #%d: there are %u devices: %s",
		    j->device_index, global, list);
	die(EXIT_NO_DEVICE, "no Vulkan device whose name contains \"%s\"; devices: %s",
	    j->device_name, list);
}

static void write_all(FILE *f, const void *p, size_t n, const char *path)
{
	if (n && fwrite(p, 1, n, f) != n)
		die(EXIT_USAGE, "writing %s: %s", path, strerror(errno));
}

static void write_u32(FILE *f, uint32_t v, const char *path)
{
	uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
	write_all(f, b, 4, path);
}

static void write_u64(FILE *f, uint64_t v, const char *path)
{
	write_u32(f, (uint32_t)v, path);
	write_u32(f, (uint32_t)(v >> 32), path);
}

/* Writes n bytes of the pattern (len bytes, repeated) starting at byte phase
 * of the repetition; zeros when the pattern is empty. */
static void fill_tiled(uint8_t *dst, uint64_t phase, uint64_t n, const uint8_t *pat,
		       uint64_t len)
{
	if (len == 0) {
		memset(dst, 0, (size_t)n);
		return;
	}
	phase %= len;
	while (n) {
		uint64_t c = len - phase < n ? len - phase : n;
		memcpy(dst, pat + phase, (size_t)c);
		dst += c, n -= c, phase = 0;
	}
}

/* Device-local memory, preferring a type the host cannot map: on a discrete
 * GPU the mappable device-local heap may be a small BAR window. */
static uint32_t pick_device_memory(const VkPhysicalDeviceMemoryProperties *mp, uint32_t bits)
{
	int64_t best = -1;
	for (uint32_t i = 0; i < mp->memoryTypeCount; i++) {
		VkMemoryPropertyFlags f = mp->memoryTypes[i].propertyFlags;
		if (!(bits & (1u << i)) || !(f & VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT))
			continue;
		if (best < 0 || ((mp->memoryTypes[best].propertyFlags &
				  VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) &&
				 !(f & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)))
			best = i;
	}
	if (best < 0)
		die(EXIT_UNSUPPORTED, "the device has no device-local memory type for storage buffers");
	return (uint32_t)best;
}

static void make_buffer(VkDevice dev, const VkPhysicalDeviceMemoryProperties *mp,
			VkDeviceSize size, int device_local, gpu_buffer *b)
{
	VkBufferCreateInfo bci = {
		.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO,
		.size = size,
		.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
			 VK_BUFFER_USAGE_TRANSFER_DST_BIT,
		.sharingMode = VK_SHARING_MODE_EXCLUSIVE,
	};
	VKCHECK("vkCreateBuffer", vkCreateBuffer(dev, &bci, NULL, &b->buf));
	VkMemoryRequirements req;
	vkGetBufferMemoryRequirements(dev, b->buf, &req);
	VkMemoryAllocateInfo mai = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO,
		.allocationSize = req.size,
		.memoryTypeIndex = device_local ? pick_device_memory(mp, req.memoryTypeBits)
						: pick_memory_type(mp, req.memoryTypeBits),
	};
	VKCHECK("vkAllocateMemory", vkAllocateMemory(dev, &mai, NULL, &b->mem));
	VKCHECK("vkBindBufferMemory", vkBindBufferMemory(dev, b->buf, b->mem, 0));
	b->alloc_size = req.size;
	b->map = NULL;
	if (!device_local) {
		void *p;
		VKCHECK("vkMapMemory", vkMapMemory(dev, b->mem, 0, VK_WHOLE_SIZE, 0, &p));
		b->map = p;
	}
}

static void begin_commands(VkCommandBuffer cmd)
{
	VkCommandBufferBeginInfo cbi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO,
		.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT,
	};
	VKCHECK("vkBeginCommandBuffer", vkBeginCommandBuffer(cmd, &cbi));
}

/* Ends, submits and waits for cmd; what names the work in a timeout. */
static void submit_wait(VkDevice dev, VkQueue queue, VkCommandBuffer cmd, VkFence fence,
			uint32_t timeout_ms, const char *what)
{
	VKCHECK("vkEndCommandBuffer", vkEndCommandBuffer(cmd));
	VKCHECK("vkResetFences", vkResetFences(dev, 1, &fence));
	VkSubmitInfo submit = {
		.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO,
		.commandBufferCount = 1,
		.pCommandBuffers = &cmd,
	};
	VKCHECK("vkQueueSubmit", vkQueueSubmit(queue, 1, &submit, fence));
	/* UINT32_MAX: no bound; whoever started the runner stops it. */
	uint64_t ns = timeout_ms == UINT32_MAX ? UINT64_MAX : (uint64_t)timeout_ms * 1000000ull;
	VkResult wr = vkWaitForFences(dev, 1, &fence, VK_TRUE, ns);
	if (wr == VK_TIMEOUT)
		die(EXIT_VULKAN,
		    "vkWaitForFences failed: VK_TIMEOUT (%d): %s did not finish within %u ms",
		    (int)wr, what, timeout_ms);
	VKCHECK("vkWaitForFences", wr);
}

/* Whether two dispatches can share one pipeline (and layout). */
static int same_pipeline(const dispatch *a, const dispatch *b)
{
	if (a->code_bytes != b->code_bytes || strcmp(a->entry, b->entry) != 0 ||
	    a->nspec != b->nspec || a->push_padded != b->push_padded || a->nbind != b->nbind ||
	    a->required_subgroup_size != b->required_subgroup_size ||
	    (a->flags & FLAG_FULL_SUBGROUPS) != (b->flags & FLAG_FULL_SUBGROUPS))
		return 0;
	if (a->code != b->code && memcmp(a->code, b->code, a->code_bytes) != 0)
		return 0;
	for (uint32_t k = 0; k < a->nspec; k++)
		if (a->spec[k].id != b->spec[k].id || a->spec[k].value != b->spec[k].value)
			return 0;
	return 1;
}

/* print_statistics writes the driver's statistics of dispatch i's
 * pipeline to stderr, a line per executable. */
static void print_statistics(VkDevice dev, VkPipeline pipe, uint32_t i, const dispatch *d)
{
	PFN_vkGetPipelineExecutablePropertiesKHR props_fn =
		(PFN_vkGetPipelineExecutablePropertiesKHR)vkGetDeviceProcAddr(
			dev, "vkGetPipelineExecutablePropertiesKHR");
	PFN_vkGetPipelineExecutableStatisticsKHR stats_fn =
		(PFN_vkGetPipelineExecutableStatisticsKHR)vkGetDeviceProcAddr(
			dev, "vkGetPipelineExecutableStatisticsKHR");
	if (!props_fn || !stats_fn)
		die(EXIT_VULKAN, "vkGetDeviceProcAddr: no pipeline executable functions");
	VkPipelineInfoKHR pinfo = {.sType = VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR, .pipeline = pipe};
	uint32_t nexec = 0;
	VKCHECK("vkGetPipelineExecutablePropertiesKHR", props_fn(dev, &pinfo, &nexec, NULL));
	VkPipelineExecutablePropertiesKHR *execs = xcalloc(nexec, sizeof *execs);
	for (uint32_t e = 0; e < nexec; e++)
		execs[e].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR;
	VKCHECK("vkGetPipelineExecutablePropertiesKHR", props_fn(dev, &pinfo, &nexec, execs));
	for (uint32_t e = 0; e < nexec; e++) {
		VkPipelineExecutableInfoKHR einfo = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR,
			.pipeline = pipe,
			.executableIndex = e,
		};
		uint32_t nstat = 0;
		VKCHECK("vkGetPipelineExecutableStatisticsKHR", stats_fn(dev, &einfo, &nstat, NULL));
		VkPipelineExecutableStatisticKHR *st = xcalloc(nstat, sizeof *st);
		for (uint32_t k = 0; k < nstat; k++)
			st[k].sType = VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR;
		VKCHECK("vkGetPipelineExecutableStatisticsKHR", stats_fn(dev, &einfo, &nstat, st));
		fprintf(stderr, "vkrun: stats: dispatch %u (%s) %s:", i, d->entry, execs[e].name);
		for (uint32_t k = 0; k < nstat; k++) {
			fprintf(stderr, " %s=", st[k].name);
			switch (st[k].format) {
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR:
				fprintf(stderr, "%s", st[k].value.b32 ? "true" : "false");
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR:
				fprintf(stderr, "%lld", (long long)st[k].value.i64);
				break;
			case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR:
				fprintf(stderr, "%llu", (unsigned long long)st[k].value.u64);
				break;
			default:
				fprintf(stderr, "%g", st[k].value.f64);
			}
		}
		fputc('\n', stderr);
		free(st);
	}
	free(execs);
}

static int run_job(const char *job_path, const char *out_path)
{
	size_t len;
	uint8_t *data = read_file(job_path, &len);
	job j;
	memset(&j, 0, sizeof j);
	parse_job(data, len, &j);

	session sess;
	device_info di;
	select_device(&j, &sess, &di);
	fprintf(stderr, "device: %s subgroup=%u\n", di.props.deviceName, di.subgroup_size);
	fflush(stderr);
	if (!at_least(di.api, 1, 1))
		die(EXIT_UNSUPPORTED, "device %s: Vulkan 1.1 or newer is needed",
		    di.props.deviceName);
	for (uint32_t i = 0; i < j.ndisp; i++) {
		dispatch *d = &j.disp[i];
		check_dispatch(i, d, &di, &j);
		/* Repeated dispatches (benchmarks) share their pipeline. */
		d->pipe = i;
		for (uint32_t m = 0; m < i; m++)
			if (j.disp[m].pipe == m && same_pipeline(&j.disp[m], d)) {
				d->pipe = m;
				break;
			}
	}

	/* Queue family: the first with compute. */
	uint32_t nq = 0;
	vkGetPhysicalDeviceQueueFamilyProperties(di.pd, &nq, NULL);
	VkQueueFamilyProperties *qf = xcalloc(nq, sizeof *qf);
	vkGetPhysicalDeviceQueueFamilyProperties(di.pd, &nq, qf);
	int64_t family = -1;
	uint32_t ts_bits = 0;
	for (uint32_t i = 0; i < nq && family < 0; i++)
		if (qf[i].queueFlags & VK_QUEUE_COMPUTE_BIT) {
			family = i;
			ts_bits = qf[i].timestampValidBits;
		}
	free(qf);
	if (family < 0)
		die(EXIT_UNSUPPORTED, "device %s has no compute queue", di.props.deviceName);
	if ((j.flags & JOB_TIMESTAMPS) && ts_bits == 0)
		die(EXIT_UNSUPPORTED, "device %s: its compute queue has no timestamps "
				      "(timestampValidBits 0)",
		    di.props.deviceName);

	/* Enable every supported core feature (shaders may use float16, int8,
	 * int64, 16-bit storage, subgroup size control...), except robust buffer
	 * access, which would hide out-of-bounds accesses, and the features that
	 * need setup this runner never does. */
	VkPhysicalDeviceFeatures2 f2 = {.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
	VkPhysicalDeviceVulkan11Features f11 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
	VkPhysicalDeviceVulkan12Features f12 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
#ifdef VK_VERSION_1_3
	VkPhysicalDeviceVulkan13Features f13 = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_FEATURES};
#endif
	VkPhysicalDeviceSubgroupSizeControlFeaturesEXT fsc = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES_EXT};
	const char *dev_ext[3];
	uint32_t ndev_ext = 0;
	void **tail = &f2.pNext;
	int core12 = at_least(di.api, 1, 2);
	int core13 = 0;
#ifdef VK_VERSION_1_3
	core13 = at_least(di.api, 1, 3);
#endif
	if (core12) {
		*tail = &f11;
		tail = &f11.pNext;
		*tail = &f12;
		tail = &f12.pNext;
	}
#ifdef VK_VERSION_1_3
	if (core13) {
		*tail = &f13;
		tail = &f13.pNext;
	}
#endif
	if (!core13 && di.size_control_ext) {
		*tail = &fsc;
		tail = &fsc.pNext;
		dev_ext[ndev_ext++] = VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME;
	}
	if (di.portability_subset)
		dev_ext[ndev_ext++] = "VK_KHR_portability_subset";
	/* KERNELGEN_VULKAN_STATS: the driver's statistics of each pipeline
	 * (registers, spills...) on stderr, where it can say them. */
	VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR fep = {
		.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR,
		.pipelineExecutableInfo = VK_TRUE};
	int stats = getenv("KERNELGEN_VULKAN_STATS") && *getenv("KERNELGEN_VULKAN_STATS");
	if (stats && !di.executable_props) {
		fprintf(stderr, "vkrun: KERNELGEN_VULKAN_STATS: device %s has no %s: no statistics\n",
			di.props.deviceName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
		stats = 0;
	}
	if (stats)
		dev_ext[ndev_ext++] = VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME;
	vkGetPhysicalDeviceFeatures2(di.pd, &f2);
	f2.features.robustBufferAccess = VK_FALSE;
	if (stats) /* after the query, which would clear it */
		*tail = &fep;
	if (core12) {
		f11.protectedMemory = VK_FALSE;
		f12.bufferDeviceAddressCaptureReplay = VK_FALSE;
		f12.bufferDeviceAddressMultiDevice = VK_FALSE;
	}
#ifdef VK_VERSION_1_3
	if (core13)
		f13.robustImageAccess = VK_FALSE;
#endif

	float priority = 1.0f;
	VkDeviceQueueCreateInfo qci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO,
		.queueFamilyIndex = (uint32_t)family,
		.queueCount = 1,
		.pQueuePriorities = &priority,
	};
	VkDeviceCreateInfo dci = {
		.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO,
		.pNext = &f2,
		.queueCreateInfoCount = 1,
		.pQueueCreateInfos = &qci,
		.enabledExtensionCount = ndev_ext,
		.ppEnabledExtensionNames = dev_ext,
	};
	VkDevice dev;
	VKCHECK("vkCreateDevice", vkCreateDevice(di.pd, &dci, NULL, &dev));
#define LOAD(f)                                                                \
	if (!(f = (PFN_##f)vkGetDeviceProcAddr(dev, #f)))                      \
		die(EXIT_VULKAN, "vkGetDeviceProcAddr(%s) returned NULL", #f);
	DEVICE_FUNCS(LOAD)
#undef LOAD
	VkQueue queue;
	vkGetDeviceQueue(dev, (uint32_t)family, 0, &queue);

	/* Commands: a pool whose buffers are re-recorded (uploads, read-back). */
	VkCommandPoolCreateInfo cpi = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO,
		.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT,
		.queueFamilyIndex = (uint32_t)family,
	};
	VkCommandPool cmdpool;
	VKCHECK("vkCreateCommandPool", vkCreateCommandPool(dev, &cpi, NULL, &cmdpool));
	VkCommandBufferAllocateInfo cai = {
		.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO,
		.commandPool = cmdpool,
		.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY,
		.commandBufferCount = 1,
	};
	VkCommandBuffer cmd;
	VKCHECK("vkAllocateCommandBuffers", vkAllocateCommandBuffers(dev, &cai, &cmd));
	VkFenceCreateInfo fci = {.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO};
	VkFence fence;
	VKCHECK("vkCreateFence", vkCreateFence(dev, &fci, NULL, &fence));

	/* Buffers: host-visible and filled in place, or device-local and
	 * filled through a staging buffer. */
	int device_local = (j.flags & JOB_DEVICE_LOCAL) != 0;
	VkPhysicalDeviceMemoryProperties mp;
	vkGetPhysicalDeviceMemoryProperties(di.pd, &mp);
	gpu_buffer *bufs = xcalloc(j.nbuf, sizeof *bufs);
	VkDeviceSize stage_size = 4;
	for (uint32_t i = 0; i < j.nbuf; i++) {
		VkDeviceSize size = j.buf_size[i] ? j.buf_size[i] : 4;
		make_buffer(dev, &mp, size, device_local, &bufs[i]);
		if (bufs[i].map) {
			memset(bufs[i].map, 0, (size_t)size);
			fill_tiled(bufs[i].map, 0, j.buf_size[i], j.buf_data[i], j.buf_init[i]);
		}
		if (size > stage_size)
			stage_size = size < STAGE_MAX ? size : STAGE_MAX;
	}
	gpu_buffer stage = {0};
	if (device_local) {
		make_buffer(dev, &mp, stage_size, 0, &stage);
		/* Zeros by vkCmdFillBuffer; patterns by copies, refilling the
		 * staging buffer only when a chunk's bytes differ. */
		begin_commands(cmd);
		for (uint32_t i = 0; i < j.nbuf; i++)
			if (j.buf_init[i] == 0 && j.buf_size[i] % 4 == 0)
				vkCmdFillBuffer(cmd, bufs[i].buf, 0, VK_WHOLE_SIZE, 0);
		submit_wait(dev, queue, cmd, fence, j.timeout_ms, "clearing the buffers");
		const uint8_t *last_pat = NULL;
		uint64_t last_len = 0, last_phase = 0, last_n = 0;
		for (uint32_t i = 0; i < j.nbuf; i++) {
			if (j.buf_init[i] == 0 && j.buf_size[i] % 4 == 0)
				continue;
			for (uint64_t o = 0; o < j.buf_size[i]; o += stage_size) {
				uint64_t n = j.buf_size[i] - o < stage_size ? j.buf_size[i] - o : stage_size;
				uint64_t len = j.buf_init[i], phase = len ? o % len : 0;
				if (!last_pat || last_pat != j.buf_data[i] || last_len != len ||
				    last_phase != phase || last_n != n) {
					fill_tiled(stage.map, phase, n, j.buf_data[i], len);
					last_pat = j.buf_data[i], last_len = len;
					last_phase = phase, last_n = n;
				}
				begin_commands(cmd);
				VkBufferCopy region = {0, o, n};
				vkCmdCopyBuffer(cmd, stage.buf, bufs[i].buf, 1, &region);
				submit_wait(dev, queue, cmd, fence, j.timeout_ms, "uploading the buffers");
			}
		}
	}

	/* Descriptors: a set per dispatch. Layouts and pipelines: one per
	 * distinct pipeline (d->pipe == i), shared by its repeats. */
	uint32_t nsets = 0, ndesc = 0;
	for (uint32_t i = 0; i < j.ndisp; i++)
		if (j.disp[i].nbind) {
			nsets++;
			ndesc += j.disp[i].nbind;
		}
	VkDescriptorPool pool = VK_NULL_HANDLE;
	if (nsets) {
		VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, ndesc};
		VkDescriptorPoolCreateInfo pci = {
			.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO,
			.maxSets = nsets,
			.poolSizeCount = 1,
			.pPoolSizes = &ps,
		};
		VKCHECK("vkCreateDescriptorPool", vkCreateDescriptorPool(dev, &pci, NULL, &pool));
	}
	VkDescriptorSetLayout *dsl = xcalloc(j.ndisp, sizeof *dsl);
	VkDescriptorSet *sets = xcalloc(j.ndisp, sizeof *sets);
	VkPipelineLayout *pl = xcalloc(j.ndisp, sizeof *pl);
	VkPipeline *pipes = xcalloc(j.ndisp, sizeof *pipes);
	for (uint32_t i = 0; i < j.ndisp; i++) {
		dispatch *d = &j.disp[i];
		char what[96];
		if (d->pipe != i) {
			dsl[i] = dsl[d->pipe];
			pl[i] = pl[d->pipe];
			pipes[i] = pipes[d->pipe];
		} else {
			VkDescriptorSetLayoutBinding *lb = xcalloc(d->nbind, sizeof *lb);
			for (uint32_t k = 0; k < d->nbind; k++) {
				lb[k].binding = k;
				lb[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
				lb[k].descriptorCount = 1;
				lb[k].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
			}
			VkDescriptorSetLayoutCreateInfo lci = {
				.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO,
				.bindingCount = d->nbind,
				.pBindings = lb,
			};
			snprintf(what, sizeof what, "vkCreateDescriptorSetLayout (dispatch %u)", i);
			VKCHECK(what, vkCreateDescriptorSetLayout(dev, &lci, NULL, &dsl[i]));
			free(lb);
		}
		if (d->nbind) {
			VkDescriptorSetAllocateInfo ai = {
				.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO,
				.descriptorPool = pool,
				.descriptorSetCount = 1,
				.pSetLayouts = &dsl[i],
			};
			snprintf(what, sizeof what, "vkAllocateDescriptorSets (dispatch %u)", i);
			VKCHECK(what, vkAllocateDescriptorSets(dev, &ai, &sets[i]));
			VkDescriptorBufferInfo *bi = xcalloc(d->nbind, sizeof *bi);
			VkWriteDescriptorSet *wr = xcalloc(d->nbind, sizeof *wr);
			for (uint32_t k = 0; k < d->nbind; k++) {
				bi[k].buffer = bufs[d->bind[k]].buf;
				bi[k].offset = d->bind_off[k];
				bi[k].range = d->bind_range[k] ? d->bind_range[k] : VK_WHOLE_SIZE;
				wr[k].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
				wr[k].dstSet = sets[i];
				wr[k].dstBinding = k;
				wr[k].descriptorCount = 1;
				wr[k].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
				wr[k].pBufferInfo = &bi[k];
			}
			vkUpdateDescriptorSets(dev, d->nbind, wr, 0, NULL);
			free(bi);
			free(wr);
		}
		if (d->pipe != i)
			continue;
		VkPushConstantRange range = {VK_SHADER_STAGE_COMPUTE_BIT, 0, d->push_padded};
		VkPipelineLayoutCreateInfo plci = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO,
			.setLayoutCount = d->nbind ? 1 : 0,
			.pSetLayouts = &dsl[i],
			.pushConstantRangeCount = d->push_padded ? 1 : 0,
			.pPushConstantRanges = &range,
		};
		snprintf(what, sizeof what, "vkCreatePipelineLayout (dispatch %u)", i);
		VKCHECK(what, vkCreatePipelineLayout(dev, &plci, NULL, &pl[i]));

		VkShaderModuleCreateInfo smci = {
			.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO,
			.codeSize = d->code_bytes,
			.pCode = d->code,
		};
		VkShaderModule sm;
		snprintf(what, sizeof what, "vkCreateShaderModule (dispatch %u)", i);
		VKCHECK(what, vkCreateShaderModule(dev, &smci, NULL, &sm));

		VkSpecializationMapEntry *me = xcalloc(d->nspec, sizeof *me);
		uint32_t *values = xcalloc(d->nspec, sizeof *values);
		for (uint32_t k = 0; k < d->nspec; k++) {
			me[k].constantID = d->spec[k].id;
			me[k].offset = k * 4;
			me[k].size = 4; /* bool spec constants are 32-bit too */
			values[k] = d->spec[k].value;
		}
		VkSpecializationInfo si = {
			.mapEntryCount = d->nspec,
			.pMapEntries = me,
			.dataSize = (size_t)d->nspec * 4,
			.pData = values,
		};
		VkPipelineShaderStageRequiredSubgroupSizeCreateInfoEXT rss = {
			.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_REQUIRED_SUBGROUP_SIZE_CREATE_INFO_EXT,
			.requiredSubgroupSize = d->required_subgroup_size,
		};
		VkComputePipelineCreateInfo cpci = {
			.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO,
			.stage = {
				.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO,
				.pNext = d->required_subgroup_size ? &rss : NULL,
				.flags = (d->flags & FLAG_FULL_SUBGROUPS)
						 ? VK_PIPELINE_SHADER_STAGE_CREATE_REQUIRE_FULL_SUBGROUPS_BIT_EXT
						 : 0,
				.stage = VK_SHADER_STAGE_COMPUTE_BIT,
				.module = sm,
				.pName = d->entry,
				.pSpecializationInfo = d->nspec ? &si : NULL,
			},
			.flags = stats ? VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR : 0,
			.layout = pl[i],
		};
		snprintf(what, sizeof what, "vkCreateComputePipelines (dispatch %u, entry %s)", i,
			 d->entry);
		VKCHECK(what, vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpci, NULL, &pipes[i]));
		if (stats)
			print_statistics(dev, pipes[i], i, d);
		vkDestroyShaderModule(dev, sm, NULL);
		free(me);
		free(values);
	}

	/* Timestamps: before the first dispatch and after every time_every. */
	VkQueryPool qpool = VK_NULL_HANDLE;
	uint32_t nts = 0;
	if (j.flags & JOB_TIMESTAMPS) {
		nts = j.ndisp / j.time_every + 1;
		VkQueryPoolCreateInfo qci = {
			.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO,
			.queryType = VK_QUERY_TYPE_TIMESTAMP,
			.queryCount = nts,
		};
		VKCHECK("vkCreateQueryPool", vkCreateQueryPool(dev, &qci, NULL, &qpool));
	}

	/* One command buffer: dispatch, barrier, dispatch, ..., barrier to host. */
	begin_commands(cmd);
	if (device_local) {
		/* The uploads were earlier submissions: make them visible. */
		VkMemoryBarrier up = {
			.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
			.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
			.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT,
		};
		vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
				     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &up, 0, NULL, 0,
				     NULL);
	}
	if (qpool) {
		vkCmdResetQueryPool(cmd, qpool, 0, nts);
		vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qpool, 0);
	}
	for (uint32_t i = 0; i < j.ndisp; i++) {
		dispatch *d = &j.disp[i];
		if (i > 0 && (j.flags & JOB_GGML_BARRIER)) {
			/* What ggml-vulkan records between dependent nodes on its
			 * compute queue: compute and transfer stages, shader and
			 * transfer accesses, on both sides. */
			const VkAccessFlags acc = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
						  VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
			const VkPipelineStageFlags st =
				VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
			VkMemoryBarrier mb = {
				.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
				.srcAccessMask = acc,
				.dstAccessMask = acc,
			};
			vkCmdPipelineBarrier(cmd, st, st, 0, 1, &mb, 0, NULL, 0, NULL);
		} else if (i > 0) {
			VkMemoryBarrier mb = {
				.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
				.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
				.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
						 VK_ACCESS_MEMORY_READ_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
			};
			vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
					     VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, 0, 1, &mb, 0, NULL,
					     0, NULL);
		}
		vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipes[i]);
		if (d->nbind)
			vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pl[i], 0, 1,
						&sets[i], 0, NULL);
		if (d->push_padded)
			vkCmdPushConstants(cmd, pl[i], VK_SHADER_STAGE_COMPUTE_BIT, 0,
					   d->push_padded, d->push);
		vkCmdDispatch(cmd, d->groups[0], d->groups[1], d->groups[2]);
		if (qpool && (i + 1) % j.time_every == 0)
			vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, qpool,
					    (i + 1) / j.time_every);
	}
	VkMemoryBarrier to_host = {
		.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
		.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_MEMORY_WRITE_BIT,
		.dstAccessMask = VK_ACCESS_HOST_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT,
	};
	vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT,
			     VK_PIPELINE_STAGE_HOST_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, 0, 1,
			     &to_host, 0, NULL, 0, NULL);
	submit_wait(dev, queue, cmd, fence, j.timeout_ms, "the dispatches");

	double *us = NULL;
	if (qpool) {
		uint64_t *ts = xcalloc(nts, sizeof *ts);
		VKCHECK("vkGetQueryPoolResults",
			vkGetQueryPoolResults(dev, qpool, 0, nts, (size_t)nts * 8, ts, 8,
					      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
		uint64_t mask = ts_bits >= 64 ? ~0ull : (1ull << ts_bits) - 1;
		us = xcalloc(nts, sizeof *us);
		for (uint32_t k = 0; k + 1 < nts; k++)
			us[k] = (double)((ts[k + 1] - ts[k]) & mask) *
				di.props.limits.timestampPeriod / 1000.0;
		free(ts);
	}

	/* Output: every buffer, in job order. */
	FILE *out = fopen(out_path, "wb");
	if (!out)
		die(EXIT_USAGE, "cannot create %s: %s", out_path, strerror(errno));
	write_all(out, OUT_MAGIC, 8, out_path);
	write_u32(out, FORMAT_VERSION, out_path);
	write_u32(out, di.subgroup_size, out_path);
	uint32_t name_len = (uint32_t)strlen(di.props.deviceName);
	write_u32(out, name_len, out_path);
	write_all(out, di.props.deviceName, name_len, out_path);
	write_u32(out, j.nbuf, out_path);
	for (uint32_t i = 0; i < j.nbuf; i++) {
		if (j.flags & JOB_NO_READBACK) {
			write_u64(out, 0, out_path);
			continue;
		}
		write_u64(out, j.buf_size[i], out_path);
		if (bufs[i].map) {
			write_all(out, bufs[i].map, (size_t)j.buf_size[i], out_path);
			continue;
		}
		for (uint64_t o = 0; o < j.buf_size[i]; o += stage_size) {
			uint64_t n = j.buf_size[i] - o < stage_size ? j.buf_size[i] - o : stage_size;
			begin_commands(cmd);
			VkBufferCopy region = {o, 0, n};
			vkCmdCopyBuffer(cmd, bufs[i].buf, stage.buf, 1, &region);
			VkMemoryBarrier down = {
				.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER,
				.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT,
				.dstAccessMask = VK_ACCESS_HOST_READ_BIT,
			};
			vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_TRANSFER_BIT,
					     VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &down, 0, NULL, 0,
					     NULL);
			submit_wait(dev, queue, cmd, fence, j.timeout_ms, "reading the buffers back");
			write_all(out, stage.map, (size_t)n, out_path);
		}
	}
	if (qpool) {
		/* Per group of time_every dispatches, microseconds as IEEE doubles. */
		write_all(out, TIME_MAGIC, 8, out_path);
		write_u32(out, nts - 1, out_path);
		for (uint32_t k = 0; k + 1 < nts; k++) {
			uint64_t bits;
			memcpy(&bits, &us[k], 8);
			write_u64(out, bits, out_path);
		}
	}
	if (fclose(out) != 0)
		die(EXIT_USAGE, "writing %s: %s", out_path, strerror(errno));

	/* Tear down. */
	vkDestroyFence(dev, fence, NULL);
	vkDestroyCommandPool(dev, cmdpool, NULL);
	if (qpool)
		vkDestroyQueryPool(dev, qpool, NULL);
	for (uint32_t i = 0; i < j.ndisp; i++) {
		if (j.disp[i].pipe != i)
			continue;
		vkDestroyPipeline(dev, pipes[i], NULL);
		vkDestroyPipelineLayout(dev, pl[i], NULL);
		vkDestroyDescriptorSetLayout(dev, dsl[i], NULL);
	}
	if (pool)
		vkDestroyDescriptorPool(dev, pool, NULL);
	gpu_buffer *all[2] = {bufs, &stage};
	uint32_t counts[2] = {j.nbuf, device_local ? 1 : 0};
	for (int g = 0; g < 2; g++)
		for (uint32_t i = 0; i < counts[g]; i++) {
			if (all[g][i].map)
				vkUnmapMemory(dev, all[g][i].mem);
			vkDestroyBuffer(dev, all[g][i].buf, NULL);
			vkFreeMemory(dev, all[g][i].mem, NULL);
		}
	vkDestroyDevice(dev, NULL);
	close_session(&sess);
	free(us);
	free(bufs);
	free(dsl);
	free(sets);
	free(pl);
	free(pipes);
	free(data);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], "--list"))
		return list_devices();
	if (argc == 3 && argv[1][0] != '-')
		return run_job(argv[1], argv[2]);
	fprintf(stderr,
		"usage: vkrun JOB_FILE OUT_FILE   run a kernelgen job on a Vulkan device\n"
		"       vkrun --list              list the Vulkan devices\n");
	return EXIT_USAGE;
}
