#!/usr/bin/env bash
# Runs on a GPU host with nvcc (for example through the device tool), inside a
# directory made by `go run ./bench/cuda prepare -o DIR`:
#   bash DIR/run.sh              verify the generated kernels
#   KG_GGML=TREE bash DIR/run.sh also run the hand-written series kernels of a
#                                patched ggml tree (include/ and src/ suffice)
# Results go to $OUT (or DIR): results.bin for `go run ./bench/cuda compare`,
# and bench.csv / bench.txt from the benchmark.
set -euo pipefail
cd "$(dirname "$0")"
out="${OUT:-$PWD}"
arch="${ARCH:-sm_90}"
nvcc="${NVCC:-nvcc}"
common=(-std=c++17 -O3 -arch="$arch" -I. -Isrc -Ikernels)
fast=(-use_fast_math -extended-lambda) # ggml-cuda's own flags (GLUE.md 4.4)
objs=()
defs=()
# Portable kernels: IEEE (no flush-to-zero), their bits must match every backend.
"$nvcc" "${common[@]}" -c kg_portable.cu -o kg_portable.o & objs+=(kg_portable.o)
# Native kernels: exactly ggml's flags, as the hand-written kernels are built.
"$nvcc" "${common[@]}" "${fast[@]}" -c kg_native.cu -o kg_native.o & objs+=(kg_native.o)
ref=()
if [ -n "${KG_GGML:-}" ]; then
  defs=(-DKG_WITH_REFERENCE)
  "$nvcc" "${common[@]}" "${fast[@]}" -DKG_WITH_REFERENCE -DKG_USE_GGML_HEADERS -I"$KG_GGML/include" -I"$KG_GGML/src" -I"$KG_GGML/src/ggml-cuda" \
    -c src/kg_ref.cu -o kg_ref.o & ref=(kg_ref.o kg_stubs.o)
  "$nvcc" "${common[@]}" -c src/kg_stubs.cu -o kg_stubs.o &
  # The generated ggml-cuda glue must compile against the real ggml-cuda headers.
  ( "$nvcc" "${common[@]}" "${fast[@]}" -Xcompiler -Wno-unused-function -I"$KG_GGML/include" -I"$KG_GGML/src" -I"$KG_GGML/src/ggml-cuda" \
      -x cu -c kernels/fused-ops.cuh -o kg_glue.o && echo "glue: kernels/fused-ops.cuh compiles against the ggml tree" ) &
  "$nvcc" "${common[@]}" "${fast[@]}" -DKG_WITH_REFERENCE -DKG_USE_GGML_HEADERS -I"$KG_GGML/include" -I"$KG_GGML/src" -I"$KG_GGML/src/ggml-cuda" \
    src/kg_bench.cu src/kg_stubs.cu -o kg_bench -Xlinker --unresolved-symbols=ignore-all &
else
  "$nvcc" "${common[@]}" "${fast[@]}" src/kg_bench.cu -o kg_bench &
fi
"$nvcc" "${common[@]}" "${defs[@]}" -c src/kg_main.cu -o kg_main.o & objs+=(kg_main.o)
wait
"$nvcc" -arch="$arch" "${objs[@]}" "${ref[@]}" -o kg_verify -Xlinker --unresolved-symbols=ignore-all
KG_VERBOSE=${KG_VERBOSE:-} ./kg_verify cases.bin "$out/results.bin"
./kg_bench "$out/bench.csv" | tee "$out/bench.txt"
