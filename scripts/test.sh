#!/usr/bin/env bash
# Runs the tests: setup, gofmt, vet, the freshness and toolchain check of
# generated/ (kernelgen build --check), and the Go test suite. This is the
# command the README gives.
#
#   bash scripts/test.sh          the fast tier (the default): every op, every
#                                 backend's compiler and runtime, a seeded
#                                 sample of the variant matrix; minutes
#   bash scripts/test.sh --full   the full matrix (what CI runs); also
#                                 KERNELGEN_FULL=1
#
# KERNELGEN_SEED picks the fast tier's sample (1 by default); the tests log
# what they sampled.
set -euo pipefail
cd "$(dirname "$0")/.."
for arg in "$@"; do
  case "$arg" in
    --full) export KERNELGEN_FULL=1 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "test.sh: unknown argument $arg (--full runs the full matrix)" >&2; exit 2 ;;
  esac
done
case "${KERNELGEN_FULL:-}" in
  ""|0|false) tier="fast tier, sample seed ${KERNELGEN_SEED:-1} (--full runs the full matrix)" ;;
  *) tier="full tier" ;;
esac
bash scripts/setup.sh
echo "== $tier"
echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w on them):"; echo "$unformatted"; exit 1
fi
echo "== go vet"
go vet ./...
echo "== kernelgen build --backend all --check"
# Compiles every variant of every backend, runs every emulated one and a
# sample on PoCL; the tests then reuse its caches (SPIR-V, PoCL, host
# emulation) instead of compiling the same bytes again.
go run ./cmd/kernelgen build --backend all --check --color never
echo "== go test ($tier)"
go test -count=1 -timeout 60m ./...
