#!/usr/bin/env bash
# Installs what kernelgen's build and tests need on a Debian (bookworm) machine.
# Idempotent: packages already present are not reinstalled.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# System packages the tests use. Keep this list in step with `kernelgen doctor`.
packages=(ca-certificates git g++ glslang-tools spirv-tools clang-22 libvulkan-dev mesa-vulkan-drivers vulkan-tools
  pocl-opencl-icd ocl-icd-opencl-dev clinfo)
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Go >= 1.21 fetches the toolchain go.mod asks for (1.24+) through the module
# proxy by itself; older or missing Go cannot.
if ! command -v go >/dev/null 2>&1; then
  echo "setup: Go is not installed. Install Go 1.24 or newer (https://go.dev/doc/install) and run this again." >&2
  exit 1
fi
minor=$(go env GOVERSION | sed -E 's/^go1\.([0-9]+).*/\1/')
if [ "${minor:-0}" -lt 21 ]; then
  echo "setup: $(go env GOVERSION) is too old; install Go 1.24 or newer." >&2
  exit 1
fi
go mod download
echo "setup: ready ($(go env GOVERSION))"
