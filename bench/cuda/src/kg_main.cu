// The CUDA verification harness: replays kernelgen's cases (written by
// `go run ./bench/cuda prepare`) on the GPU with the generated kernels and,
// when built with a ggml tree, with the hand-written series kernels too, and
// writes every buffer afterwards for `go run ./bench/cuda compare`.
#include "kg_harness.h"
#include <cstring>

std::map<std::string, kg_launcher> & kg_registry() {
    static std::map<std::string, kg_launcher> r;
    return r;
}

struct reader {
    FILE * f;
    uint32_t u32() {
        uint32_t v;
        if (fread(&v, 4, 1, f) != 1) { fprintf(stderr, "case file truncated\n"); exit(2); }
        return v;
    }
    int64_t i64() {
        int64_t v;
        if (fread(&v, 8, 1, f) != 1) { fprintf(stderr, "case file truncated\n"); exit(2); }
        return v;
    }
    std::string str() {
        std::string s(u32(), '\0');
        if (!s.empty() && fread(&s[0], 1, s.size(), f) != s.size()) { fprintf(stderr, "case file truncated\n"); exit(2); }
        return s;
    }
    void bytes(void * p, size_t n) {
        if (n && fread(p, 1, n, f) != n) { fprintf(stderr, "case file truncated\n"); exit(2); }
    }
};

static void put_u32(FILE * f, uint32_t v) { fwrite(&v, 4, 1, f); }
static void put_str(FILE * f, const std::string & s) { put_u32(f, (uint32_t) s.size()); fwrite(s.data(), 1, s.size(), f); }

// run replays the launches on fresh copies of the buffers; with reference,
// the hand-written kernels run instead of the generated ones.
static std::string run_case(const std::vector<std::vector<uint8_t>> & init, const std::vector<kg_launch> & launches,
                            bool reference, std::vector<std::vector<uint8_t>> & out) {
    std::vector<void *> dev(init.size());
    for (size_t i = 0; i < init.size(); i++) {
        KG_CHECK(cudaMalloc(&dev[i], init[i].size() ? init[i].size() : 4));
        KG_CHECK(cudaMemcpy(dev[i], init[i].data(), init[i].size(), cudaMemcpyHostToDevice));
    }
    std::string status;
    for (const kg_launch & l : launches) {
        std::vector<void *> bufs;
        for (uint32_t b : l.bind) bufs.push_back(dev[b]);
        if (reference) {
            if (!kg_reference_launch(l, dev, 0)) { status = "no reference kernel for " + l.key; break; }
        } else {
            auto it = kg_registry().find(l.key);
            if (it == kg_registry().end()) { status = "no generated instance " + l.key; break; }
            it->second(bufs.data(), l.args.data(), l.grid, l.block, 0);
        }
        KG_CHECK(cudaGetLastError());
        KG_CHECK(cudaDeviceSynchronize());
    }
    out.resize(init.size());
    for (size_t i = 0; i < init.size(); i++) {
        out[i].resize(init[i].size());
        KG_CHECK(cudaMemcpy(out[i].data(), dev[i], init[i].size(), cudaMemcpyDeviceToHost));
        KG_CHECK(cudaFree(dev[i]));
    }
    return status;
}

int main(int argc, char ** argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s CASES RESULTS\n", argv[0]);
        return 2;
    }
    reader r{fopen(argv[1], "rb")};
    if (!r.f) { perror(argv[1]); return 2; }
    char magic[8];
    r.bytes(magic, 8);
    if (memcmp(magic, "KGCASES1", 8) != 0) { fprintf(stderr, "%s: not a kernelgen case file\n", argv[1]); return 2; }
    FILE * out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 2; }
    fwrite("KGRESUL1", 1, 8, out);
    const uint32_t ncases = r.u32();
    put_u32(out, ncases);
    cudaDeviceProp prop;
    KG_CHECK(cudaGetDeviceProperties(&prop, 0));
    fprintf(stderr, "device: %s (sm_%d%d), %u cases\n", prop.name, prop.major, prop.minor, ncases);
    for (uint32_t c = 0; c < ncases; c++) {
        const std::string name = r.str();
        std::vector<std::vector<uint8_t>> init(r.u32());
        for (auto & b : init) {
            r.str(); // buffer name
            b.resize(r.u32());
            r.bytes(b.data(), b.size());
        }
        std::vector<kg_launch> launches(r.u32());
        for (auto & l : launches) {
            l.key = r.str();
            l.op = r.str();
            for (uint32_t n = r.u32(); n > 0; n--) { std::string k = r.str(); l.params[k] = r.i64(); }
            for (uint32_t n = r.u32(); n > 0; n--) { l.arg_names.push_back(r.str()); l.args.push_back(r.u32()); }
            for (uint32_t n = r.u32(); n > 0; n--) {
                l.bind_names.push_back(r.str());
                l.bind.push_back(r.u32());
                l.access.push_back(r.u32());
            }
            // One read per statement: the order of evaluation of function
            // arguments is unspecified in C++.
            uint32_t d[6];
            for (uint32_t & x : d) x = r.u32();
            l.grid = dim3(d[0], d[1], d[2]);
            l.block = dim3(d[3], d[4], d[5]);
        }
        // Only buffers some launch may write come back; the rest are const.
        std::vector<bool> written(init.size());
        for (auto & l : launches)
            for (size_t i = 0; i < l.bind.size(); i++)
                if (l.access[i] != 1) written[l.bind[i]] = true;
        auto put_bufs = [&](const std::vector<std::vector<uint8_t>> & bufs) {
            put_u32(out, (uint32_t) bufs.size());
            for (size_t i = 0; i < bufs.size(); i++) {
                const size_t n = written[i] ? bufs[i].size() : 0;
                put_u32(out, (uint32_t) n);
                fwrite(bufs[i].data(), 1, n, out);
            }
        };
        std::vector<std::vector<uint8_t>> gen, ref;
        if (getenv("KG_VERBOSE")) fprintf(stderr, "case %u: %s\n", c, name.c_str());
        std::string status = run_case(init, launches, false, gen);
        put_str(out, status);
        put_bufs(gen);
#ifdef KG_WITH_REFERENCE
        // The series kernels are the reference of the native contract only.
        std::string rstatus = "portable case";
        if (name.find("@native-cuda") != std::string::npos) rstatus = run_case(init, launches, true, ref);
#else
        std::string rstatus = "harness built without a ggml tree";
#endif
        put_str(out, rstatus);
        put_bufs(ref);
        if (!status.empty()) fprintf(stderr, "%s: %s\n", name.c_str(), status.c_str());
    }
    fclose(out);
    return 0;
}
