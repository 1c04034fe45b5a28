# Thin recipes over the kernelgen CLI and go test. `just --list` shows them.

# Regenerate generated/ for every implemented backend.
build:
    go run ./cmd/kernelgen build --backend all

# Fail with a diff when generated/ is stale.
check:
    go run ./cmd/kernelgen build --backend all --check

# The tests, fast tier (before each commit).
test:
    bash scripts/test.sh

# The tests, full matrix (what CI runs).
test-full:
    bash scripts/test.sh --full

# Quick tests: fewer random shapes.
test-short:
    go test -short ./...

# Rewrite golden files after reviewing the change.
update-golden:
    go test ./ops -update

list:
    go run ./cmd/kernelgen list -v

doctor:
    go run ./cmd/kernelgen doctor
