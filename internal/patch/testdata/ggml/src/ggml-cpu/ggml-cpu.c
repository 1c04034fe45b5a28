// stand-in for src/ggml-cpu/ggml-cpu.c

struct ggml_cplan ggml_graph_plan(
          const struct ggml_cgraph * cgraph,
                               int   n_threads,
            struct ggml_threadpool * threadpool) {
    for (int i = 0; i < cgraph->n_nodes; i++) {
        size_t cur = 0;
        switch (node->op) {
                case GGML_OP_GATED_DELTA_NET:
                    {
                        cur = 0;
                    } break;
                default:
                    break;
        }
    }
}
