/*
 * clrun: builds OpenCL C programs and runs the jobs a kernelgen batch file
 * describes on one OpenCL device, writing every job's buffers back.
 *
 *   clrun BATCH_FILE OUT_FILE   run a batch (format: ../clrun.go)
 *   clrun --list                print every device, one per line:
 *                               platform TAB device TAB version TAB extensions
 *                               TAB the -cl-std ggml-opencl builds for (CL3.0)
 *
 * Exit codes: 0 ok; 1 usage, batch file or I/O error; 2 an OpenCL call
 * failed (the message names it and the error code); 3 a program did not
 * build (its build log follows); 4 no OpenCL platform or device.
 *
 * libOpenCL is opened with dlopen (libOpenCL.so.1, or $KERNELGEN_OPENCL_LIB),
 * so a missing ICD loader is an exit 4 with a hint, not a dynamic-linker
 * failure. Building needs only the OpenCL headers (Debian:
 * ocl-icd-opencl-dev or opencl-c-headers) and a C11 compiler:
 *
 *   cc -std=c11 -O2 -o clrun clrun.c -ldl
 *
 * Each program is built once per batch; launches of a job run in order on
 * one in-order queue (one kernel's writes are visible to the next).
 */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH_MAGIC "KGCLJOB1"
#define OUT_MAGIC "KGCLOUT1"
#define NO_DEVICE_HINT \
	"install an OpenCL driver: pocl-opencl-icd (PoCL, a CPU implementation) on Debian/Ubuntu, or the GPU vendor's; the loader is ocl-icd-libopencl1"

static void die(int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("clrun: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(code);
}

/* The OpenCL entry points clrun calls, found with dlsym. */
#define CL_FUNCS(X)                   \
	X(clGetPlatformIDs)           \
	X(clGetPlatformInfo)          \
	X(clGetDeviceIDs)             \
	X(clGetDeviceInfo)            \
	X(clCreateContext)            \
	X(clCreateCommandQueue)       \
	X(clCreateProgramWithSource)  \
	X(clBuildProgram)             \
	X(clGetProgramBuildInfo)      \
	X(clCreateKernel)             \
	X(clSetKernelArg)             \
	X(clCreateBuffer)             \
	X(clEnqueueNDRangeKernel)     \
	X(clEnqueueReadBuffer)        \
	X(clFinish)                   \
	X(clReleaseMemObject)         \
	X(clReleaseKernel)

#define DECLARE(name) static __typeof__(&name) p_##name;
CL_FUNCS(DECLARE)

static void load(void)
{
	const char *lib = getenv("KERNELGEN_OPENCL_LIB");
	void *h = dlopen(lib && *lib ? lib : "libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!h)
		die(4, "no OpenCL loader (%s): %s", dlerror(), NO_DEVICE_HINT);
#define RESOLVE(name)                                                    \
	p_##name = (__typeof__(p_##name))dlsym(h, #name);                 \
	if (!p_##name)                                                    \
		die(4, "the OpenCL loader lacks %s", #name);
	CL_FUNCS(RESOLVE)
}

static void check(cl_int err, const char *what)
{
	if (err != CL_SUCCESS)
		die(2, "%s failed: error %d", what, (int)err);
}

static char *info_string(int platform, void *obj, cl_uint param)
{
	size_t n = 0;
	cl_int err = platform ? p_clGetPlatformInfo(obj, param, 0, NULL, &n) : p_clGetDeviceInfo(obj, param, 0, NULL, &n);
	check(err, "clGet*Info");
	char *s = calloc(n + 1, 1);
	err = platform ? p_clGetPlatformInfo(obj, param, n, s, NULL) : p_clGetDeviceInfo(obj, param, n, s, NULL);
	check(err, "clGet*Info");
	for (char *c = s; *c; c++)
		if (*c == '\t' || *c == '\n')
			*c = ' ';
	return s;
}

typedef struct {
	cl_platform_id platform;
	cl_device_id device;
} device_ref;

/* devices lists every device of every platform; none is exit 4. */
static device_ref *devices(int *count)
{
	cl_uint np = 0;
	cl_int err = p_clGetPlatformIDs(0, NULL, &np);
	if (err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || np == 0)
		die(4, "no OpenCL platform: %s", NO_DEVICE_HINT);
	check(err, "clGetPlatformIDs");
	cl_platform_id *ps = calloc(np, sizeof *ps);
	check(p_clGetPlatformIDs(np, ps, NULL), "clGetPlatformIDs");
	device_ref *out = NULL;
	int n = 0;
	for (cl_uint i = 0; i < np; i++) {
		cl_uint nd = 0;
		if (p_clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0)
			continue;
		cl_device_id *ds = calloc(nd, sizeof *ds);
		check(p_clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, nd, ds, NULL), "clGetDeviceIDs");
		out = realloc(out, (n + nd) * sizeof *out);
		for (cl_uint j = 0; j < nd; j++)
			out[n++] = (device_ref){ps[i], ds[j]};
		free(ds);
	}
	if (n == 0)
		die(4, "no OpenCL device: %s", NO_DEVICE_HINT);
	*count = n;
	return out;
}

/* Batch reading: little-endian u32s and length-prefixed byte strings. */
typedef struct {
	const unsigned char *p, *end;
} reader;

static uint32_t u32(reader *r)
{
	if (r->end - r->p < 4)
		die(1, "batch file truncated");
	uint32_t v = (uint32_t)r->p[0] | (uint32_t)r->p[1] << 8 | (uint32_t)r->p[2] << 16 | (uint32_t)r->p[3] << 24;
	r->p += 4;
	return v;
}

static const unsigned char *bytes(reader *r, uint32_t *n)
{
	*n = u32(r);
	if ((uint32_t)(r->end - r->p) < *n)
		die(1, "batch file truncated");
	const unsigned char *b = r->p;
	r->p += *n;
	return b;
}

static char *cstring(reader *r)
{
	uint32_t n;
	const unsigned char *b = bytes(r, &n);
	char *s = malloc(n + 1);
	memcpy(s, b, n);
	s[n] = 0;
	return s;
}

static unsigned char *read_file(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		die(1, "cannot open %s", path);
	unsigned char *buf = NULL;
	size_t cap = 0, len = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? 2 * cap : 1 << 20;
			buf = realloc(buf, cap);
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0)
			break;
	}
	fclose(f);
	*n = len;
	return buf;
}

static void put32(FILE *f, uint32_t v)
{
	unsigned char b[4] = {v, v >> 8, v >> 16, v >> 24};
	fwrite(b, 1, 4, f);
}

/* select_device: $KERNELGEN_CL_DEVICE, "#N" or a substring of the name; else the first. */
static device_ref select_device(void)
{
	int n;
	device_ref *ds = devices(&n);
	const char *want = getenv("KERNELGEN_CL_DEVICE");
	if (!want || !*want)
		return ds[0];
	if (want[0] == '#') {
		int i = atoi(want + 1);
		if (i < 0 || i >= n)
			die(4, "no OpenCL device %s (%d found)", want, n);
		return ds[i];
	}
	for (int i = 0; i < n; i++) {
		char *name = info_string(0, ds[i].device, CL_DEVICE_NAME);
		int hit = strstr(name, want) != NULL;
		free(name);
		if (hit)
			return ds[i];
	}
	die(4, "no OpenCL device whose name contains %s", want);
	return ds[0];
}

/* ggml_cl_std: the OpenCL C version ggml-opencl builds its kernels for
 * (-cl-std=CL<major>.<minor>), as its get_opencl_c_version reads it: on an
 * OpenCL 3 platform the largest of CL_DEVICE_OPENCL_C_ALL_VERSIONS, else
 * CL_DEVICE_OPENCL_C_VERSION ("OpenCL C <major>.<minor> ..."). */
static void ggml_cl_std(device_ref d, char *out, size_t n)
{
	int major = 0, minor = 0;
	char *pv = info_string(1, d.platform, CL_PLATFORM_VERSION);
	int pmajor = 0;
	sscanf(pv, "OpenCL %d", &pmajor);
	free(pv);
	if (pmajor >= 3) {
		struct { cl_uint version; char name[64]; } vs[32]; /* cl_name_version */
		size_t size = 0;
		if (p_clGetDeviceInfo(d.device, 0x1066 /* CL_DEVICE_OPENCL_C_ALL_VERSIONS */, sizeof vs, vs, &size) == CL_SUCCESS) {
			cl_uint best = 0;
			for (size_t i = 0; i < size / sizeof vs[0]; i++)
				if (vs[i].version > best)
					best = vs[i].version;
			major = best >> 22;
			minor = (best >> 12) & 0x3ff;
		}
	} else {
		char *cv = info_string(0, d.device, CL_DEVICE_OPENCL_C_VERSION);
		sscanf(cv, "OpenCL C %d.%d", &major, &minor);
		free(cv);
	}
	snprintf(out, n, "CL%d.%d", major, minor);
}

int main(int argc, char **argv)
{
	if (argc == 2 && strcmp(argv[1], "--list") == 0) {
		load();
		int n;
		device_ref *ds = devices(&n);
		for (int i = 0; i < n; i++) {
			char *pn = info_string(1, ds[i].platform, CL_PLATFORM_NAME);
			char *dn = info_string(0, ds[i].device, CL_DEVICE_NAME);
			char *ver = info_string(0, ds[i].device, CL_DEVICE_OPENCL_C_VERSION);
			char *ext = info_string(0, ds[i].device, CL_DEVICE_EXTENSIONS);
			char std[32];
			ggml_cl_std(ds[i], std, sizeof std);
			printf("%s\t%s\t%s\t%s\t%s\n", pn, dn, ver, ext, std);
		}
		return 0;
	}
	if (argc != 3)
		die(1, "usage: clrun BATCH_FILE OUT_FILE | clrun --list");
	size_t len;
	unsigned char *file = read_file(argv[1], &len);
	reader r = {file, file + len};
	if (len < 8 || memcmp(file, BATCH_MAGIC, 8) != 0)
		die(1, "%s is not a clrun batch", argv[1]);
	r.p += 8;

	load();
	device_ref dev = select_device();
	cl_int err;
	cl_context ctx = p_clCreateContext(NULL, 1, &dev.device, NULL, NULL, &err);
	check(err, "clCreateContext");
	cl_command_queue q = p_clCreateCommandQueue(ctx, dev.device, 0, &err);
	check(err, "clCreateCommandQueue");

	uint32_t nprog = u32(&r);
	cl_program *progs = calloc(nprog ? nprog : 1, sizeof *progs);
	for (uint32_t i = 0; i < nprog; i++) {
		uint32_t n;
		const char *src = (const char *)bytes(&r, &n);
		size_t sn = n;
		char *opts = cstring(&r);
		char *name = cstring(&r);
		progs[i] = p_clCreateProgramWithSource(ctx, 1, &src, &sn, &err);
		check(err, "clCreateProgramWithSource");
		err = p_clBuildProgram(progs[i], 1, &dev.device, opts, NULL, NULL);
		size_t ln = 0;
		p_clGetProgramBuildInfo(progs[i], dev.device, CL_PROGRAM_BUILD_LOG, 0, NULL, &ln);
		char *log = calloc(ln + 1, 1);
		p_clGetProgramBuildInfo(progs[i], dev.device, CL_PROGRAM_BUILD_LOG, ln, log, NULL);
		if (err != CL_SUCCESS)
			die(3, "%s (%s) did not build (error %d):\n%s", name, opts, (int)err, log);
		/* Warnings fail too: the generated sources build clean. */
		for (char *c = log; *c; c++)
			if (strncmp(c, "warning:", 8) == 0)
				die(3, "%s (%s) built with warnings:\n%s", name, opts, log);
		free(log);
		free(opts);
		free(name);
	}

	FILE *out = fopen(argv[2], "wb");
	if (!out)
		die(1, "cannot write %s", argv[2]);
	fwrite(OUT_MAGIC, 1, 8, out);
	uint32_t njobs = u32(&r);
	put32(out, njobs);
	for (uint32_t j = 0; j < njobs; j++) {
		uint32_t nbuf = u32(&r);
		cl_mem *mems = calloc(nbuf ? nbuf : 1, sizeof *mems);
		size_t *sizes = calloc(nbuf ? nbuf : 1, sizeof *sizes);
		for (uint32_t b = 0; b < nbuf; b++) {
			uint32_t n;
			const unsigned char *data = bytes(&r, &n);
			sizes[b] = n;
			/* A zero-length buffer is a 4-byte dummy. */
			unsigned char dummy[4] = {0};
			mems[b] = p_clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n ? n : 4, n ? (void *)data : dummy, &err);
			check(err, "clCreateBuffer");
		}
		uint32_t nl = u32(&r);
		for (uint32_t l = 0; l < nl; l++) {
			uint32_t pi = u32(&r);
			char *kname = cstring(&r);
			if (pi >= nprog)
				die(1, "job %u launch %u: program %u of %u", j, l, pi, nprog);
			cl_kernel k = p_clCreateKernel(progs[pi], kname, &err);
			if (err != CL_SUCCESS)
				die(2, "clCreateKernel(%s) failed: error %d", kname, (int)err);
			uint32_t nargs = u32(&r);
			for (uint32_t a = 0; a < nargs; a++) {
				uint32_t kind = u32(&r), v = u32(&r);
				if (kind == 0) {
					if (v >= nbuf)
						die(1, "job %u: buffer %u of %u", j, v, nbuf);
					err = p_clSetKernelArg(k, a, sizeof(cl_mem), &mems[v]);
				} else if (kind == 2) {
					/* 8-byte scalar: v is the low half, the next u32 the high half */
					cl_ulong w = (cl_ulong)v | (cl_ulong)u32(&r) << 32;
					err = p_clSetKernelArg(k, a, 8, &w);
				} else {
					err = p_clSetKernelArg(k, a, 4, &v);
				}
				if (err != CL_SUCCESS)
					die(2, "clSetKernelArg(%s, %u) failed: error %d", kname, a, (int)err);
			}
			size_t global[3], local[3];
			int empty = 0;
			for (int d = 0; d < 3; d++) {
				size_t groups = u32(&r);
				local[d] = u32(&r);
				global[d] = groups * local[d];
				empty |= groups == 0;
			}
			if (!empty) {
				err = p_clEnqueueNDRangeKernel(q, k, 3, NULL, global, local, 0, NULL, NULL);
				if (err != CL_SUCCESS)
					die(2, "clEnqueueNDRangeKernel(%s) failed: error %d", kname, (int)err);
			}
			p_clReleaseKernel(k);
			free(kname);
		}
		put32(out, nbuf);
		for (uint32_t b = 0; b < nbuf; b++) {
			unsigned char *host = malloc(sizes[b] ? sizes[b] : 1);
			if (sizes[b])
				check(p_clEnqueueReadBuffer(q, mems[b], CL_TRUE, 0, sizes[b], host, 0, NULL, NULL), "clEnqueueReadBuffer");
			put32(out, (uint32_t)sizes[b]);
			fwrite(host, 1, sizes[b], out);
			free(host);
			p_clReleaseMemObject(mems[b]);
		}
		check(p_clFinish(q), "clFinish");
		free(mems);
		free(sizes);
	}
	if (fclose(out) != 0)
		die(1, "cannot write %s", argv[2]);
	return 0;
}
