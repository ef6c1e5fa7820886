// CPU cost of the library per launch on each of its threads, without a GPU: the real handlers
// (inject/callbacks.cpp, inject/session.cpp) driven as CUPTI drives them in a launch loop. One thread
// makes LAUNCHES runtime launches (cudaLaunchKernel enter/exit with the nested cuLaunchKernel enter/exit,
// as CUPTI reports them) inside one NVTX range; a second thread delivers the matching kernel activity
// records (CUpti_ActivityKernel10, eight kernel names at stable addresses, as CUPTI shares one name per
// function) in buffers of BATCH records, as CUPTI's buffer-completion thread does; the library's writer
// thread drains and writes them (trace mode) or aggregates them (KCOUNT_MODE=summary).
// Reports CPU ns per launch of the launching thread (callbacks), the activity thread (record conversion)
// and the rest of the process (the writer thread: encoding, compression, aggregation), from
// CLOCK_THREAD_CPUTIME_ID and CLOCK_PROCESS_CPUTIME_ID, plus log bytes per kernel. These costs run beside
// the launching thread; when the process has fewer free CPUs than busy threads they add to launch time.
// Not a test: numbers depend on the machine. Set KCOUNT_MODE=summary for summary mode and KCOUNT_OUTPUT
// to choose the log (default /tmp/kc_session_bench.kcount, removed afterwards).
// Launches come in bursts of PACE followed by a 100 ms pause (the writer's drain interval), so the
// writer's batches have the size they have in a real loop: PACE = 25,000 is one launch per 4 us.
// Usage: kc_session_bench [LAUNCHES] [BATCH] [PACE]     (defaults 1,000,000, 4,096 and 25,000)
#include <cupti.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "inject/callbacks.h"
#include "inject/session.h"
#include "tests/support/fake_nvtx.h"
#include "tests/support/launch_calls.h"

namespace {

double cpuSeconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Kernel names as PyTorch and cuBLAS spell them (CUPTI hands one pointer per function to every record).
const char* const kNames[] = {
    "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEvifT0_T1_",
    "_ZN2at6native13reduce_kernelILi512ELi1ENS0_8ReduceOpIfNS0_14func_wrapper_tIfZNS0_11sum_functorIfffEclERNS_"
    "14TensorIteratorEEUlffE_EEjfLi4ELi4EEEEEvT1_",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel_"
    "trt",
    "nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT",
    "triton_poi_fused_add_mul_0",
    "_Z12empty_kernelv",
    "_ZN2at6native18elementwise_kernelILi128ELi4EZNS0_22gpu_kernel_impl_nocastIZZZNS0_23direct_copy_kernel_"
    "cudaERNS_18TensorIteratorBaseEENKUlvE1_clEvENKUlvE8_clEvEUlN3c108BFloat16EE_EEvS4_RKT_EUliE_EEviT1_",
    "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_1",
};

}  // namespace

int main(int argc, char** argv) {
  const uint64_t launches = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  const uint64_t batch = std::max<uint64_t>(1, argc > 2 ? std::strtoull(argv[2], nullptr, 10) : 4'096);
  const uint64_t pace = std::max<uint64_t>(1, argc > 3 ? std::strtoull(argv[3], nullptr, 10) : 25'000);
  const std::string log = std::getenv("KCOUNT_OUTPUT") != nullptr ? std::getenv("KCOUNT_OUTPUT")
                                                                  : "/tmp/kc_session_bench.kcount";
  setenv("KCOUNT_OUTPUT", log.c_str(), 1);
  setenv("KCOUNT_LOG_LEVEL", "warn", 1);
  std::vector<std::string> names(std::begin(kNames), std::end(kNames));

  if (kc::test::installFakeNvtx() != 1) return 2;
  kc::test::pushA("bench");  // the first range starts recording
  kc::inject::Session& session = kc::inject::Session::get();
  if (!session.recording()) {
    std::fprintf(stderr, "kc_session_bench: the session did not start recording\n");
    return 2;
  }
  kc::inject::initLaunchApiNames(session.strings());
  kc::inject::setLaunchTiming(session.config().launch_timing);  // KCOUNT_LAUNCH_TIMING, as InitializeInjection does
  const double process0 = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID);

  double launch_cpu = 0;
  std::atomic<uint64_t> launched{0};
  std::thread launcher([&] {
    const double t0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    kc::test::pushA("step");
    for (uint64_t i = 0; i < launches; ++i) {
      kc::test::launchCall(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                           static_cast<uint32_t>(i + 1), names[i % names.size()].c_str(), /*nested_driver=*/true);
      if ((i + 1) % pace == 0 || i + 1 == launches) {
        launched.store(i + 1, std::memory_order_release);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
    kc::test::pop();
    launch_cpu = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - t0;
  });
  double activity_cpu = 0, activity_thread_cpu = 0;
  std::thread activity([&] {
    const double thread0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);
    std::vector<CUpti_ActivityKernel10> records(batch);
    std::vector<const CUpti_Activity*> ptrs(batch);
    double cpu = 0;
    for (uint64_t done = 0; done < launches;) {
      const uint64_t ready = launched.load(std::memory_order_acquire);
      if (ready == done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        continue;
      }
      const uint64_t n = std::min(batch, ready - done);
      for (uint64_t j = 0; j < n; ++j) {
        CUpti_ActivityKernel10& k = records[j];
        k = CUpti_ActivityKernel10{};
        k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        k.correlationId = static_cast<uint32_t>(done + j + 1);
        k.name = names[(done + j) % names.size()].c_str();
        k.start = 1'000'000'000 + (done + j) * 2'000;
        k.end = k.start + 1'500;
        k.streamId = 7;
        k.gridX = 132;
        k.gridY = k.gridZ = 1;
        k.blockX = 256;
        k.blockY = k.blockZ = 1;
        k.registersPerThread = 40;
        ptrs[j] = reinterpret_cast<const CUpti_Activity*>(&k);
      }
      const double t0 = cpuSeconds(CLOCK_THREAD_CPUTIME_ID);  // only the library's share of the thread
      kc::inject::onActivityRecords(ptrs.data(), n);
      cpu += cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - t0;
      done += n;
    }
    activity_cpu = cpu;
    activity_thread_cpu = cpuSeconds(CLOCK_THREAD_CPUTIME_ID) - thread0;
  });
  launcher.join();
  activity.join();
  kc::test::pop();
  session.finish(nullptr);
  // The rest of the process: the writer thread and the final flush (the activity thread's record
  // building is the benchmark's own and is left out).
  const double rest_cpu = cpuSeconds(CLOCK_PROCESS_CPUTIME_ID) - process0 - launch_cpu - activity_thread_cpu;
  struct stat st{};
  const double bytes = stat(log.c_str(), &st) == 0 ? static_cast<double>(st.st_size) : 0.0;
  if (std::getenv("KCOUNT_OUTPUT") == nullptr || log == "/tmp/kc_session_bench.kcount") unlink(log.c_str());
  const double per = 1e9 / static_cast<double>(launches);
  const char* mode = std::getenv("KCOUNT_MODE") != nullptr ? std::getenv("KCOUNT_MODE") : "trace";
  std::printf("mode=%s launches=%llu batch=%llu pace=%llu\n", mode, static_cast<unsigned long long>(launches),
              static_cast<unsigned long long>(batch), static_cast<unsigned long long>(pace));
  std::printf("launching thread (4 callbacks per launch): %7.1f ns CPU per launch\n", launch_cpu * per);
  std::printf("activity records (onActivityRecords):      %7.1f ns CPU per kernel\n", activity_cpu * per);
  std::printf("writer thread and final flush:             %7.1f ns CPU per launch\n", rest_cpu * per);
  std::printf("log bytes per kernel:                       %7.2f\n", bytes / static_cast<double>(launches));
  return 0;
}
