// Capture windows of the session (KCOUNT_START, KCOUNT_CAPTURE_*, `kcount ctl`): opening and closing them
// (CUPTI attach and detach through the hooks the CUDA injection sets), the armed capture range, the
// deadline, and what `kcount ctl status` reports. The writer side of the session is in session.cpp.
#include <algorithm>
#include <chrono>
#include <string>

#include "collector/clock.h"
#include "inject/log.h"
#include "inject/session.h"

namespace kc::inject {

void Session::setCaptureHooks(bool (*attach)(), void (*detach)()) noexcept {
  attach_.store(attach);
  detach_.store(detach);
}

bool Session::startCaptureLocked(const std::string& reason, uint64_t duration_ns, std::string* error) {
  if (state() != SessionState::kActive) {
    *error = "not recording: the session is " + modeName();
    return false;
  }
  if (window_open_.load()) {
    *error = "a capture window is already open (" + window_reason_ + ")";
    return false;
  }
  if (auto attach = attach_.load(); attach != nullptr && !attach()) {
    *error = "cannot subscribe to CUPTI (see the program's stderr)";
    return false;
  }
  const uint64_t now = nowNs();
  const uint32_t reason_id = strings_.intern(reason);
  {
    std::lock_guard<std::mutex> lock(writer_mutex_);
    openSegmentLocked(reason_id, now);
  }
  epoch_ = epoch_ % kGateEpochMask + 1;
  window_reason_ = reason;
  window_start_ns_ = now;
  const uint64_t d = duration_ns != 0 ? duration_ns : config_.capture_duration_ns;
  window_deadline_ns_.store(d != 0 ? now + d : 0);
  if (d != 0) {  // the writer then sleeps until the deadline if it comes before its next drain
    { std::lock_guard<std::mutex> wake_lock(wake_mutex_); }  // not between its read of the deadline and its wait
    wake_.notify_all();
  }
  window_open_.store(true, std::memory_order_release);
  uint32_t expected = kGateLive;
  gate_.compare_exchange_strong(expected, kGateLive | epoch_, std::memory_order_acq_rel);  // not if finished
  return true;
}

bool Session::stopCaptureLocked(const std::string& end_reason, std::string* error) {
  if (!window_open_.load()) {
    *error = "no capture window is open";
    return false;
  }
  const uint64_t stop = nowNs();
  uint32_t g = gate_.load();
  while ((g & kGateLive) != 0 && !gate_.compare_exchange_weak(g, kGateLive)) {
  }  // launches from now on are not recorded; a launch call already open is still completed
  window_open_.store(false, std::memory_order_release);
  window_deadline_ns_.store(0);
  trigger_name_id_.store(0, std::memory_order_release);  // a capture range fires once
  if (auto detach = detach_.load()) detach();  // no kcount lock held: CUPTI calls back into addKernels
  {
    std::lock_guard<std::mutex> lock(writer_mutex_);
    seg_closing_ = true;
    drainLocked(false);
    closeSegmentLocked(end_reason, stop, /*at_exit=*/false);
    // Summary mode: the window's tallies go out with it, whatever closed it (ctl stop, --duration, the end
    // of a capture range), not at the next interval: a process killed meanwhile keeps the capture.
    snapshotIfChangedLocked();
    if (has_records_) {
      writer_->flush();  // the window is on disk when stop returns
      last_flush_ns_ = nowNs();
    }
  }
  windows_closed_.fetch_add(1);
  return true;
}

bool Session::startCapture(const std::string& reason, uint64_t duration_ns, std::string* error) noexcept {
  try {
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (trigger_name_id_.load() != 0) {
      *error = "a capture range is armed (" + trigger_name_ + "); stop disarms it";
      return false;
    }
    return startCaptureLocked(reason, duration_ns, error);
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error";
  }
  return false;
}

bool Session::stopCapture(const std::string& end_reason, std::string* error) noexcept {
  try {
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (!window_open_.load() && trigger_name_id_.load() != 0) {
      trigger_name_id_.store(0, std::memory_order_release);  // armed but not fired: disarm
      return true;
    }
    return stopCaptureLocked(end_reason, error);
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error";
  }
  return false;
}

bool Session::armRange(const std::string& name, uint64_t skip, uint64_t count, uint64_t duration_ns,
                       std::string* error) noexcept {
  try {
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (state() != SessionState::kActive && state() != SessionState::kDormant) {
      *error = "not recording: the session is " + modeName();
      return false;
    }
    if (window_open_.load()) {
      *error = "a capture window is already open (" + window_reason_ + ")";
      return false;
    }
    if (trigger_name_id_.load() != 0) {
      *error = "a capture range is already armed (" + trigger_name_ + ")";
      return false;
    }
    if (name.empty() || count == 0) {
      *error = "a capture range needs a name and a count of at least 1";
      return false;
    }
    trigger_name_ = name;
    trigger_skip_ = skip;
    trigger_count_ = count;
    trigger_duration_ns_ = duration_ns;
    trigger_seen_.store(0);
    trigger_name_id_.store(strings_.intern(name), std::memory_order_release);
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "unknown error";
  }
  return false;
}

bool Session::onTriggerPush() noexcept {
  try {
    const uint64_t n = trigger_seen_.fetch_add(1, std::memory_order_acq_rel) + 1;
    const uint64_t skip = trigger_skip_.load(), count = trigger_count_.load();  // published before the name id
    if (n <= skip || n > skip + count) return false;
    if (n == skip + 1) {
      std::lock_guard<std::mutex> lock(control_mutex_);
      if (trigger_name_id_.load() == 0 || window_open_.load()) return false;
      std::string error;
      const std::string reason = "capture-range " + trigger_name_ + " " + std::to_string(skip + 1) + "-" +
                                 std::to_string(skip + count);
      if (!startCaptureLocked(reason, trigger_duration_ns_, &error)) {
        KC_LOG(warn, "capture range {}: {}", trigger_name_, error);
        return false;
      }
    }
    return n == skip + count;
  } catch (...) {
    return false;
  }
}

void Session::checkDeadline() noexcept {
  if (const char* reason = resume_reason_.exchange(nullptr)) {
    std::string error;
    if (!startCapture(reason, 0, &error)) KC_LOG(warn, "cannot resume recording: {}", error);
    else KC_LOG(info, "resumed recording ({})", reason);
  }
  const uint64_t d = window_deadline_ns_.load();
  if (d == 0 || nowNs() < d) return;
  try {
    std::lock_guard<std::mutex> lock(control_mutex_);
    const uint64_t again = window_deadline_ns_.load();
    if (again == 0 || nowNs() < again) return;
    std::string error;
    stopCaptureLocked("duration", &error);
  } catch (...) {
  }
}

void Session::applyStartConfig() noexcept {
  try {
    std::lock_guard<std::mutex> lock(control_mutex_);
    if (state() != SessionState::kActive) return;
    if (window_open_.load()) {  // opened before CUDA initialized (an NVTX range): attach CUPTI now
      if (auto attach = attach_.load(); attach != nullptr && !attach() && window_reason_ == "start")
        disable("cannot subscribe to CUPTI");
      return;
    }
    if (start_config_applied_) return;
    start_config_applied_ = true;
    std::string error;
    if (!config_.capture_range.empty()) {
      trigger_name_ = config_.capture_range;
      trigger_skip_ = config_.capture_skip;
      trigger_count_ = config_.capture_count;
      trigger_duration_ns_ = 0;
      trigger_seen_.store(0);
      trigger_name_id_.store(strings_.intern(config_.capture_range), std::memory_order_release);
      return;
    }
    if (config_.start_paused) return;
    if (!startCaptureLocked("start", 0, &error)) disable("cannot start recording: " + error);
  } catch (...) {
  }
}

void Session::flushNow() noexcept {
  try {
    if (state() != SessionState::kActive) return;
    if (auto fn = periodic_flush_.load()) fn();  // no lock held: CUPTI calls back into addKernels
    std::lock_guard<std::mutex> lock(writer_mutex_);
    drainLocked(false);
    // Summary mode: the records are tallied, not written; what was tallied so far goes out as a snapshot now.
    snapshotIfChangedLocked();
    if (writer_ && has_records_) {
      writer_->flush();
      last_flush_ns_ = nowNs();
    }
  } catch (...) {
  }
}

std::string Session::modeName() const {
  switch (state()) {
    case SessionState::kDormant: return "dormant";
    case SessionState::kActive: return windowOpen() ? "recording" : "paused";
    case SessionState::kFinished: return "finished";
    case SessionState::kDisabled: return "disabled";
  }
  return "unknown";
}

SessionStatus Session::status() noexcept {
  SessionStatus st;
  try {
    st.now_ns = nowNs();
    st.mode = modeName();
    st.window_open = windowOpen();
    st.window_deadline_ns = window_deadline_ns_.load();
    st.windows_closed = windows_closed_.load();
    // Counted as `kcount summary` and `check` count them: memcpy/memset calls apart from launches.
    st.mem_calls = counters_.mem_calls.load();
    st.launches = counters_.launches.load();
    st.launches = st.launches > st.mem_calls ? st.launches - st.mem_calls : 0;
    st.kernels = counters_.kernels.load();
    st.ranges = counters_.ranges.load();
    st.dropped_host_records = counters_.dropped_host_records.load();
    st.dropped_activity_records = counters_.dropped_activity_records.load() + counters_.dropped_kernel_records.load();
    st.activity_buffers_refused = counters_.activity_buffers_refused.load();
    st.activity_outside_windows = counters_.activity_outside_windows.load();
    {
      std::lock_guard<std::mutex> lock(writer_mutex_);
      if (sink_) {
        st.log_path = sink_->path();
        st.log_files = sink_->files();
      }
      if (writer_) {
        st.bytes_written = writer_->bytesWritten();
        st.bytes_dropped = writer_->droppedBytes();
      }
      st.window_index = seg_open_ ? seg_.index : segments_written_;
    }
    {
      std::lock_guard<std::mutex> lock(registry_mutex_);
      for (ThreadBuffer* b : threads_) st.dropped_host_records += b->dropped();
    }
    std::unique_lock<std::mutex> control(control_mutex_, std::defer_lock);
    if (tryLockFor(control, 200)) {
      st.window_reason = st.window_open ? window_reason_ : std::string();
      st.window_start_ns = st.window_open ? window_start_ns_ : 0;
      if (trigger_name_id_.load() != 0) {
        st.trigger_range = trigger_name_;
        st.trigger_skip = trigger_skip_;
        st.trigger_count = trigger_count_;
        st.trigger_seen = trigger_seen_.load();
      }
    }
  } catch (...) {
  }
  return st;
}

}  // namespace kc::inject
