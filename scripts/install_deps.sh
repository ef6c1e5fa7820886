#!/usr/bin/env bash
# Installs the Debian 12 packages kcount builds with (only those missing): `build` what the build needs,
# `all` (the default) also what the tests and the docs' scripts use. The CUDA toolkit (headers of
# CUPTI and NVTX3) is expected at /usr/local/cuda or $CUDAToolkit_ROOT; it is not a Debian package.
set -euo pipefail
pkgs=(cmake ninja-build g++ make binutils python3 libspdlog-dev libfmt-dev doctest-dev libcli11-dev
      nlohmann-json3-dev libxxhash-dev
      libzstd-dev     # packed chunks (static libzstd.a linked into libkcount.so and the tools)
      libsqlite3-dev  # kcount export --format sqlite (linked statically into the tool)
      libutfcpp-dev   # UTF-8 validation in the tool's outputs (header-only)
      libutf8proc-dev  # display widths of characters in the tool's tables (static libutf8proc.a linked into the tool)
      libcpp-httplib-dev)  # kcount exporter's HTTP server (the tool links libcpp-httplib.so; libkcount.so does not)
# What only the tests and docs scripts use (not installed with "build")
test_pkgs=(clang libclang-rt-14-dev  # tests/fuzz/run_fuzz.sh: libFuzzer with ASan+UBSan
      chromium        # tests/cli/test_html_report.py renders kcount report in headless Chromium
      python3-torch  # tests/cli/test_torch_modules.py: the PyTorch helper on a real (CPU) PyTorch
      python3-matplotlib  # scripts/case_study.py: the plots of docs/case-study.md; kcount's Python plots
      python3-pandas python3-venv python3-setuptools python3-wheel  # tests/cli/test_python_package.py:
      # pip install --no-index --no-build-isolation ./python into a venv with Debian's pandas
      strace  # tests/cli/test_file_access.py counts the tools' opens of their files
      prometheus)  # tests/cli/test_exporter.py: a real Prometheus (and promtool) scrapes kcount exporter
case "${1:-all}" in
  build) ;;
  all) pkgs+=("${test_pkgs[@]}") ;;
  *) echo "usage: install_deps.sh [build|all]   (build: what building kcount needs; all, the default: the tests' too)" >&2
     exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "kcount: installing ${missing[*]}" >&2
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
cuda=${CUDAToolkit_ROOT:-/usr/local/cuda}
if [[ ! -f $cuda/include/cupti.h && ! -f $cuda/extras/CUPTI/include/cupti.h ]]; then
  echo "kcount: no CUPTI headers under $cuda: install the CUDA toolkit 13 or set CUDAToolkit_ROOT" >&2
  exit 1
fi
