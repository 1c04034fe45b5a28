// Runs lowered ggml-cpu ops on problems read from stdin and writes the
// memory back to stdout, for the Go tests (little-endian binary):
//   per problem: u32 op (index into ops[], ~0 ends), u32 threads,
//   u32 blocks, then per block u64 bytes and the bytes; per node slot
//   (src[0..9], then the node) u32 present and, if set, i32 type, i64 ne[4],
//   i64 nb[4], u32 block, u64 byte offset; i32 op_params[2].
//   Reply: every block's bytes, in order.
// The translation unit defines `ops` (struct op_entry) before including it.
#include <thread>
#include <vector>

static bool read_all(void * p, size_t n) { return fread(p, 1, n, stdin) == n; }

template <typename T> static T read_one() {
    T x;
    if (!read_all(&x, sizeof(x))) {
        fprintf(stderr, "harness: truncated input\n");
        exit(2);
    }
    return x;
}

int main() {
    for (;;) {
        uint32_t op;
        if (!read_all(&op, sizeof(op)) || op == ~0u) {
            return 0;
        }
        const int nth = (int) read_one<uint32_t>();
        std::vector<std::vector<uint8_t>> blocks(read_one<uint32_t>());
        for (auto & b : blocks) {
            b.resize(read_one<uint64_t>());
            if (!b.empty() && !read_all(b.data(), b.size())) {
                return 2;
            }
        }
        ggml_tensor tensors[GGML_MAX_SRC + 1];
        memset(tensors, 0, sizeof(tensors));
        for (int slot = 0; slot <= GGML_MAX_SRC; ++slot) {
            ggml_tensor & t = tensors[slot];
            if (read_one<uint32_t>() == 0) {
                continue;
            }
            t.type = (ggml_type) read_one<int32_t>();
            for (int d = 0; d < 4; ++d) t.ne[d] = read_one<int64_t>();
            for (int d = 0; d < 4; ++d) t.nb[d] = (size_t) read_one<int64_t>();
            const uint32_t block = read_one<uint32_t>();
            const uint64_t offset = read_one<uint64_t>();
            t.data = blocks.at(block).data() + offset;
        }
        ggml_tensor & node = tensors[GGML_MAX_SRC];
        for (int i = 0; i < GGML_MAX_SRC; ++i) {
            node.src[i] = tensors[i].data ? &tensors[i] : nullptr;
        }
        node.op_params[0] = read_one<int32_t>();
        node.op_params[1] = read_one<int32_t>();

        const op_entry & e = ops[op];
        std::vector<uint8_t> work(e.work_size ? e.work_size(&node) : 0);
        ggml_threadpool pool;
        pool.n = nth;
        pool.arrived = 0;
        pool.generation = 0;
        std::vector<std::thread> threads;
        for (int ith = 0; ith < nth; ++ith) {
            threads.emplace_back([&, ith] {
                ggml_compute_params params = { ith, nth, work.size(), work.data(), &pool };
                e.compute(&params, &node);
            });
        }
        for (auto & t : threads) t.join();
        for (auto & b : blocks) fwrite(b.data(), 1, b.size(), stdout);
        fflush(stdout);
    }
}
