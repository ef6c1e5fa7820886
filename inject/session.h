// The one profiling session of a process: interned strings and scopes, per-thread buffers, pending
// kernel records, the writer thread and the log file. Created on first use and never destroyed, so
// callbacks that arrive during process exit always find it alive (FIELD-NOTES: the exit-order trap).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collector/aggregator.h"
#include "collector/file_sink.h"
#include "collector/host_buffer.h"
#include "collector/log_writer.h"
#include "collector/scope_tree.h"
#include "collector/string_table.h"
#include "inject/config.h"

namespace kc::inject {

/// Lifecycle: kDormant (loaded; nothing recorded yet) -> kActive (first CUDA init or NVTX range:
/// writer thread running) -> kFinished (log closed at exit). kDisabled: a failure or KCOUNT_DISABLE
/// turned the tool off; callbacks return at once.
enum class SessionState : int { kDormant = 0, kActive = 1, kFinished = 2, kDisabled = 3 };

/// Counters updated from any thread (relaxed atomics).
struct SessionCounters {
  std::atomic<uint64_t> launches{0};
  std::atomic<uint64_t> kernels{0};
  std::atomic<uint64_t> ranges{0};
  std::atomic<uint64_t> dropped_host_records{0};  // from exited threads' buffers (live ones summed at close)
  std::atomic<uint64_t> dropped_activity_records{0};
  std::atomic<uint64_t> activity_buffers_refused{0};
  std::atomic<uint64_t> nvtx_pop_underflow{0};
  std::atomic<uint64_t> late_activity_records{0};
  std::atomic<uint64_t> dropped_kernel_records{0};  // pending-kernel cap reached
};

class Session {
 public:
  /// The process's session (created on first call with the configuration from the environment).
  static Session& get() noexcept;

  const Config& config() const { return config_; }
  SessionState state() const { return state_.load(std::memory_order_acquire); }
  bool recording() const { return state() == SessionState::kActive; }
  /// recording() without reaching the session object (one atomic load): for the launch hot path.
  static bool recordingNow() { return state_.load(std::memory_order_acquire) == SessionState::kActive; }

  /// Starts recording (writer thread, exit handler). Idempotent, thread-safe. Returns recording().
  bool activate() noexcept;
  /// Turns the tool off for good with one error message; the host program carries on.
  void disable(const std::string& why) noexcept;
  /// Final flush: drains every buffer, writes counters and the end record, closes the log. Runs once;
  /// later calls return at once. `flush_activity` is called first, outside any lock (it may call back
  /// into addKernel through CUPTI).
  void finish(void (*flush_activity)()) noexcept;

  StringTable& strings() { return strings_; }
  ScopeTree& scopes() { return scopes_; }
  BlockPool& pool() { return pool_; }
  SessionCounters& counters() { return counters_; }

  /// Registers a new thread's buffer (once per thread; takes a lock). Never throws; nullptr on failure.
  ThreadBuffer* registerThread(uint32_t thread_id) noexcept;
  /// Adds kernel records converted from a CUPTI buffer (CUPTI's thread). Takes the kernels lock once.
  /// Records arriving after the log was closed are counted as late.
  void addKernels(const KernelBody* kernels, size_t count) noexcept;
  /// Same for memcpy/memset activity records.
  void addMemOps(const MemOpBody* ops, size_t count) noexcept;
  /// Sets a function the writer thread calls about once a second, outside any lock (a forced CUPTI
  /// flush, so a process killed without warning loses at most the last interval).
  void setPeriodicFlush(void (*fn)()) noexcept { periodic_flush_.store(fn); }
  /// Sets a function finish() calls before the final drain (process-wide NVTX ranges still open).
  void setBeforeFinalDrain(void (*fn)()) noexcept { before_final_drain_.store(fn); }
  /// Async-signal-safe: asks the writer thread to run finish(flush_activity) and returns at once.
  void requestFinish(void (*flush_activity)()) noexcept;
  /// Process id at activation (a vfork/posix_spawn child sees another getpid()).
  int pid() const { return pid_.load(std::memory_order_relaxed); }
  /// Adds a metadata entry written with the next chunk. Thread-safe.
  void addMetadata(std::string key, std::string value) noexcept;

  /// Which CUPTI was loaded, for the closing message ("path (API version N)"). Call before recording.
  void setCuptiDescription(std::string d) { cupti_description_ = std::move(d); }
  /// True once finish() has written and closed the log (or found nothing to write).
  bool closed() const { return closed_.load(std::memory_order_acquire); }
  /// Path of the log file, "" until the first chunk is written.
  std::string logPath() const;

  /// After fork() in the child: the writer thread is gone; stop recording without writing anything.
  void abandonAfterFork() noexcept;

 private:
  Session();
  static Config loadConfig();
  void writerLoop();
  void drainLocked(bool final_chunk);  // requires writer_mutex_
  void reportLogPathOnce();            // requires writer_mutex_
  void aggregateLocked(bool final_chunk);  // summary mode part of drainLocked; requires writer_mutex_
  template <typename Record>
  void addActivity(std::vector<Record>& pending, const Record* records, size_t count) noexcept;

  Config config_;
  // One session per process, so its state is a static: the hot path reads it without Session::get().
  static inline std::atomic<SessionState> state_{SessionState::kDormant};
  SessionCounters counters_;
  StringTable strings_;
  ScopeTree scopes_;
  BlockPool pool_;

  std::mutex registry_mutex_;                 // guards threads_
  std::vector<ThreadBuffer*> threads_;

  std::mutex kernels_mutex_;                  // guards pending_kernels_, pending_mem_ops_, and the
                                              // switch of state_ to kFinished (so no record slips
                                              // between the final drain and the close)
  std::vector<KernelBody> pending_kernels_;
  std::vector<MemOpBody> pending_mem_ops_;

  std::mutex metadata_mutex_;                 // guards pending_metadata_
  std::vector<std::pair<std::string, std::string>> pending_metadata_;

  // Writer side: everything below is guarded by writer_mutex_. Never held while calling into CUPTI
  // (a CUPTI flush calls back into addKernels).
  mutable std::mutex writer_mutex_;
  std::unique_ptr<FileSink> sink_;
  std::unique_ptr<LogWriter> writer_;
  uint32_t strings_written_ = 0;
  uint32_t scopes_written_ = 0;
  uint64_t last_flush_ns_ = 0;
  bool has_records_ = false;
  bool path_reported_ = false;  // a launch, kernel or range was taken: the log file may be created
  std::vector<HostEvent> scratch_events_;
  std::vector<KernelBody> scratch_kernels_;
  std::vector<MemOpBody> scratch_mem_ops_;
  std::vector<std::pair<std::string, std::string>> scratch_metadata_;
  // Summary mode (KCOUNT_MODE=summary): records go to the aggregator instead of the log, and a snapshot
  // is written every config_.interval_ns. Guarded by writer_mutex_.
  std::unique_ptr<Aggregator> aggregator_;
  uint64_t last_snapshot_ns_ = 0;
  std::atomic<uint64_t> activity_flushes_{0};  // forced CUPTI flushes completed (the aggregator's clock)

  std::mutex wake_mutex_;
  std::condition_variable wake_;
  bool stop_writer_ = false;                  // guarded by wake_mutex_
  std::thread writer_thread_;
  std::once_flag activate_once_;
  std::atomic<bool> finishing_{false};
  std::atomic<void (*)()> periodic_flush_{nullptr};
  std::atomic<void (*)()> before_final_drain_{nullptr};
  std::atomic<void (*)()> finish_requested_{nullptr};  // set by requestFinish (signal handler)
  std::atomic<int> pid_{0};
  std::atomic<bool> closed_{false};
  std::string cupti_description_;  // written once in InitializeInjection, read in finish()
};

}  // namespace kc::inject
