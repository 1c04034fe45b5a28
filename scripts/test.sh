#!/usr/bin/env bash
# Runs every test: setup, gofmt, vet, the Go test suite, and the freshness check of
# generated/. This is the command the README and CI run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== gofmt"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
  echo "not gofmt-formatted (run gofmt -w on them):"; echo "$unformatted"; exit 1
fi
echo "== go vet"
go vet ./...
echo "== kernelgen build --backend all --check"
go run ./cmd/kernelgen build --backend all --check --color never
echo "== go test"
go test -count=1 -timeout 30m ./...
