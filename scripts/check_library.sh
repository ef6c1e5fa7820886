#!/usr/bin/env bash
# libkcount.so must load into any process: run-time dependencies only the C library and the loader,
# and a dynamic symbol table that exports only the entry points (a leaked fmt/spdlog/libstdc++ symbol
# could be interposed over PyTorch's own copies). Usage: check_library.sh path/to/libkcount.so
set -euo pipefail
if [[ $# -ne 1 || ! -f $1 ]]; then
  echo "usage: check_library.sh path/to/libkcount.so   (e.g. build/lib/libkcount.so)${1:+: $1 is not a file}" >&2
  exit 2
fi
lib=$1
fail=0
allowed_deps='^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|libdl\.so\.2|libpthread\.so\.0|/lib64/ld-linux-x86-64\.so\.2|ld-linux-x86-64\.so\.2)$'
deps=$(ldd "$lib" | awk '{print $1}')
for d in $deps; do
  if [[ ! $d =~ $allowed_deps ]]; then echo "FAIL $lib depends on $d"; fail=1; fi
done
exports=$(nm -D --defined-only "$lib" | awk '{print $3}' | sort)
want=$(printf '%s\n' InitializeInjection InitializeInjectionNvtx2 _exit _Exit kill raise execve execv execvp execvpe execl execlp execle fexecve kcount_recording cuptiSubscribe cuptiUnsubscribe cuptiFinalize cuptiActivityRegisterCallbacks | sort)
if [[ $exports != "$want" ]]; then
  echo "FAIL exported symbols differ from the entry points:"; diff <(echo "$want") <(echo "$exports") || true; fail=1
fi
# Its TLS block is static TLS (the per-thread state pointer is initial-exec, for a plain %fs load on every
# launch callback). When CUDA dlopen()s the library (CUDA_INJECTION64_PATH) glibc gives such blocks only
# what is left of its surplus (rtld.optional_static_tls, 512 bytes by default, shared with every other
# dlopen()ed library in the process); past it dlopen fails with "cannot allocate memory in static TLS
# block" and the process runs unprofiled. Keep it under 256 bytes: large per-thread data goes on the heap.
tls_bytes=$(readelf -lW "$lib" | awk '$1 == "TLS" {print $6}')
tls_bytes=$(( ${tls_bytes:-0} ))
if (( tls_bytes > 256 )); then
  echo "FAIL $lib has a TLS block of $tls_bytes bytes (at most 256: it is static TLS when dlopen()ed)"; fail=1
fi
needed=$(readelf -d "$lib" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
if [[ $fail -eq 0 ]]; then
  echo "PASS $lib: NEEDED $needed; TLS $tls_bytes bytes; exports $(echo $exports)"
  echo "1 passed, 0 failed"
else
  echo "0 passed, 1 failed"
fi
exit $fail
