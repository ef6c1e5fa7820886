#include "inject/session.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>

#include "collector/clock.h"
#include "collector/saturating.h"
#include "collector/shown_value.h"
#include "inject/control.h"
#include "inject/graph_execs.h"
#include "inject/launch_sampling.h"
#include "inject/log.h"
#include "inject/self_cost.h"
#include "inject/settings.h"
#include "inject/thread_state.h"

namespace kc::inject {

namespace {

constexpr uint64_t kFlushIntervalNs = 1000000000ull;
// Host events copied out of the thread buffers at a time by a drain (56 bytes each: about 0.9 MiB).
constexpr size_t kDrainBatch = 16384;
/// Longest segment reason written again before its Segment record once chunks were kept out (bytes).
constexpr size_t kMaxRepeatedReason = 128;

// End reason of the last window, and value of kMetaEndSignal, for a process ending by signal `sig`
// (Session::noteEndSignal; only these three are taken); "exit" for 0.
const char* endReasonOfSignal(int sig) {
  switch (sig) {
    case 0: return "exit";
    case SIGTERM: return "SIGTERM";
    case SIGINT: return "SIGINT";
    case SIGHUP: return "SIGHUP";
    default: return "signal";
  }
}
constexpr size_t kMaxPendingKernels = 4u << 20;  // ~384 MiB of KernelBody at most

Session* g_session = nullptr;  // immortal: never deleted

// KCOUNT_GPU_TIME=0: the kernel of a launch named at its call (HostEvent::reserved), as a kernel record
// without GPU time: start = end = the launch's API exit on the host clock; device, stream and launch
// shape unknown (0).
KernelBody kernelAtLaunch(const HostEvent& e) {
  KernelBody k{};
  k.correlation_id = e.launch.correlation_id;
  k.start_ns = e.launch.exit_ns;
  k.end_ns = e.launch.exit_ns;
  k.name_id = e.reserved;
  return k;
}
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
  // Push ranges the thread never popped end with the thread: written as unclosed, ended now.
  if (ts->buffer != nullptr && ts->depth > 0 && Session::recordingNow()) writeUnclosedRanges(ts, false);
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

// try_lock() in 1 ms steps up to `ms` (a timed mutex's clock-based lock is not seen by ThreadSanitizer's
// interceptors on this toolchain, which then reports the unlock as an error).
bool Session::tryLockFor(std::unique_lock<std::mutex>& lock, int ms) {
  for (int i = 0; i <= ms; ++i) {
    if (lock.try_lock()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

uint64_t nextSnapshotDue(uint64_t start_ns, uint64_t interval_ns, uint64_t now_ns) noexcept {
  const uint64_t step = std::max<uint64_t>(interval_ns, 1);
  const uint64_t k = now_ns < start_ns ? 1 : (now_ns - start_ns) / step + 1;
  if (k > (UINT64_MAX - start_ns) / step) return UINT64_MAX;
  return start_ns + k * step;
}

void appendRunReport(const std::string& report, std::string_view line) noexcept {
  if (report.empty() || line.empty()) return;
  try {
    const int fd = ::open(report.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return;
    std::string text(line);
    text += '\n';
    [[maybe_unused]] ssize_t n = ::write(fd, text.data(), text.size());
    ::close(fd);
  } catch (...) {
  }
}

void noteRunReport(const std::string& report, std::string_view what, std::string_view text) noexcept {
  if (report.empty()) return;
  try {
    std::string line(1, kFileSinkNote);
    line.append(what).append(" ").append(std::to_string(getpid())).append(" ").append(text);
    std::replace(line.begin() + 1, line.end(), '\n', ' ');  // one line
    appendRunReport(report, line);
  } catch (...) {
  }
}

Session& Session::get() noexcept {
  std::call_once(g_session_once, [] { g_session = new Session(); });
  return *g_session;
}

Config Session::loadConfig() {
  std::string problems;
  Config c = readConfig(&problems);
  initLog(c.log_level);
  // One warning line per problem, each with the "[kcount] warning:" prefix (problems are '\n'-separated).
  size_t begin = 0;
  while (begin < problems.size()) {
    size_t end = problems.find('\n', begin);
    if (end == std::string::npos) end = problems.size();
    if (end > begin) KC_LOG(warn, "{}", std::string_view(problems).substr(begin, end - begin));
    begin = end + 1;
  }
  return c;
}

Session::Session()
    : config_(loadConfig()),
      scopes_(StringTable::overflowId()),
      pool_(std::max<uint64_t>(2, config_.max_host_bytes / sizeof(HostEventBlock))) {
  if (config_.disabled) {
    state_.store(SessionState::kDisabled, std::memory_order_release);
    const char* v = getSetting("KCOUNT_DISABLE");
    // The value as the warnings show it: quoted and escaped unless a plain word (a newline in it would
    // split the reason kcount run prints).
    noteRunReport(config_.run_report, "disabled",
                  "KCOUNT_DISABLE=" + shownSettingValue(v != nullptr ? v : "") + " is set");
  } else if (!config_.refused.empty()) {
    // A malformed disk limit (readConfig() warned once): disabled from the start, as with KCOUNT_DISABLE.
    state_.store(SessionState::kDisabled, std::memory_order_release);
    noteRunReport(config_.run_report, "disabled", config_.refused);
  }
  // Before any callback can take a timestamp: every hot-path timestamp of the process uses this source.
  const HostClockSource source =
      config_.host_clock_auto && tscUsableHere() ? HostClockSource::kTsc : HostClockSource::kMonotonic;
  setHostClockSource(source);
  ticks_.start(hostClockSource(), takeAnchor());
}

bool Session::activate() noexcept {
  try {
    std::call_once(activate_once_, [this] {
      SessionState expected = SessionState::kDormant;
      if (!state_.compare_exchange_strong(expected, SessionState::kActive)) return;
      const std::string host = hostName();
      const std::string rank = rankFromEnv();
      // Absolute: the messages and kcount run's report name the file where it is, even after the program
      // changed its working directory (a launcher's cd, os.chdir()) before recording started.
      std::string cwd(4096, '\0');
      cwd.resize(getcwd(cwd.data(), cwd.size()) != nullptr ? std::strlen(cwd.c_str()) : 0);
      const std::string path = absoluteLogPath(expandOutputPattern(config_.output, getpid(), host, rank), cwd);
      const uint64_t start_ns = nowNs();  // the log's start_ns, and time zero of the snapshot schedule
      {
        std::lock_guard<std::mutex> lock(writer_mutex_);
        sink_ = std::make_unique<FileSink>(
            path, config_.file_mode, config_.max_file_bytes, [](const std::string& m) { KC_LOG(warn, "{}", m); },
            config_.max_file_bytes != 0 ? config_.max_files : 1, [this](const std::string& p) { reportLogPath(p); });
        // A symbolic link at the log's name: the tool turns itself off (one message; the program goes on).
        sink_->setLinkRefused([this](const std::string& m) {
          log_refused_ = true;  // the sink calls this under writer_mutex_
          disable(m);
        });
        writer_ = std::make_unique<LogWriter>(sink_.get());
        writer_->setPreamble(&Session::writePreamble, this);
        writer_->setDefinitions(&definitions_);  // each file defines what its records use
        if (config_.mode == RecordMode::kSummary) {
          Aggregator::Limits limits;
          limits.max_keys = config_.max_keys;
          limits.launch_timing_sample = config_.launch_timing;
          aggregator_ = std::make_unique<Aggregator>(limits);
          aggregator_->setScopeParents([this](uint32_t id) { return scopes_.node(id).parent_id; });
          snapshot_start_ns_ = start_ns;
          next_snapshot_ns_ = nextSnapshotDue(start_ns, config_.interval_ns, start_ns);
        }
      }
      addMetadata("mode", config_.mode == RecordMode::kSummary ? "summary" : "trace");
      if (config_.mode == RecordMode::kSummary) addMetadata("interval_ns", std::to_string(config_.interval_ns));
      // KCOUNT_LAUNCH_TIMING=N (summary mode only, config.cpp): launch CPU sums are estimates.
      if (config_.launch_timing > 1) addMetadata("launch_timing_sample", std::to_string(config_.launch_timing));
      addMetadata("kcount_version", KCOUNT_VERSION);
      addMetadata("pid", std::to_string(getpid()));
      addMetadata("host", host);
      if (!rank.empty()) addMetadata("rank", rank);
      addMetadata("clock", "CLOCK_MONOTONIC");
      // Where the launch and range timestamps were taken from before their conversion to the clock above.
      addMetadata("host_clock", hostClockSource() == HostClockSource::kTsc ? "tsc" : "CLOCK_MONOTONIC");
      addMetadata("start_ns", std::to_string(start_ns));
      addMetadata("start_unix_ns",
                  std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count()));
      // Last: the run's identity (host, pid, start_ns) goes out before it, so that a command line too long
      // for the first file at a small KCOUNT_MAX_BYTES moves to the next part without taking the identity
      // the reader joins the parts by.
      addMetadata("command_line", commandLine());
      pid_.store(getpid());
      gate_.store(kGateLive, std::memory_order_release);  // active, paused until a window opens
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
  gate_.store(0, std::memory_order_release);
  SessionState prev = state_.exchange(SessionState::kDisabled, std::memory_order_acq_rel);
  if (prev != SessionState::kDisabled) {
    KC_LOG(error, "disabled: {}; the program continues unprofiled", why);
    noteRunReport(config_.run_report, "disabled", why);
  }
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
    // Every drain interval, or sooner at a window's deadline (ctl start --duration, KCOUNT_CAPTURE_DURATION):
    // a window closes within about a millisecond of its duration, not up to one interval late.
    uint64_t wait_ns = kDrainIntervalNs;
    if (const uint64_t d = window_deadline_ns_.load(); d != 0) {
      const uint64_t now = nowNs();
      wait_ns = std::max<uint64_t>(1000000, d > now ? std::min(wait_ns, d - now) : 0);  // never a busy loop
    }
    wake_.wait_for(wake_lock, std::chrono::nanoseconds(wait_ns));
    if (stop_writer_) break;
    wake_lock.unlock();
    if (auto fn = finish_requested_.exchange(nullptr)) {
      finish(fn);  // sets stop_writer_; detaches this thread
      wake_lock.lock();
      break;
    }
    checkDeadline();  // KCOUNT_CAPTURE_DURATION / ctl start --duration; no lock held
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

// Every id a taken record refers to was interned before the record was published, so the writer finds
// its definition in the tables when it writes the record (LogWriter::setDefinitions). Host events are taken in batches of at most kDrainBatch (their copy in scratch_events_ is bounded;
// the per-thread buffers are the memory KCOUNT_MAX_HOST_MB caps), up to what each thread had published
// when the drain began: a drain ends even while a thread keeps launching.
void Session::drainLocked(bool final_chunk) {
  if (!writer_) return;
  std::vector<ThreadBuffer*> threads;
  {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    threads = threads_;
  }
  struct Take {
    ThreadBuffer* buffer;
    uint64_t until;  // published() when the drain began
  };
  std::vector<Take> takes;
  takes.reserve(threads.size());
  std::vector<ThreadBuffer*> gone;
  for (ThreadBuffer* b : threads) {
    const bool exited = b->exited.load(std::memory_order_acquire);  // before published(): its last events count
    takes.push_back({b, b->published()});
    if (exited) gone.push_back(b);
  }
  scratch_metadata_.clear();
  {
    std::lock_guard<std::mutex> lock(metadata_mutex_);
    scratch_metadata_.swap(pending_metadata_);
  }
  for (const auto& [k, v] : scratch_metadata_) {
    writer_->writeMetadata(k, v);
    all_metadata_.emplace_back(k, v);
  }

  uint64_t kernels_written = 0;
  const uint64_t graph_drain = graphExecs().drainBegins();  // execs destroyed before it are forgotten after it
  size_t next = 0;
  do {
    scratch_events_.clear();
    while (next < takes.size() && scratch_events_.size() < kDrainBatch) {
      const Take& t = takes[next];
      const uint64_t room = kDrainBatch - scratch_events_.size();
      const size_t n = t.buffer->drain([this](const HostEvent& e) { scratch_events_.push_back(e); },
                                       std::min(t.until, t.buffer->drained() + room));
      if (n == 0 || t.buffer->drained() >= t.until) ++next;
    }
    if (scratch_events_.empty()) break;
    has_records_ = true;
    convertTicksLocked();
    renumberEventsLocked();
    if (aggregator_) {
      aggregateEventsLocked();
    } else {
      kernels_written += writeEventsLocked();
    }
  } while (next < takes.size());
  graphExecs().drainEnded(graph_drain);

  scratch_kernels_.clear();
  scratch_mem_ops_.clear();
  {
    std::lock_guard<std::mutex> lock(kernels_mutex_);
    scratch_kernels_.swap(pending_kernels_);
    scratch_mem_ops_.swap(pending_mem_ops_);
    if (final_chunk) {
      state_.store(SessionState::kFinished, std::memory_order_release);
      gate_.store(0, std::memory_order_release);
    }
  }
  if (!scratch_kernels_.empty() || !scratch_mem_ops_.empty()) has_records_ = true;
  renumberActivityLocked();
  if (aggregator_) {
    aggregateLocked(final_chunk);
  } else {
    for (const KernelBody& k : scratch_kernels_) {
      if (!admitActivity(k, held_kernels_)) continue;
      writer_->writeKernel(k);
      ++kernels_written;
      if (writer_->chunkFull()) writer_->flush();
    }
    for (const MemOpBody& m : scratch_mem_ops_) {
      if (!admitActivity(m, held_mem_ops_)) continue;
      writer_->writeMemOp(m);
      if (writer_->chunkFull()) writer_->flush();
    }
  }
  counters_.kernels.fetch_add(kernels_written, std::memory_order_relaxed);

  if (!gone.empty()) {
    std::lock_guard<std::mutex> lock(registry_mutex_);
    for (ThreadBuffer* b : gone) {
      counters_.dropped_host_records.fetch_add(b->dropped(), std::memory_order_relaxed);
      exited_callbacks_ += b->callbacks.read();
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
}

// Trace mode: writes the batch of host events in scratch_events_; returns the kernels written with their
// launch (KCOUNT_GPU_TIME=0).
uint64_t Session::writeEventsLocked() {
  uint64_t kernels_written = 0;
  for (const HostEvent& e : scratch_events_) {
    if (e.kind == HostEvent::kLaunch) {
      if (seg_open_) {  // the window's correlation ids: its activity records are filtered by them
        const uint64_t c = e.launch.correlation_id;
        seg_first_ = seg_first_ == 0 ? c : std::min(seg_first_, c);
        seg_last_ = std::max(seg_last_, c);
      }
      writer_->writeLaunch(e.launch);
      counters_.launches.fetch_add(1, std::memory_order_relaxed);
      if ((e.launch.flags & kLaunchMemOp) != 0) counters_.mem_calls.fetch_add(1, std::memory_order_relaxed);
      kernels_written += kernelsAtLaunchLocked(e, [&](const KernelBody& k) {
        writer_->writeKernel(k);
        if (writer_->chunkFull()) writer_->flush();
      });
    } else if (e.kind == HostEvent::kRange) {
      writer_->writeRange(e.range);
      noteRangeCallbacksLocked(e.range);
      counters_.ranges.fetch_add(1, std::memory_order_relaxed);
    } else if (e.kind == HostEvent::kGraphNode) {
      writer_->writeGraphNode(e.graph_node);
    }
    if (writer_->chunkFull()) writer_->flush();
  }
  return kernels_written;
}

// The drained host records carry hostTicks() values; from here on they are CLOCK_MONOTONIC ns like every
// other time in the log. The anchor is taken after the records (each was published before the drain
// began), so they lie before it: on the line's known side, within about one drain interval.
void Session::convertTicksLocked() {
  if (ticks_.source() == HostClockSource::kMonotonic || scratch_events_.empty()) return;
  ticks_.anchor(takeAnchor());
  for (HostEvent& e : scratch_events_) {
    if (e.kind == HostEvent::kLaunch) {
      if (e.launch.flags & kLaunchUntimed) continue;  // KCOUNT_LAUNCH_TIMING: no times, 0 stays 0
      e.launch.enter_ns = ticks_.toNs(e.launch.enter_ns);
      e.launch.exit_ns = ticks_.toNs(e.launch.exit_ns);
    } else if (e.kind == HostEvent::kRange) {
      e.range.begin_ns = ticks_.toNs(e.range.begin_ns);
      e.range.end_ns = ticks_.toNs(e.range.end_ns);
    }
  }
}

namespace {
// A correlation id of the current CUPTI numbering, as the log carries it (0, none, stays 0).
uint64_t renumbered(uint64_t correlation_id, uint64_t offset, uint64_t& max_seen) {
  if (correlation_id == 0) return 0;
  const uint64_t c = correlation_id + offset;
  max_seen = std::max(max_seen, c);
  return c;
}
}  // namespace

void Session::renumberEventsLocked() {
  for (HostEvent& e : scratch_events_) {
    if (e.kind == HostEvent::kLaunch) {
      e.launch.correlation_id = renumbered(e.launch.correlation_id, corr_offset_, corr_max_);
    } else if (e.kind == HostEvent::kGraphNode) {
      e.graph_node.correlation_id = renumbered(e.graph_node.correlation_id, corr_offset_, corr_max_);
    }
  }
}

void Session::renumberActivityLocked() {
  for (KernelBody& k : scratch_kernels_) k.correlation_id = renumbered(k.correlation_id, corr_offset_, corr_max_);
  for (MemOpBody& m : scratch_mem_ops_) m.correlation_id = renumbered(m.correlation_id, corr_offset_, corr_max_);
}

template <typename Fn>
uint64_t Session::kernelsAtLaunchLocked(const HostEvent& e, Fn&& fn) {
  if (config_.gpu_time || (e.launch.flags & kLaunchCaptured) != 0) return 0;  // kernels come from activity
  KernelBody k = kernelAtLaunch(e);
  if (!e.launch.is_graph_launch) {
    if (e.reserved == 0) return 0;  // a memory call (or a launch not named): no kernel of its own
    fn(k);
    return 1;
  }
  // A graph launch: e.reserved is its exec's key (graphExecKey), its correlation id CUPTI's + corr_offset_.
  const uint64_t cupti_id = e.launch.correlation_id - std::min(corr_offset_, e.launch.correlation_id);
  const auto program = e.reserved != 0 ? graphExecs().find(e.reserved - 1, cupti_id) : nullptr;
  if (program == nullptr || !program->known) {
    if (!said_unknown_graph_) {
      said_unknown_graph_ = true;
      std::string value =
          "a graph was launched whose kernels kcount could not read (instantiated before recording began, or "
          "holding a conditional or replaced child graph node); its launches count as launches without kernel "
          "(first: correlation id " + std::to_string(e.launch.correlation_id) + ")";
      writer_->writeMetadata("graph_launch_unknown", value);
      all_metadata_.emplace_back("graph_launch_unknown", std::move(value));
    }
    return 0;
  }
  k.graph_id = program->graph_id;
  uint64_t n = 0;
  for (const GraphKernelNode& node : program->kernels) {
    if (!node.enabled) continue;
    k.name_id = node.name_id;
    k.graph_node_id = node.node_id;
    fn(k);
    ++n;
  }
  return n;
}

void Session::forgetGraphExecs() noexcept {
  try {
    std::lock_guard<std::mutex> lock(writer_mutex_);
    drainLocked(false);
    graphExecs().clear();
  } catch (...) {
  }
}

void Session::beginCorrelationNumbering() noexcept {
  try {
    std::lock_guard<std::mutex> lock(writer_mutex_);
    drainLocked(false);  // the old numbering's last records (a launch call that was open at the stop)
    corr_offset_ = corr_max_;
  } catch (...) {
  }
}

// Summary mode: the drained records are joined and tallied instead of written; a snapshot of the tallies
// is appended every interval, and at the final drain (after the forced CUPTI flush) the correlation window
// is resolved and the final snapshot written, so its totals are exact. A record the aggregator cannot take
// (out of memory) is counted as dropped with its kind.
void Session::aggregateEventsLocked() {
  const uint64_t now = nowNs();
  for (const HostEvent& e : scratch_events_) {
    try {
      if (e.kind == HostEvent::kLaunch) {
        if (seg_open_) {  // the window's correlation ids, for its Segment record
          const uint64_t c = e.launch.correlation_id;
          seg_first_ = seg_first_ == 0 ? c : std::min(seg_first_, c);
          seg_last_ = std::max(seg_last_, c);
        }
        aggregator_->addLaunch(e.launch, now);
        counters_.launches.fetch_add(1, std::memory_order_relaxed);
        if ((e.launch.flags & kLaunchMemOp) != 0) counters_.mem_calls.fetch_add(1, std::memory_order_relaxed);
        counters_.kernels.fetch_add(
            kernelsAtLaunchLocked(e, [&](const KernelBody& k) { aggregator_->addKernel(k, now); }),
            std::memory_order_relaxed);
      } else if (e.kind == HostEvent::kRange) {
        aggregator_->addRange(e.range);
        noteRangeCallbacksLocked(e.range);
        counters_.ranges.fetch_add(1, std::memory_order_relaxed);
      }  // graph nodes serve the capture-path view of trace logs only
    } catch (...) {
      counters_.dropped_host_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
}

// The kernels and memory operations taken by the drain, then the aggregator's settling and the snapshots.
void Session::aggregateLocked(bool final_chunk) {
  const uint64_t now = nowNs();
  counters_.kernels.fetch_add(scratch_kernels_.size(), std::memory_order_relaxed);
  for (const KernelBody& k : scratch_kernels_) {
    try {
      aggregator_->addKernel(k, now);
    } catch (...) {
      counters_.dropped_kernel_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  for (const MemOpBody& m : scratch_mem_ops_) {
    try {
      // KCOUNT_GPU_TIME=graphs: GRAPH_TRACE stays on while paused, so spans of graph launches made outside
      // the window come too: taken only for the window's launches (the rule of admitActivity()).
      if (!isMemoryOperation(m) && !inWindowLocked(m.correlation_id)) {
        counters_.activity_outside_windows.fetch_add(1, std::memory_order_relaxed);
        continue;
      }
      aggregator_->addMemOp(m, now);
    } catch (...) {
      counters_.dropped_kernel_records.fetch_add(1, std::memory_order_relaxed);
    }
  }
  try {
    aggregator_->settle(now, activity_flushes_.load(std::memory_order_relaxed));
    if (final_chunk) aggregator_->finish();
    // Periodic snapshots keep to start + k x interval: taken at the first drain at or after their due
    // time, and the next one is due at the next point of the schedule, not an interval after this one.
    const bool due = now >= next_snapshot_ns_;
    if (due) next_snapshot_ns_ = nextSnapshotDue(snapshot_start_ns_, config_.interval_ns, now);
    // The final snapshot is always written (it is the one marked final); periodic ones only on change.
    if (has_records_ && (final_chunk || (due && aggregator_->changedSinceSnapshot())))
      writeSnapshotLocked(now, final_chunk);
  } catch (...) {
  }
}

// Under KCOUNT_MAX_BYTES a periodic snapshot that would not leave room for the final one is skipped (the
// aggregator counts it, its tallies stay changed so the next due time tries again).
// A snapshot is read only whole: if any chunk kept out (size cap) or refused during it, it is not in the log.
void Session::writeSnapshotLocked(uint64_t now_ns, bool final_snapshot) {
  const RecordCounts before = writer_->droppedRecords();
  if (!aggregator_->writeSnapshot(*writer_, now_ns, final_snapshot)) return;
  writer_->flush();  // out whole, at its time
  const RecordCounts& after = writer_->droppedRecords();
  const bool lost = after.total() > before.total();
  // The definitions the snapshot needs go out in its chunks, before its rows: not counted as its records.
  const uint64_t dropped = (after.other - after.definitions) - (before.other - before.definitions);
  if (!lost) ++snapshots_whole_;
  // Chunks go out in order and, once one is kept out, every later one but the log's last is too: the
  // records written are a prefix of (records pending before the snapshot, the snapshot). Fewer dropped
  // than the snapshot holds: its first part is in the file.
  if (final_snapshot) {
    final_snapshot_lost_ = lost;
    final_snapshot_partial_ = lost && dropped < aggregator_->lastSnapshotRecords();
  }
}

// Not after the final snapshot: the final drain switches the state under writer_mutex_.
void Session::snapshotIfChangedLocked() {
  if (aggregator_ && writer_ && has_records_ && state() == SessionState::kActive && aggregator_->changedSinceSnapshot())
    writeSnapshotLocked(nowNs(), false);
}

// `kcount run` learns which files this process wrote from KCOUNT_RUN_REPORT: one line per log file
// (rotated files too), appended (O_APPEND) as soon as the file exists, so concurrent processes and
// killed ones are reported too. Called by the file sink, under writer_mutex_.
void Session::reportLogPath(const std::string& path) {
  // A path holding a newline goes as a note that escapes it (runReportPathLine): a line of its own would
  // be read as two paths. Notes (kFileSinkNote first) are written as they are.
  appendRunReport(config_.run_report, !path.empty() && path[0] == kFileSinkNote ? path : runReportPathLine(path));
}

// Why a session that was active ends without a log, for `kcount run` (KCOUNT_RUN_REPORT): a capture
// range that never came, a paused start nobody started, or windows that recorded nothing.
std::string Session::unwrittenReason() {
  const bool any_window = window_open_.load() || windows_closed_.load() > 0;
  if (!any_window && trigger_name_id_.load() != 0) {
    const uint64_t seen = trigger_seen_.load(), skip = trigger_skip_.load();
    std::string why = "the capture range '" + trigger_name_ + "' ";
    if (seen == 0) return why + "was never pushed, so recording never started";
    return why + "was pushed " + std::to_string(seen) + " time" + (seen == 1 ? "" : "s") +
           ", and recording starts at push " + std::to_string(skip + 1) + " (after " + std::to_string(skip) +
           " skipped)";
  }
  if (!any_window && !config_.start_paused) return "no capture window was opened";
  if (!any_window) {
    // The advice names what could have started it: `kcount ctl` only where the process had a socket.
    const std::string why = "the process started paused (KCOUNT_START=paused) and recording was never started";
    if (ownsControlSocket()) return why + " (`kcount ctl PID start`)";
    if (config_.control == "off")
      return why + ": its control socket was off (KCOUNT_CONTROL=off); start with KCOUNT_CAPTURE_RANGE, or "
                   "without KCOUNT_START=paused";
    if (config_.control == "cuda" && cupti_description_.empty())
      return why + ": it had no control socket, as it made no CUDA call (KCOUNT_CONTROL=on, as "
                   "`kcount run --paused` sets it, gives one from the start)";
    return why + ": it had no control socket (see the warning above)";
  }
  return "recording was on, but the process made no kernel launch, memory copy or NVTX range while it was";
}

SelfCost Session::selfCostLocked(CallbackCounts ticks) {
  // The durations are in hostTicks() units: converted at the run's rate, taken from a fresh anchor (the last
  // drain took one only if it had host records).
  if (ticks_.source() != HostClockSource::kMonotonic) ticks_.anchor(takeAnchor());
  return selfCostFromNs(callbacksInNsLocked(ticks));
}

CallbackCounts Session::callbacksInNsLocked(CallbackCounts ticks) const {
  // Without a rate (the TSC line has one anchor), the sample is left out rather than given a wrong scale.
  const double ns_per_tick = ticks_.nsPerTick();
  if (ns_per_tick <= 0.0) {
    ticks.timed = 0;
    ticks.timed_time = 0;
  } else {
    const double ns = static_cast<double>(ticks.timed_time) * ns_per_tick;
    ticks.timed_time = ns >= 1.8e19 ? kSaturated : static_cast<uint64_t>(ns + 0.5);
  }
  return ticks;
}

void Session::noteRangeCallbacksLocked(const HostRange& r) noexcept {
  if ((r.flags & kRangeProcessWide) != 0) return;
  try {
    range_callbacks_[r.scope_id] += CallbackCounts{r.callbacks, r.timed, r.timed_ticks};
  } catch (...) {
  }
}

void Session::writeRangeCallbacksLocked() {
  if (range_callbacks_.empty()) return;
  if (ticks_.source() != HostClockSource::kMonotonic) ticks_.anchor(takeAnchor());  // as selfCostLocked()
  std::vector<uint32_t> scopes;
  scopes.reserve(range_callbacks_.size());
  for (const auto& [scope, counts] : range_callbacks_)
    if (counts.callbacks > 0) scopes.push_back(scope);  // a range with none inside adds nothing to any count
  std::sort(scopes.begin(), scopes.end());
  for (const uint32_t scope : scopes) {
    const CallbackCounts ns = callbacksInNsLocked(range_callbacks_[scope]);
    writer_->writeRangeCallbacks(RangeCallbacksBody{scope, 0, ns.callbacks, ns.timed, ns.timed_time});
  }
}

void Session::finish(void (*flush_activity)()) noexcept {
  if (finishing_.exchange(true)) return;
  // A window being started or stopped (CUPTI attach/detach) completes first; a stuck one does not hold
  // up the exit for more than 2 s.
  std::unique_lock<std::mutex> control(control_mutex_, std::defer_lock);
  try {
    (void)tryLockFor(control, 2000);
    if (state() != SessionState::kActive) return;
    const std::string unwritten = control.owns_lock() ? unwrittenReason() : std::string("nothing was recorded");
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
    if (recordingNow()) {  // ranges still open, written only inside a window
      writeUnclosedRanges(false);  // on the finishing thread
      if (auto fn = before_final_drain_.load()) fn();
    }
    std::lock_guard<std::mutex> lock(writer_mutex_);
    if (seg_open_) seg_closing_ = true;
    drainLocked(/*final_chunk=*/true);  // switches to kFinished: later activity records count as late
    // Before the final chunk (which the last Segment record opens): they are as many as the ranges with a
    // callback inside, too many for the writer's tail reserve. Not under KCOUNT_MAX_BYTES: coming after
    // every range, with the definitions of their scopes, they would fill parts of their own (a rotated
    // log) or be kept out (one file).
    if (writer_ && has_records_ && !log_refused_ && config_.max_file_bytes == 0) writeRangeCallbacksLocked();
    const char* end_reason = endReasonOfSignal(end_signal_.load(std::memory_order_relaxed));
    if (seg_open_) {
      closeSegmentLocked(end_reason, nowNs(), /*at_exit=*/true);
      window_open_.store(false);
      windows_closed_.fetch_add(1);
    }
    StatsBody stats{};
    stats.launches = counters_.launches.load();
    stats.kernels = counters_.kernels.load();
    stats.ranges = counters_.ranges.load();
    uint64_t dropped_host = counters_.dropped_host_records.load();
    CallbackCounts callbacks = exited_callbacks_;
    {
      std::lock_guard<std::mutex> rl(registry_mutex_);
      for (ThreadBuffer* b : threads_) {
        dropped_host += b->dropped();
        callbacks += b->callbacks.read();
      }
    }
    stats.dropped_host_records = dropped_host;
    stats.dropped_activity_records =
        counters_.dropped_activity_records.load() + counters_.dropped_kernel_records.load();
    stats.activity_buffers_refused = counters_.activity_buffers_refused.load();
    stats.nvtx_pop_underflow = counters_.nvtx_pop_underflow.load();
    stats.late_activity_records = counters_.late_activity_records.load();
    stats.bytes_dropped = writer_ ? writer_->droppedBytes() : 0;
    if (log_refused_) {
      // The log's name was a symbolic link: nothing was written and the tool said so once (disable()).
    } else if (writer_ && has_records_) {
      // Records kept out of the log (size cap, or a write the sink refused): counted in the final chunk,
      // which the writer's reserve holds, as metadata text and in the Stats record by kind.
      const RecordCounts cut = writer_->droppedRecords();
      if (cut.total() > 0) writer_->writeMetadata("records_not_written", notWrittenText(false));
      if (end_signal_.load(std::memory_order_relaxed) != 0) writer_->writeMetadata(kMetaEndSignal, end_reason);
      if (aggregator_ && aggregator_->skippedSnapshots() > 0)
        writer_->writeMetadata(kMetaSnapshotsSkipped, std::to_string(aggregator_->skippedSnapshots()));
      for (const auto& [key, value] : selfCostMetadata(selfCostLocked(callbacks))) writer_->writeMetadata(key, value);
      stats.not_written_launches = cut.launches;
      stats.not_written_mem_calls = cut.mem_calls;
      stats.not_written_kernels = cut.kernels;
      stats.not_written_ranges = cut.ranges;
      stats.not_written_other = cut.other;
      writer_->writeStats(stats);
      writer_->writeEnd();
      writer_->flush();
      const std::string path = sink_ ? sink_->path() : std::string();
      const bool deleted = sink_ && sink_->fileDeleted();  // asked before close(): it needs the descriptor
      if (sink_) sink_->close();
      if (!path.empty()) KC_LOG(info, "{}", closingLine(path, stats));
      if (deleted)
        KC_LOG(warn, "the log file {} was deleted while recording: nothing of it is on disk", shownPath(path));
      // Summary mode: what did not fit under KCOUNT_MAX_KEYS, said as the reader says it.
      if (aggregator_)
        if (const std::string t = droppedTalliesText(aggregator_->totals()); !t.empty())
          KC_LOG(warn, "{} (raise KCOUNT_MAX_KEYS to keep them)", t);
      // Only the losses there were: "0 launch/range, 0 kernel" before "6004 ranges not written" read as a
      // contradiction (records kept out of the file are not dropped in memory, but are lost all the same).
      std::string lost;
      const auto add = [&lost](uint64_t n, std::string_view what) {
        if (n != 0) lost += fmt::format("{}{} {}", lost.empty() ? "" : ", ", n, what);
      };
      add(stats.dropped_host_records, "launch/range records dropped in memory");
      add(stats.dropped_activity_records, "kernel/memory activity records dropped");
      add(stats.activity_buffers_refused, "activity buffers refused");
      add(writer_->droppedBytes(), "bytes not written");
      if (!lost.empty())
        KC_LOG(warn, "records dropped: {}{}", lost,
               writer_->droppedRecords().total() > 0 ? " (" + notWrittenText(true) + ")" : std::string());
    } else if (writer_) {
      noteRunReport(config_.run_report, "unwritten", unwritten);
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
  gate_.store(0, std::memory_order_release);
  finishing_.store(true);
  t_state = nullptr;
}


// ---- Capture windows ----------------------------------------------------------------------------------

// Activity records are written only if their launch was recorded in the open window: the window's
// launches define [seg_first_, seg_last_]. A record that may still belong to the window (its launch not
// drained yet, or the window closing) is held and decided when the window closes. Records that arrive
// while no window is open are discarded and counted.
template <typename Record>
bool Session::admitActivity(const Record& r, std::vector<Record>& held) {
  if (!seg_open_) {
    counters_.activity_outside_windows.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  if (seg_closing_ || seg_first_ == 0 || r.correlation_id < seg_first_) {
    if (held.size() < kMaxPendingKernels) {
      held.push_back(r);
    } else {
      counters_.dropped_kernel_records.fetch_add(1, std::memory_order_relaxed);
    }
    return false;
  }
  return true;
}

bool Session::inWindowLocked(uint64_t correlation_id) const {
  return seg_first_ != 0 && correlation_id >= seg_first_ && (seg_open_ || correlation_id <= seg_last_);
}

void Session::openSegmentLocked(uint32_t reason_id, uint64_t start_ns) {
  seg_open_ = true;
  seg_closing_ = false;
  seg_ = SegmentBody{};
  seg_.start_ns = start_ns;
  seg_.index = segments_written_;
  seg_.reason_id = reason_id;
  seg_first_ = seg_last_ = 0;
  held_kernels_.clear();
  held_mem_ops_.clear();
}

// At a stop, held records are kept if their correlation id lies in [seg_first_, seg_last_]. At exit no
// launch follows the window, so only the lower bound applies: kernels whose launch was not recorded
// (an API kcount does not subscribe to) stay in the log as unmatched kernels, as without windows.
void Session::closeSegmentLocked(const std::string& end_reason, uint64_t stop_ns, bool at_exit) {
  if (!seg_open_ || !writer_) return;
  uint64_t discarded = 0;
  auto inWindow = [this, at_exit](uint64_t c) {
    if (at_exit) return seg_first_ == 0 || c >= seg_first_;
    return seg_first_ != 0 && c >= seg_first_ && c <= seg_last_;
  };
  uint64_t kernels_written = 0;
  for (const KernelBody& k : held_kernels_) {
    if (!inWindow(k.correlation_id)) {
      ++discarded;
      continue;
    }
    writer_->writeKernel(k);
    ++kernels_written;
    if (writer_->chunkFull()) writer_->flush();
  }
  for (const MemOpBody& m : held_mem_ops_) {
    if (!inWindow(m.correlation_id)) {
      ++discarded;
      continue;
    }
    writer_->writeMemOp(m);
    if (writer_->chunkFull()) writer_->flush();
  }
  counters_.kernels.fetch_add(kernels_written, std::memory_order_relaxed);
  counters_.activity_outside_windows.fetch_add(discarded, std::memory_order_relaxed);
  if (kernels_written > 0 || !held_mem_ops_.empty()) {
    has_records_ = true;
    // The held records go out in their own chunk: at exit the chunk after them is the final one (Segment,
    // Stats, End), which must fit in the writer's tail reserve at KCOUNT_MAX_BYTES. At the cap this chunk
    // is kept out and counted; the log still ends with its Stats and End records.
    writer_->flush();
  }
  held_kernels_.clear();
  held_kernels_.shrink_to_fit();
  held_mem_ops_.clear();
  held_mem_ops_.shrink_to_fit();
  seg_.stop_ns = stop_ns;
  seg_.first_correlation_id = seg_first_;
  seg_.last_correlation_id = seg_last_;
  seg_.end_reason_id = strings_.intern(end_reason);
  seg_.flags = discarded > 0 ? uint32_t{kSegmentActivityDiscarded} : 0u;
  // At exit the Segment record opens the log's final chunk, held by the writer's reserve with the Stats
  // and End records: under KCOUNT_MAX_BYTES it is never split from the definitions just before it. (A
  // process with no records writes no file: nothing is flushed for it.)
  if (at_exit && has_records_) writer_->beginFinalChunk();
  // The writer defines the reason strings before the Segment record where the file lacks them. Once a
  // chunk was kept out (size cap, or refused by the file), their definitions may have been in it, so they
  // may have to go into the final chunk: a reason longer than kMaxRepeatedReason (a long
  // KCOUNT_CAPTURE_RANGE name) is left out then, to keep that chunk small: the record says none.
  if (writer_->droppedRecords().total() > 0) {
    for (uint32_t* id : {&seg_.reason_id, &seg_.end_reason_id}) {
      const std::string* text = strings_.lookup(*id);
      if (text == nullptr || (text->size() > kMaxRepeatedReason && !writer_->defined(true, *id))) *id = kNoString;
    }
  }
  writer_->writeSegment(seg_);
  ++segments_written_;
  seg_open_ = false;
  seg_closing_ = false;
}

// Trace mode: the records the writer put in the file (LogWriter::writtenRecords), so that with a size cap
// the line says what the log holds, and what was kept out. Summary mode: launches, kernels and ranges are
// tallied into snapshots, not written one by one: the line gives the tallies.
std::string Session::closingLine(const std::string& path, const StatsBody& stats) const {
  uint64_t launches = stats.launches, mem_calls = counters_.mem_calls.load(), kernels = stats.kernels,
           ranges = stats.ranges;
  if (!aggregator_) {
    const RecordCounts& w = writer_->writtenRecords();
    launches = w.launches;
    mem_calls = w.mem_calls;
    kernels = w.kernels;
    ranges = w.ranges;
  }
  // Paths as shownPath() shows them: one holding a newline or other control character is quoted and
  // escaped, so the line stays one line (as kcount run shows the same path).
  std::string line = "log: " + shownPath(path) + " (" + std::to_string(launches - std::min(launches, mem_calls)) + " launches" +
                     (mem_calls > 0 ? " (+" + std::to_string(mem_calls) + " memcpy/memset calls)" : std::string()) +
                     ", " + std::to_string(kernels) + " kernels, " + std::to_string(ranges) + " ranges, " +
                     std::to_string(writer_->bytesWritten()) + " bytes";
  const size_t files = sink_ ? sink_->files().size() : 1;
  if (files > 1) line += ", " + std::to_string(files) + " files, the first " + shownPath(sink_->files().front());
  if (writer_->droppedRecords().total() > 0) line += "; " + notWrittenText(true);
  if (aggregator_ && final_snapshot_lost_ && final_snapshot_partial_)
    line += std::string("; final snapshot cut part way (its first records are in the log, the rest ") +
            (writer_->firstDropFile() >= 0 ? "kept out at KCOUNT_MAX_BYTES" : "refused by the file: disk full or unwritable") +
            (snapshots_whole_ == 0 ? "): the log holds no totals"
                                   : "): the log's totals are those of an earlier snapshot, not the run's");
  else if (aggregator_ && final_snapshot_lost_)
    line += std::string("; final snapshot not written (") +
            (writer_->firstDropFile() >= 0 ? "kept out at KCOUNT_MAX_BYTES" : "the file refused it: disk full or unwritable") +
            (snapshots_whole_ == 0 ? "): the log holds no totals"
                                   : "): the log's totals are those of an earlier snapshot, not the run's");
  if (aggregator_ && aggregator_->totals().dropped_tallies > 0)
    line += "; " + untalliedEventsText(aggregator_->totals().dropped_tallies, config_.max_keys);
  if (aggregator_ && aggregator_->skippedSnapshots() > 0)
    line += "; " + snapshotsSkippedText(aggregator_->skippedSnapshots());
  if (sink_ && !sink_->createdFolders().empty()) {  // KCOUNT_OUTPUT named folders that did not exist
    const auto& made = sink_->createdFolders();
    line += made.size() == 1 ? "; created folder " : "; created folders ";
    for (size_t i = 0; i < made.size(); ++i) line += (i > 0 ? ", " : "") + shownPath(made[i]);
  }
  return line + "; CUPTI " + (cupti_description_.empty() ? std::string("not loaded") : cupti_description_) + ")";
}

std::string Session::notWrittenText(bool with_path) const {
  const RecordCounts& c = writer_->droppedRecords();
  std::string where;
  if (writer_->firstDropFile() >= 0 && config_.max_files <= 1) {
    where = ", at KCOUNT_MAX_BYTES";  // one file (KCOUNT_MAX_FILES=1): no parts to name
  } else if (writer_->firstDropFile() >= 0) {
    const auto& files = sink_->files();
    const size_t at = static_cast<size_t>(writer_->firstDropFile());
    where = ", from part " + std::to_string(at) +
            (with_path && at < files.size() ? " (" + files[at] + ")" : std::string()) + " on, at KCOUNT_MAX_BYTES";
  }
  return "not written: " + std::to_string(c.launches) + " launches, " + std::to_string(c.kernels) + " kernels, " +
         std::to_string(c.ranges) + " ranges, " + std::to_string(c.other) + " other records" + where;
}

bool Session::Definitions::stringText(uint32_t id, std::string* text) {
  const std::string* s = s_->strings_.lookup(id);
  if (s == nullptr) return false;
  *text = *s;  // stable storage (StringTable): copied without the table's lock
  return true;
}

bool Session::Definitions::scope(uint32_t id, ScopeBody* scope) {
  if (id >= s_->scopes_.size()) return false;
  *scope = s_->scopes_.node(id);
  return true;
}

// A rotated file starts with the metadata, so that it reads alone; the strings and scopes its records
// use follow on demand (LogWriter::setDefinitions), each before the first record that needs it there.
void Session::writePreamble(LogWriter& w, void* context) {
  auto* s = static_cast<Session*>(context);
  for (const auto& [k, v] : s->all_metadata_) w.writeMetadata(k, v);
  w.writeMetadata(kMetaRotatedFile, std::to_string(w.rotations()));
}


void writeUnclosedRanges(bool from_signal_handler) noexcept { writeUnclosedRanges(t_state, from_signal_handler); }

void writeUnclosedRanges(ThreadState* ts, bool from_signal_handler) noexcept {
  if (ts == nullptr || ts->buffer == nullptr) return;
  const uint64_t now = hostTicks();
  // Each range's callbacks up to now (no pop: nothing to take off); ranges pushed past kMaxDepth are not
  // tracked and not written.
  const CallbackCounts tally = ts->buffer->callbacks.read();
  const uint32_t d = ts->depth < ThreadState::kMaxDepth ? ts->depth : ThreadState::kMaxDepth;
  for (uint32_t i = d; i-- > 0;) {
    HostEvent e;
    e.kind = HostEvent::kRange;
    e.reserved = 0;
    e.range = RangeBody{ts->stack[i].begin_ticks, now, ts->stack[i].scope_id, ts->thread_id, ts->thread_id, kRangeUnclosed};
    rangeCallbacksSince(tally, ts->stack[i].at_push, /*own=*/0, &e.range);
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
    ts->timing_draw = launchTimingSeed(ts->thread_id);
    ts->cost_draw = selfCostSeed(ts->thread_id);
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
