// Two ways a host program can trip the injected library, as NVTX-only programs (no CUDA):
//   nvtx_host_cases threads   32 threads make their first NVTX calls at the same moment (no NVTX call
//                             on the main thread first): 20000 x {push odd|even, push in, pop, pop} each.
//                             Every range must be in the log (the session starts while they push).
//   nvtx_host_cases closefrom FILE   100 ranges, wait past the library's first flush (1.5 s), close
//                             descriptors 3..1023 like a daemon, open FILE (it gets the library's old
//                             descriptor number), 100 more ranges, wait, write "hello\n" to FILE. FILE must
//                             hold exactly "hello\n": the library must never write into it.
//   nvtx_host_cases state        a thread calls kcount_recording() in a tight loop while the main thread
//                             makes the process's first NVTX call (KCOUNT_START=on: the session starts
//                             in that call). Prints the distinct values seen, in order ("2 1": armed,
//                             then recording). A 0 in between is the bug the Python module hooks hit:
//                             they are removed on a 0 and miss every forward until the next poll.
#include <dlfcn.h>
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "threads") == 0) {
    std::vector<std::thread> ts;
    for (int t = 0; t < 32; ++t)
      ts.emplace_back([t] {
        for (int i = 0; i < 20000; ++i) {
          nvtxRangePushA(t % 2 ? "odd" : "even");
          nvtxRangePushA("in");
          nvtxRangePop();
          nvtxRangePop();
        }
      });
    for (auto& t : ts) t.join();
    return 0;
  }
  if (argc >= 3 && std::strcmp(argv[1], "closefrom") == 0) {
    for (int i = 0; i < 100; ++i) {
      nvtxRangePushA("a");
      nvtxRangePop();
    }
    usleep(1500000);
    for (int fd = 3; fd < 1024; ++fd) close(fd);
    const int mine = open(argv[2], O_CREAT | O_TRUNC | O_WRONLY, 0644);
    if (mine < 0) return 3;
    for (int i = 0; i < 100; ++i) {
      nvtxRangePushA("b");
      nvtxRangePop();
    }
    usleep(1500000);
    const char* s = "hello\n";
    if (write(mine, s, std::strlen(s)) != static_cast<ssize_t>(std::strlen(s))) return 4;
    close(mine);
    return 0;
  }
  if (argc >= 2 && std::strcmp(argv[1], "state") == 0) {
    auto recording = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "kcount_recording"));
    if (recording == nullptr) return 5;  // the library is not preloaded
    std::atomic<int> polls{0};
    std::atomic<bool> done{false};
    std::vector<int> seen;
    std::thread poller([&] {
      while (!done.load()) {
        const int v = recording();
        if (seen.empty() || seen.back() != v) seen.push_back(v);
        polls.fetch_add(1);
      }
    });
    while (polls.load() < 1000) std::this_thread::yield();
    nvtxRangePushA("first");
    nvtxRangePop();
    const int after = polls.load();
    while (polls.load() < after + 1000) std::this_thread::yield();
    done.store(true);
    poller.join();
    for (size_t i = 0; i < seen.size(); ++i) std::printf(i ? " %d" : "%d", seen[i]);
    std::printf("\n");
    return 0;
  }
  std::fprintf(stderr, "usage: nvtx_host_cases threads | closefrom FILE | state\n");
  return 2;
}
