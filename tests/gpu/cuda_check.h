// CK(call): the GPU check programs' error check (tests/gpu/*.cu): a CUDA runtime or driver call that
// returns non-zero prints file, line, call and code to stderr and exits 1.
#pragma once

#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                               \
  do {                                                                                      \
    auto err = (x);                                                                         \
    if (err != 0) {                                                                         \
      std::fprintf(stderr, "%s:%d: %s failed with %d\n", __FILE__, __LINE__, #x, int(err)); \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)
