// stand-in for src/ggml-metal/ggml-metal-common.cpp: the same functions and
// decisions as the real file, in fewer lines
#include "ggml-metal-common.h"

#include "ggml-impl.h"
#include "ggml-backend-impl.h"

#include <vector>

struct ggml_mem_range {
    uint64_t pb; // the buffer, or the tensor while it has none
    uint64_t p0;
    uint64_t p1;

    ggml_mem_range_type pt;
};

struct ggml_mem_ranges {
    std::vector<ggml_mem_range> ranges;

    int debug = 0;
};

ggml_mem_ranges_t ggml_mem_ranges_init(int debug) {
    ggml_mem_ranges_t mrs = new ggml_mem_ranges;
    mrs->debug = debug;
    return mrs;
}

void ggml_mem_ranges_free(ggml_mem_ranges_t mrs) {
    delete mrs;
}

void ggml_mem_ranges_reset(ggml_mem_ranges_t mrs) {
    mrs->ranges.clear();
}

static bool ggml_mem_ranges_add(ggml_mem_ranges_t mrs, ggml_mem_range mr) {
    mrs->ranges.push_back(mr);
    return true;
}

// a view stands for its base tensor: the range is the base's allocation
static ggml_mem_range ggml_mem_range_from_tensor(const ggml_tensor * tensor, ggml_mem_range_type pt) {
    const ggml_tensor * base = tensor->view_src ? tensor->view_src : tensor;

    GGML_ASSERT(!base->view_src);

    if (!base->buffer) {
        return { (uint64_t) base, 0, 1024, pt };
    }

    const uint64_t p0 = (uint64_t) base->data;

    return { (uint64_t) base->buffer, p0, p0 + ggml_backend_buft_get_alloc_size(base->buffer->buft, base), pt };
}

static bool ggml_mem_ranges_add_src(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    GGML_ASSERT(tensor);
    return ggml_mem_ranges_add(mrs, ggml_mem_range_from_tensor(tensor, MEM_RANGE_TYPE_SRC));
}

static bool ggml_mem_ranges_add_dst(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    GGML_ASSERT(tensor);
    return ggml_mem_ranges_add(mrs, ggml_mem_range_from_tensor(tensor, MEM_RANGE_TYPE_DST));
}

bool ggml_mem_ranges_add(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (tensor->src[i]) {
            ggml_mem_ranges_add_src(mrs, tensor->src[i]);
        }
    }

    return ggml_mem_ranges_add_dst(mrs, tensor);
}

// false when mr overlaps a recorded range in the same buffer, unless both are read
static bool ggml_mem_ranges_check(ggml_mem_ranges_t mrs, ggml_mem_range mr) {
    for (const ggml_mem_range & r : mrs->ranges) {
        if (r.pb != mr.pb) {
            continue;
        }
        if (r.pt == MEM_RANGE_TYPE_SRC && mr.pt == MEM_RANGE_TYPE_SRC) {
            continue;
        }
        if (mr.p0 < r.p1 && mr.p1 >= r.p0) {
            return false;
        }
    }

    return true;
}

static bool ggml_mem_ranges_check_src(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    GGML_ASSERT(tensor);
    return ggml_mem_ranges_check(mrs, ggml_mem_range_from_tensor(tensor, MEM_RANGE_TYPE_SRC));
}

static bool ggml_mem_ranges_check_dst(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    GGML_ASSERT(tensor);
    return ggml_mem_ranges_check(mrs, ggml_mem_range_from_tensor(tensor, MEM_RANGE_TYPE_DST));
}

bool ggml_mem_ranges_check(ggml_mem_ranges_t mrs, const ggml_tensor * tensor) {
    for (int i = 0; i < GGML_MAX_SRC; i++) {
        if (tensor->src[i] && !ggml_mem_ranges_check_src(mrs, tensor->src[i])) {
            return false;
        }
    }

    return ggml_mem_ranges_check_dst(mrs, tensor);
}

// a node of the reorder: a graph node and the nodes fused after it
struct node_info {
    ggml_tensor * node;

    std::vector<ggml_tensor *> fused;

    ggml_op op() const { return node->op; }

    const ggml_tensor * dst() const { return fused.empty() ? node : fused.back(); }

    bool is_empty() const { return ggml_op_is_empty(node->op); }
};

static std::vector<int> ggml_metal_graph_optimize_reorder(const std::vector<node_info> & nodes) {
    const auto & h_add = [](ggml_mem_ranges_t mrs, const node_info & node) {
        for (int i = 0; i < GGML_MAX_SRC; i++) {
            if (node.node->src[i] && !ggml_mem_ranges_add_src(mrs, node.node->src[i])) {
                return false;
            }
        }
        for (const ggml_tensor * f : node.fused) {
            for (int i = 0; i < GGML_MAX_SRC; i++) {
                if (f->src[i] && !ggml_mem_ranges_add_src(mrs, f->src[i])) {
                    return false;
                }
            }
        }

        return ggml_mem_ranges_add_dst(mrs, node.dst());
    };

    const auto & h_check = [](ggml_mem_ranges_t mrs, const node_info & node) {
        for (int i = 0; i < GGML_MAX_SRC; i++) {
            if (node.node->src[i] && !ggml_mem_ranges_check_src(mrs, node.node->src[i])) {
                return false;
            }
        }
        for (const ggml_tensor * f : node.fused) {
            for (int i = 0; i < GGML_MAX_SRC; i++) {
                if (f->src[i] && !ggml_mem_ranges_check_src(mrs, f->src[i])) {
                    return false;
                }
            }
        }

        return ggml_mem_ranges_check_dst(mrs, node.dst());
    };

    // the ops a node may be moved across (SSM_CONV among them, GATED_DELTA_NET not)
    const auto & h_safe = [](ggml_op op) {
        switch (op) {
            case GGML_OP_MUL_MAT:
            case GGML_OP_NORM:
            case GGML_OP_RMS_NORM:
            case GGML_OP_SSM_CONV:
            case GGML_OP_MUL:
            case GGML_OP_ADD:
            case GGML_OP_SUB:
            case GGML_OP_DIV:
            case GGML_OP_SCALE:
            case GGML_OP_GET_ROWS:
            case GGML_OP_CPY:
                return true;
            default:
                return ggml_op_is_empty(op);
        }
    };

    const int n = nodes.size();

    std::vector<int> order;
    std::vector<bool> used(n, false);

    ggml_mem_ranges_t mrs0 = ggml_mem_ranges_init(0); // the current concurrent set
    ggml_mem_ranges_t mrs1 = ggml_mem_ranges_init(0); // the nodes passed over while looking ahead

    for (int i0 = 0; i0 < n; i0++) {
        if (used[i0]) {
            continue;
        }

        const node_info & node0 = nodes[i0];

        // node0 needs a barrier: first pull later nodes that can still join the current set
        if (!node0.is_empty() && !h_check(mrs0, node0)) {
            ggml_mem_ranges_reset(mrs1);
            h_add(mrs1, node0);

            for (int i1 = i0 + 1; i1 < i0 + 64 && i1 < n; i1++) {
                if (used[i1]) {
                    continue;
                }

                const node_info & node1 = nodes[i1];

                if (!h_safe(node1.op())) {
                    break;
                }

                // it joins only if it is concurrent with the set and with every node it would pass
                if ((node1.is_empty() || h_check(mrs0, node1)) && h_check(mrs1, node1)) {
                    h_add(mrs0, node1);
                    order.push_back(i1);
                    used[i1] = true;
                } else {
                    h_add(mrs1, node1);
                }
            }

            ggml_mem_ranges_reset(mrs0);
        }

        h_add(mrs0, node0);
        order.push_back(i0);
    }

    ggml_mem_ranges_free(mrs0);
    ggml_mem_ranges_free(mrs1);

    return order;
}

void ggml_graph_optimize(ggml_cgraph * gf) {
    constexpr int MAX_FUSE = 16;

    const int n = gf->n_nodes;

    enum ggml_op ops[MAX_FUSE];

    // pack the nodes a fusion will take together, so that the reorder keeps them together
    std::vector<node_info> nodes;
    for (int i = 0; i < n; i++) {
        node_info node = { gf->nodes[i], {} };

        const ggml_op op = node.op();
        if (op == GGML_OP_ADD || op == GGML_OP_NORM || op == GGML_OP_RMS_NORM) {
            ops[0] = op;

            int f = i + 1;
            while (f < n && f < i + MAX_FUSE) {
                const ggml_op next = gf->nodes[f]->op;
                if (next != GGML_OP_ADD && next != GGML_OP_MUL && next != GGML_OP_NORM && next != GGML_OP_RMS_NORM) {
                    break;
                }
                ops[f - i] = next;
                f++;
            }

            for (f -= i; f > 1 && !ggml_can_fuse(gf, i, ops, f); f--) {
            }

            for (int k = 1; k < f; k++) {
                node.fused.push_back(gf->nodes[++i]);
            }
        }

        nodes.push_back(node);
    }

    const std::vector<int> order = ggml_metal_graph_optimize_reorder(nodes);

    int j = 0;
    for (const int i : order) {
        gf->nodes[j++] = nodes[i].node;
        for (ggml_tensor * f : nodes[i].fused) {
            gf->nodes[j++] = f;
        }
    }
}
