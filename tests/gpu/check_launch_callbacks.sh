#!/usr/bin/env bash
# KCOUNT_LAUNCH_CALLBACKS=driver on a real GPU: subscribed to the driver API's launch callbacks only, every
# launch is still seen (a runtime launch through the driver call inside it) and every count is exact.
#
#     bash tests/gpu/check_launch_callbacks.sh BUILD_DIR
#
# Runs tests/gpu/check_gpu_time.sh with KCOUNT_LAUNCH_CALLBACKS=driver in each KCOUNT_GPU_TIME=0 run: rows
# g1..g8 compare those count-only logs with trace mode (kernel activity, runtime and driver launch
# callbacks): per (range, kernel name) kernels, launches per range, plus metadata launch_callbacks=driver and
# every launch a driver API call. g1 covers <<<>>>, cudaLaunchKernel, cudaLaunchKernelExC, cuLaunchKernel,
# cuLaunchKernelEx, stream capture and cudaGraphLaunch (tests/gpu/launches.cu, api.* ranges); g2/g3 cuBLAS
# and Triton; g5-g8 graphs. Environment as check_gpu_time.sh (OUT default /tmp/kcount-launch-callbacks).
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT:-/tmp/kcount-launch-callbacks} GPU_TIME_OFF_ENV="KCOUNT_LAUNCH_CALLBACKS=driver" \
  OFF_META="launch_callbacks=driver" exec bash "$HERE/check_gpu_time.sh" "$@"
