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
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "collector/aggregator.h"
#include "collector/clock.h"
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
  std::atomic<uint64_t> launches{0};   // launch records taken by the writer, memcpy/memset calls included
  std::atomic<uint64_t> mem_calls{0};  // of `launches`: memcpy/memset API calls (kLaunchMemOp); writer thread
  std::atomic<uint64_t> kernels{0};
  std::atomic<uint64_t> ranges{0};
  std::atomic<uint64_t> dropped_host_records{0};  // from exited threads' buffers (live ones summed at close)
  std::atomic<uint64_t> dropped_activity_records{0};
  std::atomic<uint64_t> activity_buffers_refused{0};
  std::atomic<uint64_t> nvtx_pop_underflow{0};
  std::atomic<uint64_t> late_activity_records{0};
  std::atomic<uint64_t> dropped_kernel_records{0};  // pending-kernel cap reached
  std::atomic<uint64_t> activity_outside_windows{0};  // kernel/memory records of launches outside any window
};

/// Window bits of Session's gate word (one atomic, read once per launch callback).
inline constexpr uint32_t kGateLive = 1u << 31;             // session active (writer running)
inline constexpr uint32_t kGateEpochMask = kGateLive - 1;   // window epoch; 0 = paused
inline constexpr uint32_t kRangeEndsWindow = 1u << 31;      // OpenRange::epoch bit: its pop closes the window

/// Summary mode's snapshot schedule: the k-th periodic snapshot (k = 1, 2, ...) is due at
/// start_ns + k * interval_ns (host clock ns; start_ns is the log's start_ns). Returns the first due time
/// strictly after now_ns, so that a snapshot taken late (or due times missed while the writer slept)
/// never moves the ones after it; saturates at UINT64_MAX. interval_ns 0 counts as 1. Pure.
uint64_t nextSnapshotDue(uint64_t start_ns, uint64_t interval_ns, uint64_t now_ns) noexcept;

/// What `kcount ctl status` reports (Session::status).
struct SessionStatus {
  std::string mode;              // "recording", "paused", "finished", "disabled", "dormant"
  bool window_open = false;
  uint32_t window_index = 0;     // index of the open window, or of the next one
  std::string window_reason;
  uint64_t window_start_ns = 0;
  uint64_t window_deadline_ns = 0;  // 0: no duration
  std::string trigger_range;     // armed capture range ("" if none)
  uint64_t trigger_skip = 0, trigger_count = 0, trigger_seen = 0;
  uint32_t windows_closed = 0;
  uint64_t launches = 0, kernels = 0, ranges = 0;  // taken by the writer; launches without memcpy/memset calls
  uint64_t mem_calls = 0;        // memcpy/memset API calls taken (launch records with kLaunchMemOp)
  uint64_t dropped_host_records = 0, dropped_activity_records = 0, activity_buffers_refused = 0;
  uint64_t activity_outside_windows = 0;
  uint64_t bytes_written = 0, bytes_dropped = 0;
  std::string log_path;
  std::vector<std::string> log_files;
  uint64_t now_ns = 0;
};

/// Appends `line` and a newline to the `kcount run` report file `report` (KCOUNT_RUN_REPORT; nothing if
/// it is empty) in one O_APPEND write, so lines of concurrent processes never interleave. A line is a
/// log path, or a note that starts with kFileSinkNote (tools/run.h, RunReport). Never throws; a file
/// that cannot be opened is ignored. Thread-safe.
void appendRunReport(const std::string& report, std::string_view line) noexcept;
/// Appends the note kFileSinkNote + "WHAT PID TEXT" about this process (PID: getpid()): "loaded"
/// (inject/preload.cpp), "disabled" (Session::disable, KCOUNT_DISABLE) or "unwritten" (the session
/// ended with nothing to write: Session::finish). Never throws. Thread-safe.
void noteRunReport(const std::string& report, std::string_view what, std::string_view text) noexcept;

/// The process's one profiling session (see the file comment). Ownership: created on first use by get()
/// and never destroyed; it owns the thread buffers, the pending activity records, the writer thread and
/// the log. Threads: application threads append through their ThreadState without locks; CUPTI's threads
/// add activity records under kernels_mutex_; the writer thread drains and writes under writer_mutex_;
/// the control lock serializes capture windows. Errors: nothing throws out of it; a failure disables the
/// tool (disable()), never the host program.
class Session {
 public:
  /// The process's session (created on first call with the configuration from the environment).
  static Session& get() noexcept;

  const Config& config() const { return config_; }
  SessionState state() const { return state_.load(std::memory_order_acquire); }
  /// True while the session is active (writer running, log open), whether a window is open or not.
  bool recording() const { return state() == SessionState::kActive; }
  /// True while a capture window is open: launches, kernels and ranges are being recorded. One atomic
  /// load, without reaching the session object: for the launch hot path.
  static bool recordingNow() { return (gate_.load(std::memory_order_acquire) & kGateEpochMask) != 0; }
  /// The gate word: kGateLive while the session is active, and the open window's epoch in the low bits.
  static uint32_t gateNow() { return gate_.load(std::memory_order_acquire); }

  // ---- Capture windows (KCOUNT_START, KCOUNT_CAPTURE_*, kcount ctl). Thread-safe; never called from
  // a CUPTI callback. Each takes the control lock; none is called with a kcount lock held.
  /// CUPTI attach/detach, set by the CUDA injection: attach subscribes and enables callbacks and activity
  /// kinds (false on failure, with one message); detach waits for queued GPU work when it can, flushes
  /// activity, disables it and unsubscribes. Null in a process without CUDA.
  void setCaptureHooks(bool (*attach)(), void (*detach)()) noexcept;
  /// Opens a window now ("start" from KCOUNT_START, "ctl", ...). duration_ns 0: the configured
  /// KCOUNT_CAPTURE_DURATION, if any. False with *error if a window is already open or the session is
  /// not active or CUPTI could not be attached.
  bool startCapture(const std::string& reason, uint64_t duration_ns, std::string* error) noexcept;
  /// Closes the open window: stops recording, detaches CUPTI, writes the window's records and its
  /// Segment record. False with *error if no window is open.
  bool stopCapture(const std::string& end_reason, std::string* error) noexcept;
  /// Arms a capture range: the next `skip` pushes of a range named `name` (any domain) are passed over,
  /// the window opens at the push of the one after and closes at the pop of the `count`-th recorded
  /// one. False with *error if a window is open or another range is armed.
  bool armRange(const std::string& name, uint64_t skip, uint64_t count, uint64_t duration_ns,
                std::string* error) noexcept;
  /// Called by the NVTX push handler for every range named by the armed trigger (name id compare).
  /// Returns true if this occurrence's pop must close the window.
  bool onTriggerPush() noexcept;
  /// String id of the armed capture range's name, 0 if none (one load; NVTX push path).
  uint32_t triggerNameId() const { return trigger_name_id_.load(std::memory_order_acquire); }
  /// Closes the window when its duration has passed, and opens the window asked for by requestResume
  /// (writer thread).
  void checkDeadline() noexcept;
  /// Async-signal-safe, lock-free: the writer thread opens a window with this reason at its next wake-up
  /// (within 100 ms). Used to resume after another CUPTI subscriber left (KCOUNT_YIELD).
  void requestResume(const char* reason) noexcept { resume_reason_.store(reason, std::memory_order_release); }
  /// Makes CUPTI hand over its records and writes a chunk now. Summary mode: the records are tallied and
  /// a snapshot of the tallies (cumulative, as the periodic ones) is appended now if any tally changed
  /// since the last snapshot; the periodic schedule is unchanged. Any thread; takes writer_mutex_.
  void flushNow() noexcept;
  SessionStatus status() noexcept;
  /// "recording", "paused", "finished", "disabled" or "dormant" (no lock).
  std::string modeName() const;
  /// True while a capture window is open (control lock not needed).
  bool windowOpen() const { return window_open_.load(std::memory_order_acquire); }
  /// Applies KCOUNT_START / KCOUNT_CAPTURE_* once the session is active: opens the first window or
  /// arms the capture range. Called at activation and again when CUDA initializes (to attach CUPTI to
  /// a window an NVTX range opened). Idempotent.
  void applyStartConfig() noexcept;

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
  /// Async-signal-safe (one atomic store): the process is ending by signal `sig` (SIGTERM, SIGINT or
  /// SIGHUP, from the terminate handler or a kill()/raise() the process sent itself). finish() then
  /// closes the last window with end reason "SIGTERM" (...) instead of "exit" and writes metadata
  /// kMetaEndSignal, so the reader can say that ranges open at that moment end at the signal.
  void noteEndSignal(int sig) noexcept { end_signal_.store(sig, std::memory_order_relaxed); }
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

  /// CUPTI numbers correlation ids anew after cuptiFinalize (measured on the H200, CUPTI 13.0: the
  /// launches of a window opened after a finalize started again at 1), so two windows of one process
  /// would hand the same id to different launches, and a kernel would join a launch of another window.
  /// The attach hook calls this before it subscribes again after CUPTI was (or may have been, after
  /// KCOUNT_YIELD) finalized: it takes what the thread buffers and activity queues still hold (ids of
  /// the old numbering), then adds the largest correlation id taken so far to every correlation id taken
  /// from here on (launches, graph nodes, kernel and memcpy/memset records; 0, "none", stays 0). Ids in
  /// the log are then unique and increasing per process; within the first numbering they are CUPTI's.
  /// Takes writer_mutex_; never call it with a kcount lock held other than the control lock, nor from
  /// a CUPTI callback. Never throws.
  void beginCorrelationNumbering() noexcept;

  /// KCOUNT_GPU_TIME=0: CUPTI attaches anew; what changed in graph execs while it was detached is unknown.
  /// Takes what the thread buffers hold (launches of the known execs), then forgets every graph exec
  /// (graphExecs(), inject/graph_execs.h): launches of execs instantiated earlier then count as launches
  /// without kernel. Same locking rules as beginCorrelationNumbering(). Never throws.
  void forgetGraphExecs() noexcept;

 private:
  Session();
  static Config loadConfig();
  void writerLoop();
  void drainLocked(bool final_chunk);  // requires writer_mutex_
  void reportLogPath(const std::string& path);  // from the file sink when it creates a file
  // Segment bookkeeping; all require writer_mutex_.
  void openSegmentLocked(uint32_t reason_id, uint64_t start_ns);
  void closeSegmentLocked(const std::string& end_reason, uint64_t stop_ns, bool at_exit);
  template <typename Record>
  bool admitActivity(const Record& r, std::vector<Record>& held);
  /// Whether an activity record of this correlation id belongs to the open window, or to the last one
  /// closed: between the first and last launch recorded in it (no upper bound while it is open).
  bool inWindowLocked(uint64_t correlation_id) const;
  static void writePreamble(LogWriter& writer, void* session);
  /// Summary mode: tallies the kernels and memory operations taken by a drain, settles the aggregator and
  /// writes the snapshots due. Requires writer_mutex_.
  void aggregateLocked(bool final_chunk);
  /// Summary mode: tallies the batch of host events in scratch_events_. Requires writer_mutex_.
  void aggregateEventsLocked();
  /// Trace mode: writes the batch of host events in scratch_events_; returns the kernels written with
  /// their launch (KCOUNT_GPU_TIME=0). Requires writer_mutex_.
  uint64_t writeEventsLocked();
  std::string unwrittenReason();  // why the session ends with no log (finish); control_mutex_ held
  template <typename Record>
  void addActivity(std::vector<Record>& pending, const Record* records, size_t count) noexcept;

  Config config_;
  // One session per process, so its state is a static: the hot path reads it without Session::get().
  static inline std::atomic<SessionState> state_{SessionState::kDormant};
  static inline std::atomic<uint32_t> gate_{0};  // kGateLive | window epoch; see gateNow()
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
  /// The writer's DefinitionSource: the string table and the scope tree. Each lookup takes the table's
  /// own lock for the copy only (the writer calls it under writer_mutex_; app threads intern meanwhile).
  class Definitions final : public DefinitionSource {
   public:
    explicit Definitions(Session* s) : s_(s) {}
    bool stringText(uint32_t id, std::string* text) override;
    bool scope(uint32_t id, ScopeBody* scope) override;

   private:
    Session* s_;
  };
  Definitions definitions_{this};
  /// Converts the launch and range times of scratch_events_ from hostTicks() to CLOCK_MONOTONIC ns
  /// (ticks_). Requires writer_mutex_.
  void convertTicksLocked();
  /// Adds corr_offset_ to the correlation ids of scratch_events_ (launches, graph nodes) and notes the
  /// largest in corr_max_. Requires writer_mutex_.
  void renumberEventsLocked();
  /// Same for the activity records taken from the queues (scratch_kernels_, scratch_mem_ops_).
  void renumberActivityLocked();
  /// KCOUNT_GPU_TIME=0: calls fn(KernelBody) for each kernel the launch event `e` ran, named at its call (a
  /// direct launch) or read from its graph exec (a graph launch: graphExecs()); no GPU time. Returns how
  /// many: 0 with kernel activity (its records bring the kernels), for a captured launch or a memory call.
  /// Requires writer_mutex_, after renumberEventsLocked().
  template <typename Fn>
  uint64_t kernelsAtLaunchLocked(const HostEvent& e, Fn&& fn);
  /// kcount's own callbacks on the threads whose buffers were freed (timed_time in hostTicks() units).
  CallbackCounts exited_callbacks_;
  /// The SelfCost of `ticks` (the callbacks of every thread, timed_time in hostTicks() units), its durations
  /// converted to ns at the run's tick rate. Requires writer_mutex_ (anchors ticks_).
  SelfCost selfCostLocked(CallbackCounts ticks);
  /// `ticks` with timed_time converted from hostTicks() units to ns at the run's tick rate as ticks_ has it
  /// now (timed and timed_time 0 without a rate). Requires writer_mutex_.
  CallbackCounts callbacksInNsLocked(CallbackCounts ticks) const;
  /// kcount's own callbacks inside the ranges handed to the writer, summed per scope (timed_time in
  /// hostTicks() units); written as RangeCallbacks records at the close, just before the final chunk. One
  /// entry per scope, so bounded by the scope tree. Requires writer_mutex_.
  std::unordered_map<uint32_t, CallbackCounts> range_callbacks_;
  /// Adds the range `r`'s callbacks to range_callbacks_ (process-wide ranges count none and are left out).
  /// Out of memory: that range's callbacks are lost, nothing else. Requires writer_mutex_.
  void noteRangeCallbacksLocked(const HostRange& r) noexcept;
  /// Writes range_callbacks_ as RangeCallbacks records, by scope id, in ns (from a fresh anchor), those with
  /// at least one callback: after the final drain, before the final chunk (under KCOUNT_MAX_BYTES they may
  /// be kept out, counted as any record). Requires writer_mutex_.
  void writeRangeCallbacksLocked();
  bool said_unknown_graph_ = false;  // the metadata line on a graph launch of unknown content is written
  uint64_t corr_offset_ = 0;  // see beginCorrelationNumbering()
  uint64_t corr_max_ = 0;     // largest correlation id taken, offset included
  TickConverter ticks_;  // hostTicks() -> ns; started in the constructor, anchored at each drain
  /// "not written: L launches, K kernels, R ranges, O other records, from part N (path) on, at
  /// KCOUNT_MAX_BYTES" (", at KCOUNT_MAX_BYTES" alone with KCOUNT_MAX_FILES=1): the writer's
  /// droppedRecords(), for the closing line and (without the path, so that it fits in the writer's tail
  /// reserve whatever the path's length) the log's metadata.
  std::string notWrittenText(bool with_path) const;
  /// The closing line (info) after the log is closed: "log: PATH (N launches (+M memcpy/memset calls), K
  /// kernels, R ranges, B bytes[, F files, the first P][; not written: ...][; final snapshot not written
  /// ... | final snapshot cut part way ...][; N events not tallied in their row at KCOUNT_MAX_KEYS=K (still in the totals)][; created folder
  /// D]; CUPTI ...)". Trace mode counts the records that reached the files; summary mode the records
  /// tallied.
  /// Requires writer_mutex_ and writer_.
  std::string closingLine(const std::string& path, const StatsBody& stats) const;
  uint64_t last_flush_ns_ = 0;
  bool has_records_ = false;     // a launch, kernel or range was taken: the log file may be created
  bool log_refused_ = false;     // the log's name was a symbolic link: the tool disabled itself, no log
  std::vector<std::pair<std::string, std::string>> all_metadata_;  // re-emitted in each rotated file
  // The open segment (capture window), writer side.
  bool seg_open_ = false;
  bool seg_closing_ = false;      // the closing drain: hold every activity record for the final filter
  SegmentBody seg_{};
  uint64_t seg_first_ = 0, seg_last_ = 0;  // correlation ids of the launches drained in the segment
  std::vector<KernelBody> held_kernels_;   // activity waiting for the window's first correlation id
  std::vector<MemOpBody> held_mem_ops_;
  uint32_t segments_written_ = 0;
  std::vector<HostEvent> scratch_events_;
  std::vector<KernelBody> scratch_kernels_;
  std::vector<MemOpBody> scratch_mem_ops_;
  std::vector<std::pair<std::string, std::string>> scratch_metadata_;
  // Summary mode (KCOUNT_MODE=summary): records go to the aggregator instead of the log, and a snapshot
  // is due every config_.interval_ns from snapshot_start_ns_ (nextSnapshotDue). Guarded by writer_mutex_.
  std::unique_ptr<Aggregator> aggregator_;
  uint64_t snapshot_start_ns_ = 0;  // the log's start_ns
  uint64_t next_snapshot_ns_ = 0;   // due time of the next periodic snapshot
  /// Appends a snapshot of the aggregator's tallies taken at now_ns and flushes it. Requires writer_mutex_,
  /// aggregator_ and has_records_.
  void writeSnapshotLocked(uint64_t now_ns, bool final_snapshot);
  uint64_t snapshots_whole_ = 0;        // snapshots written with no chunk of theirs kept out or refused
  bool final_snapshot_lost_ = false;    // a chunk of the final snapshot was kept out (size cap) or refused
  bool final_snapshot_partial_ = false; // of a lost final snapshot, its first chunk or chunks are in the file
  /// Summary mode, out of schedule (ctl flush, a window closing): a non-final snapshot now if any tally
  /// changed since the last one and the session is still active; nothing in trace mode. Requires
  /// writer_mutex_.
  void snapshotIfChangedLocked();
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
  std::atomic<int> end_signal_{0};  // noteEndSignal: the signal the process ends by, 0 for a normal exit
  std::atomic<int> pid_{0};
  std::atomic<bool> closed_{false};
  std::string cupti_description_;  // written once in InitializeInjection, read in finish()

  // Control side. control_mutex_ serializes start/stop/arm (and CUPTI attach/detach); never held by the
  // launch hot path or by a CUPTI callback.
  std::mutex control_mutex_;  // plain: waits with a deadline poll try_lock() (see tryLockFor)
  std::atomic<bool (*)()> attach_{nullptr};
  std::atomic<void (*)()> detach_{nullptr};
  std::atomic<bool> window_open_{false};
  std::atomic<uint64_t> window_deadline_ns_{0};  // 0: none
  uint32_t epoch_ = 0;               // last window epoch handed out (control_mutex_)
  uint32_t next_window_index_ = 0;   // (control_mutex_)
  std::string window_reason_;        // (control_mutex_)
  uint64_t window_start_ns_ = 0;     // (control_mutex_)
  std::atomic<uint32_t> windows_closed_{0};
  bool start_config_applied_ = false;  // (control_mutex_)
  // Armed capture range (KCOUNT_CAPTURE_RANGE or ctl start --range).
  std::atomic<uint32_t> trigger_name_id_{0};
  std::string trigger_name_;         // (control_mutex_)
  // Set under control_mutex_ before trigger_name_id_ is published; read by onTriggerPush without it.
  std::atomic<uint64_t> trigger_skip_{0}, trigger_count_{0};
  uint64_t trigger_duration_ns_ = 0;  // (control_mutex_)
  std::atomic<uint64_t> trigger_seen_{0};
  std::atomic<const char*> resume_reason_{nullptr};
  /// try_lock() in 1 ms steps up to `ms`; true if locked.
  static bool tryLockFor(std::unique_lock<std::mutex>& lock, int ms);
  bool startCaptureLocked(const std::string& reason, uint64_t duration_ns, std::string* error);
  bool stopCaptureLocked(const std::string& end_reason, std::string* error);
};

}  // namespace kc::inject
