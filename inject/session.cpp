#include "inject/session.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <new>

#include "collector/clock.h"
#include "inject/log.h"
#include "inject/thread_state.h"

namespace kc::inject {

namespace {

constexpr uint64_t kDrainIntervalMs = 100;
constexpr uint64_t kFlushIntervalNs = 1000000000ull;
constexpr size_t kMaxPendingKernels = 4u << 20;  // ~384 MiB of KernelBody at most

Session* g_session = nullptr;  // immortal: never deleted
std::once_flag g_session_once;

// initial-exec: a plain %fs-relative load instead of a __tls_get_addr call on every launch callback. One
// pointer, so it fits the static TLS surplus glibc keeps for libraries loaded with dlopen (the
// CUDA_INJECTION64_PATH case).
__attribute__((tls_model("initial-exec"))) thread_local ThreadState* t_state = nullptr;
pthread_key_t g_thread_key;
std::once_flag g_key_once;

// pthread key destructors run when a thread (not the main thread) exits: hand its buffer to the
// writer, which frees it after the last drain.
void onThreadExit(void* p) {
  auto* ts = static_cast<ThreadState*>(p);
  if (ts == nullptr) return;
  if (ts->buffer != nullptr) ts->buffer->exited.store(true, std::memory_order_release);
  t_state = nullptr;
  delete ts;
}

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return buf;
}

std::string rankFromEnv() {
  for (const char* var : {"RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "SLURM_PROCID"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return v;
  }
  return {};
}

std::string commandLine() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  while (!s.empty() && s.back() == '\0') s.pop_back();
  for (char& c : s)
    if (c == '\0') c = ' ';
  return s;
}

}  // namespace

Session& Session::get() noexcept {
  std::call_once(g_session_once, [] { g_session = new Session(); });
  return *g_session;
}

Config Session::loadConfig() {
  std::string problems;
  Config c = readConfig(&problems);
  initLog(c.log_level);
  if (!problems.empty()) KC_LOG(warn, "{}", problems);
  return c;
}

Session::Session()
    : config_(loadConfig()),
      scopes_(StringTable::overflowId()),
      pool_(std::max<uint64_t>(2, config_.max_host_bytes / sizeof(HostEventBlock))) {
  if (config_.disabled) state_.store(SessionState::kDisabled, std::memory_order_release);
}

bool Session::activate() noexcept {
  try {
    std::call_once(activate_once_, [this] {
      SessionState expected = SessionState::kDormant;
      if (!state_.compare_exchange_strong(expected, SessionState::kActive)) return;
      const std::string host = hostName();
      const std::string rank = rankFromEnv();
      const std::string path = expandOutputPattern(config_.output, getpid(), host, rank);
      {
        std::lock_guard<std::mutex> lock(writer_mutex_);
        sink_ = std::make_unique<FileSink>(path, config_.file_mode, config_.max_file_bytes,
                                           [](const std::string& m) { KC_LOG(warn, "{}", m); });
        writer_ = std::make_unique<LogWriter>(sink_.get());
        if (config_.mode == RecordMode::kSummary) {
          Aggregator::Limits limits;
          limits.max_keys = config_.max_keys;
          aggregator_ = std::make_unique<Aggregator>(limits);
          last_snapshot_ns_ = nowNs();
        }
      }
      addMetadata("mode", config_.mode == RecordMode::kSummary ? "summary" : "trace");
      if (config_.mode == RecordMode::kSummary) addMetadata("interval_ns", std::to_string(config_.interval_ns));
      addMetadata("kcount_version", KCOUNT_VERSION);
      addMetadata("pid", std::to_string(getpid()));
      addMetadata("host", host);
      if (!rank.empty()) addMetadata("rank", rank);
      addMetadata("command_line", commandLine());
      addMetadata("clock", "CLOCK_MONOTONIC");
      addMetadata("start_ns", std::to_string(nowNs()));
      addMetadata("start_unix_ns",
                  std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count()));
      pid_.store(getpid());
      writer_thread_ = std::thread([this] { writerLoop(); });
    });
  } catch (const std::exception& e) {
    disable(std::string("cannot start recording: ") + e.what());
  } catch (...) {
    disable("cannot start recording");
  }
  return recording();
}

void Session::disable(const std::string& why) noexcept {
  SessionState prev = state_.exchange(SessionState::kDisabled, std::memory_order_acq_rel);
  if (prev != SessionState::kDisabled) KC_LOG(error, "disabled: {}; the program continues unprofiled", why);
}

ThreadBuffer* Session::registerThread(uint32_t thread_id) noexcept {
  try {
    auto* b = new ThreadBuffer(&pool_, thread_id);
    std::lock_guard<std::mutex> lock(registry_mutex_);
    threads_.push_back(b);
    return b;
  } catch (...) {
    return nullptr;
  }
}

// Activity records from CUPTI's buffer thread: appended under kernels_mutex_, and checked against the
// state under it too (finish() switches to kFinished under it, after its last drain), so a record is
// either written or counted as late, never lost silently.
template <typename Record>
void Session::addActivity(std::vector<Record>& pending, const Record* records, size_t count) noexcept {
  if (count == 0) return;
  try {
    std::lock_guard<std::mutex> lock(kernels_mutex_);
    const SessionState s = state();
    if (s == SessionState::kFinished) {
      counters_.late_activity_records.fetch_add(count, std::memory_order_relaxed);
      return;
    }
    if (s != SessionState::kActive) return;
    const size_t room = pending.size() < kMaxPendingKernels ? kMaxPendingKernels - pending.size() : 0;
    const size_t take = count < room ? count : room;
    pending.insert(pending.end(), records, records + take);
    if (take < count) counters_.dropped_kernel_records.fetch_add(count - take, std::memory_order_relaxed);
  } catch (...) {
    counters_.dropped_kernel_records.fetch_add(count, std::memory_order_relaxed);
  }
}

void Session::addKernels(const KernelBody* kernels, size_t count) noexcept {
  addActivity(pending_kernels_, kernels, count);
}

void Session::addMemOps(const MemOpBody* ops, size_t count) noexcept { addActivity(pending_mem_ops_, ops, count); }

void Session::addMetadata(std::string key, std::string value) noexcept {
  try {
    std::lock_guard<std::mutex> lock(metadata_mutex_);
    pending_metadata_.emplace_back(std::move(key), std::move(value));
  } catch (...) {
  }
}

std::string Session::logPath() const {
  std::lock_guard<std::mutex> lock(writer_mutex_);
  return sink_ ? sink_->path() : std::string();
}

void Session::requestFinish(void (*flush_activity)()) noexcept {
  finish_requested_.store(flush_activity != nullptr ? flush_activity : +[] {}, std::memory_order_release);
}

void Session::writerLoop() {
  // The application's signals are never delivered to this thread (a SIGTERM handler waits for it).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  uint64_t last_periodic = nowNs();
  std::unique_lock<std::mutex> wake_lock(wake_mutex_);
  while (!stop_writer_) {
    wake_.wait_for(wake_lock, std::chrono::milliseconds(kDrainIntervalMs));
    if (stop_writer_) break;
    wake_lock.unlock();
    if (auto fn = finish_requested_.exchange(nullptr)) {
      finish(fn);  // sets stop_writer_; detaches this thread
      wake_lock.lock();
      break;
    }
    try {
      if (auto fn = periodic_flush_.load(); fn != nullptr && nowNs() - last_periodic >= kFlushIntervalNs) {
        fn();  // no lock held: CUPTI calls back into addKernels
        activity_flushes_.fetch_add(1, std::memory_order_relaxed);
        last_periodic = nowNs();
      }
      std::lock_guard<std::mutex> lock(writer_mutex_);
      drainLocked(false);
    } catch (...) {
    }
    wake_lock.lock();
  }
}

// Order matters: host events and kernels are taken first, then the string and scope tables are
// snapshotted, so every id a taken record refers to is defined before it in the log.
void Session::drainLocked(bool final_chunk) {
  if (!writer_) return;
  scratch_events_.clear();
  std::vector<ThreadBuffer*> threads;
  {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    threads = threads_;
  }
  std::vector<ThreadBuffer*> gone;
  for (ThreadBuffer* b : threads) {
    const bool exited = b->exited.load(std::memory_order_acquire);
    b->drain([this](const HostEvent& e) { scratch_events_.push_back(e); });
    if (exited) gone.push_back(b);
  }
  scratch_kernels_.clear();
  scratch_mem_ops_.clear();
  {
    std::lock_guard<std::mutex> lock(kernels_mutex_);
    scratch_kernels_.swap(pending_kernels_);
    scratch_mem_ops_.swap(pending_mem_ops_);
    if (final_chunk) state_.store(SessionState::kFinished, std::memory_order_release);
  }
  scratch_metadata_.clear();
  {
    std::lock_guard<std::mutex> lock(metadata_mutex_);
    scratch_metadata_.swap(pending_metadata_);
  }

  for (const auto& [k, v] : scratch_metadata_) writer_->writeMetadata(k, v);
  strings_written_ =
      strings_.forEachFrom(strings_written_, [this](uint32_t id, std::string_view s) { writer_->writeString(id, s); });
  scopes_written_ = scopes_.forEachFrom(scopes_written_, [this](const ScopeBody& s) { writer_->writeScope(s); });
  if (aggregator_) {
    aggregateLocked(final_chunk);
  } else {
    for (const HostEvent& e : scratch_events_) {
      if (e.kind == HostEvent::kLaunch) {
        writer_->writeLaunch(e.launch);
        counters_.launches.fetch_add(1, std::memory_order_relaxed);
      } else if (e.kind == HostEvent::kRange) {
        writer_->writeRange(e.range);
        counters_.ranges.fetch_add(1, std::memory_order_relaxed);
      } else if (e.kind == HostEvent::kGraphNode) {
        writer_->writeGraphNode(e.graph_node);
      }
      if (writer_->chunkFull()) writer_->flush();
    }
    for (const KernelBody& k : scratch_kernels_) {
      writer_->writeKernel(k);
      if (writer_->chunkFull()) writer_->flush();
    }
    for (const MemOpBody& m : scratch_mem_ops_) {
      writer_->writeMemOp(m);
      if (writer_->chunkFull()) writer_->flush();
    }
  }
  counters_.kernels.fetch_add(scratch_kernels_.size(), std::memory_order_relaxed);
  if (!scratch_events_.empty() || !scratch_kernels_.empty() || !scratch_mem_ops_.empty()) has_records_ = true;

  if (!gone.empty()) {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    for (ThreadBuffer* b : gone) {
      counters_.dropped_host_records.fetch_add(b->dropped(), std::memory_order_relaxed);
      b->releaseAll();
      std::erase(threads_, b);
      delete b;
    }
  }

  // No file until the first launch, kernel or range: helper processes that initialize CUDA but launch
  // nothing (torch.compile's workers) leave no log behind.
  if (!has_records_) return;
  const uint64_t now = nowNs();
  if (final_chunk || writer_->chunkFull() || now - last_flush_ns_ >= kFlushIntervalNs) {
    writer_->flush();
    last_flush_ns_ = now;
  }
  reportLogPathOnce();
}

// Summary mode: the drained records are joined and tallied instead of written; a snapshot of the tallies
// is appended every interval, and at the final drain (after the forced CUPTI flush) the correlation window
// is resolved and the final snapshot written, so its totals are exact. A record the aggregator cannot take
// (out of memory) is counted as dropped with its kind.
void Session::aggregateLocked(bool final_chunk) {
  const uint64_t now = nowNs();
  if (!scratch_events_.empty() || !scratch_kernels_.empty() || !scratch_mem_ops_.empty()) has_records_ = true;
  for (const HostEvent& e : scratch_events_) {
    try {
      if (e.kind == HostEvent::kLaunch) {
        aggregator_->addLaunch(e.launch, now);
        counters_.launches.fetch_add(1, std::memory_order_relaxed);
      } else if (e.kind == HostEvent::kRange) {
        aggregator_->addRange(e.range);
        counters_.ranges.fetch_add(1, std::memory_order_relaxed);
      }  // graph nodes serve the capture-path view of trace logs only
    } catch (...) {
      counters_.dropped_host_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  for (const KernelBody& k : scratch_kernels_) {
    try {
      aggregator_->addKernel(k, now);
    } catch (...) {
      counters_.dropped_kernel_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  for (const MemOpBody& m : scratch_mem_ops_) {
    try {
      aggregator_->addMemOp(m, now);
    } catch (...) {
      counters_.dropped_kernel_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  try {
    aggregator_->settle(now, activity_flushes_.load(std::memory_order_relaxed));
    if (final_chunk) aggregator_->finish();
    const bool due = now - last_snapshot_ns_ >= config_.interval_ns;
    // The final snapshot is always written (it is the one marked final); periodic ones only on change.
    if (has_records_ && (final_chunk || (due && aggregator_->changedSinceSnapshot()))) {
      aggregator_->writeSnapshot(*writer_, now, final_chunk);
      last_snapshot_ns_ = now;
      writer_->flush();  // a snapshot goes out whole, at its time
    }
  } catch (...) {
  }
}

// `kcount run` learns which files this process wrote from KCOUNT_RUN_REPORT: one line per log, appended
// (O_APPEND) as soon as the file exists, so concurrent processes and killed ones are reported too.
void Session::reportLogPathOnce() {
  if (path_reported_ || config_.run_report.empty() || !sink_ || sink_->path().empty()) return;
  path_reported_ = true;
  const int fd = ::open(config_.run_report.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return;
  const std::string line = sink_->path() + "\n";
  [[maybe_unused]] ssize_t n = ::write(fd, line.data(), line.size());
  ::close(fd);
}

void Session::finish(void (*flush_activity)()) noexcept {
  if (finishing_.exchange(true)) return;
  try {
    if (state() != SessionState::kActive) return;
    if (flush_activity != nullptr) flush_activity();  // no lock held: CUPTI calls addKernels
    activity_flushes_.fetch_add(1, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(wake_mutex_);
      stop_writer_ = true;
    }
    wake_.notify_all();
    if (writer_thread_.joinable()) {
      if (writer_thread_.get_id() == std::this_thread::get_id()) {
        writer_thread_.detach();
      } else {
        writer_thread_.join();
      }
    }
    writeUnclosedRanges(false);  // ranges still open on the finishing thread
    if (auto fn = before_final_drain_.load()) fn();
    std::lock_guard<std::mutex> lock(writer_mutex_);
    drainLocked(/*final_chunk=*/true);  // switches to kFinished: later activity records count as late
    StatsBody stats{};
    stats.launches = counters_.launches.load();
    stats.kernels = counters_.kernels.load();
    stats.ranges = counters_.ranges.load();
    uint64_t dropped_host = counters_.dropped_host_records.load();
    {
      std::lock_guard<std::mutex> rl(registry_mutex_);
      for (ThreadBuffer* b : threads_) dropped_host += b->dropped();
    }
    stats.dropped_host_records = dropped_host;
    stats.dropped_activity_records =
        counters_.dropped_activity_records.load() + counters_.dropped_kernel_records.load();
    stats.activity_buffers_refused = counters_.activity_buffers_refused.load();
    stats.nvtx_pop_underflow = counters_.nvtx_pop_underflow.load();
    stats.late_activity_records = counters_.late_activity_records.load();
    stats.bytes_dropped = writer_ ? writer_->droppedBytes() : 0;
    if (writer_ && has_records_) {
      writer_->writeStats(stats);
      writer_->writeEnd();
      writer_->flush();
      const std::string path = sink_ ? sink_->path() : std::string();
      if (sink_) sink_->close();
      if (!path.empty()) {
        KC_LOG(info, "log: {} ({} launches, {} kernels, {} ranges, {} bytes; CUPTI {})", path, stats.launches,
               stats.kernels, stats.ranges, writer_->bytesWritten(),
               cupti_description_.empty() ? std::string("not loaded") : cupti_description_);
      }
      if (stats.dropped_host_records + stats.dropped_activity_records + stats.activity_buffers_refused +
              writer_->droppedBytes() > 0) {
        KC_LOG(warn, "records dropped: {} launch/range, {} kernel, {} activity buffers refused, {} bytes not written",
               stats.dropped_host_records, stats.dropped_activity_records, stats.activity_buffers_refused,
               writer_->droppedBytes());
      }
    }
  } catch (...) {
    state_.store(SessionState::kFinished, std::memory_order_release);
  }
  closed_.store(true, std::memory_order_release);
}

void Session::abandonAfterFork() noexcept {
  // The child has no writer thread and must not write the parent's log. Locks may be held by threads
  // that no longer exist: touch nothing that locks.
  state_.store(SessionState::kDisabled, std::memory_order_release);
  finishing_.store(true);
  t_state = nullptr;
}

void writeUnclosedRanges(bool from_signal_handler) noexcept {
  ThreadState* ts = t_state;
  if (ts == nullptr || ts->buffer == nullptr) return;
  const uint64_t now = nowNs();
  const uint32_t d = ts->depth < ThreadState::kMaxDepth ? ts->depth : ThreadState::kMaxDepth;
  for (uint32_t i = d; i-- > 0;) {
    HostEvent e;
    e.kind = HostEvent::kRange;
    e.reserved = 0;
    e.range = RangeBody{ts->stack[i].begin_ns, now, ts->stack[i].scope_id, ts->thread_id, ts->thread_id, kRangeUnclosed};
    if (from_signal_handler) {
      ts->buffer->appendNoGrow(e);
    } else {
      ts->buffer->append(e);
    }
  }
  ts->depth = 0;
}

ThreadState* threadState() noexcept {
  ThreadState* ts = t_state;
  if (ts != nullptr) [[likely]]
    return ts;
  Session& s = Session::get();
  if (!s.recording()) return nullptr;
  try {
    std::call_once(g_key_once, [] { pthread_key_create(&g_thread_key, onThreadExit); });
    ts = new (std::nothrow) ThreadState();
    if (ts == nullptr) return nullptr;
    ts->thread_id = static_cast<uint32_t>(syscall(SYS_gettid));
    ts->buffer = s.registerThread(ts->thread_id);
    if (ts->buffer == nullptr) {
      delete ts;
      return nullptr;
    }
    t_state = ts;
    pthread_setspecific(g_thread_key, ts);
    return ts;
  } catch (...) {
    return nullptr;
  }
}

}  // namespace kc::inject
