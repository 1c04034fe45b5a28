// stand-in for tests/test-backend-ops.cpp

struct test_case {
    virtual ~test_case() {}

    virtual std::vector<ggml_tensor *> fusion_test_nodes() { return {}; }

    test_status_t eval(ggml_backend_t backend1, ggml_backend_t backend2, const char * op_names_filter, printer * output_printer) {
        // build graph
        ggml_build_forward_expand(gf, out);
    }

    bool eval_perf(ggml_backend_t backend, const char * op_names_filter, printer * output_printer) {
        // build graph
        ggml_build_forward_expand(gf, out);

        // duplicate the op
        for (int i = 1; i < n_runs; i++) {
            ggml_graph_add_node(gf, out);
        }

        // calculate memory
        size_t mem = n_runs * op_size(out);

        // run
    }
};

// GGML_OP_GATED_DELTA_NET
struct test_gated_delta_net : public test_case {
};

static std::vector<std::unique_ptr<test_case>> make_test_cases_eval() {
    std::vector<std::unique_ptr<test_case>> test_cases;

    test_cases.emplace_back(new test_ssm_scan(/* placeholder */));
    test_cases.emplace_back(new test_gated_delta_net());

    return test_cases;
}

static std::vector<std::unique_ptr<test_case>> make_test_cases_perf() {
    std::vector<std::unique_ptr<test_case>> test_cases;

    test_cases.emplace_back(new test_gated_delta_net());

    return test_cases;
}
