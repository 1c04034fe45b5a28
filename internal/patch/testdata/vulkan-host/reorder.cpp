// Runs the stand-in's ggml_vk_graph_optimize (ggml-vulkan.cpp, patched or
// not) on decode graphs with fused nodes that write their cache in place
// (GATED_DELTA_NET with src[6], SSM_CONV with src[3]) and a node that reads
// the cache, after the update or before it, and says HAZARD where the
// reorder moved that node to the other side of the writer.
#include "ggml-vulkan.cpp"

#include <cstdio>
#include <string>

static std::vector<ggml_tensor *> pool;

static ggml_tensor * t(const char * name, ggml_op op = GGML_OP_NONE, std::vector<ggml_tensor *> src = {}) {
    ggml_tensor * x = new ggml_tensor;
    x->name = name;
    x->op = op;
    for (size_t i = 0; i < src.size(); i++) x->src[i] = src[i];
    pool.push_back(x);
    return x;
}

static ggml_tensor * view(const char * name, ggml_tensor * of) {
    ggml_tensor * v = t(name, GGML_OP_VIEW, {of});
    v->view_src = of;
    return v;
}

// a fused GDN node (op A): S_v 64, one head, one token, one sequence
static ggml_tensor * gdn(const char * name, ggml_tensor * q, ggml_tensor * cache) {
    ggml_tensor * op = t(name, GGML_OP_GATED_DELTA_NET);
    for (int i = 0; i < 5; i++) {
        op->src[i] = i == 0 ? q : t("in");
        op->src[i]->ne[0] = i == 3 || i == 4 ? 1 : 64;
    }
    op->src[5] = t("state");
    op->src[5]->ne[0] = op->src[5]->ne[1] = 64;
    op->src[5]->nb[1] = 256; op->src[5]->nb[2] = op->src[5]->nb[3] = 256 * 64;
    op->src[6] = view("state_dst", cache);
    op->src[6]->ne[0] = 64 * 64;
    op->src[6]->nb[1] = op->src[6]->nb[2] = op->src[6]->nb[3] = 4 * 64 * 64;
    op->op_params[0] = 1;
    return op;
}

// a fused conv-update node (op C): d_conv 4, 8 channels, one sequence
static ggml_tensor * conv(const char * name, ggml_tensor * x, ggml_tensor * cache) {
    ggml_tensor * op = t(name, GGML_OP_SSM_CONV);
    op->src[0] = t("taps");
    op->src[0]->ne[0] = 3; op->src[0]->ne[1] = 8;
    op->src[1] = t("w");
    op->src[1]->ne[0] = 4; op->src[1]->ne[1] = 8;
    op->src[2] = x;
    op->src[2]->ne[0] = 8;
    op->src[3] = view("ring", cache);
    op->src[3]->ne[0] = 24;
    return op;
}

static int hazards = 0;

// optimize reorders nodes and reports each pair (writer, toucher) whose order changed
static void optimize(const char * what, std::vector<ggml_tensor *> nodes, std::vector<std::pair<ggml_tensor *, ggml_tensor *>> pairs) {
    ggml_cgraph g = { (int) nodes.size(), nodes.data() };
    auto pos = [&](ggml_tensor * x) { return (int) (std::find(nodes.begin(), nodes.end(), x) - nodes.begin()); };
    std::vector<bool> before;
    for (auto & p : pairs) before.push_back(pos(p.first) < pos(p.second));
    ggml_vk_graph_optimize(&g);
    for (size_t i = 0; i < pairs.size(); i++) {
        if ((pos(pairs[i].first) < pos(pairs[i].second)) != before[i]) {
            printf("HAZARD %s: the reorder moved %s %s %s, which writes its cache\n", what, pairs[i].second->name,
                before[i] ? "before" : "after", pairs[i].first->name);
            hazards++;
        }
    }
}

int main() {
    ggml_tensor * rs_cache = t("rs_cache");
    ggml_tensor * conv_cache = t("conv_cache");
    {
        // the update, then a node reading the cache; the update waits for its input
        ggml_tensor * x = t("x"); // a leaf, not a node
        ggml_tensor * q = t("q", GGML_OP_MUL, {x, x});
        ggml_tensor * xc = t("xc", GGML_OP_MUL, {x, x});
        ggml_tensor * g = gdn("gdn", q, rs_cache);
        ggml_tensor * c = conv("conv_update", xc, conv_cache);
        ggml_tensor * state_reader = t("state_reader", GGML_OP_GET_ROWS, {rs_cache});
        ggml_tensor * conv_reader = t("conv_reader", GGML_OP_GET_ROWS, {conv_cache});
        optimize("update then read", {q, g, state_reader, xc, c, conv_reader}, {{g, state_reader}, {c, conv_reader}});
    }
    {
        // a node reading the cache, which waits for its input, then the update
        ggml_tensor * x = t("x"); // a leaf, not a node
        ggml_tensor * y = t("y", GGML_OP_MUL, {x, x});
        ggml_tensor * state_reader = t("state_reader", GGML_OP_ADD, {y, rs_cache});
        ggml_tensor * conv_reader = t("conv_reader", GGML_OP_ADD, {y, conv_cache});
        ggml_tensor * g = gdn("gdn", t("q"), rs_cache);
        ggml_tensor * c = conv("conv_update", t("xc"), conv_cache);
        optimize("read then update", {y, state_reader, conv_reader, g, c}, {{g, state_reader}, {c, conv_reader}});
    }
    if (hazards == 0) {
        printf("ok: no node touching a written cache changed sides with its writer\n");
    }
    return hazards != 0;
}
