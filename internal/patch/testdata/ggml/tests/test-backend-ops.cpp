// stand-in for tests/test-backend-ops.cpp

struct test_case {
    virtual ~test_case() {}
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
