// NVTX injection: kcount is the tool that NVTX3 loads from NVTX_INJECTION64_PATH. Each library that
// embeds NVTX3 (PyTorch, NCCL, ...) calls InitializeInjectionNvtx2 once, with its own function tables;
// kcount fills them with the handlers below. Protocol: include/nvtx3/nvtxDetail/nvtxInit.h,
// nvtxTypes.h and nvtxImpl.h of the CUDA toolkit.
#include <nvtx3/nvToolsExt.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>

#include "collector/clock.h"
#include "inject/entry.h"
#include "inject/log.h"
#include "inject/nvtx_injection.h"
#include "inject/preload.h"
#include "inject/recording.h"
#include "inject/self_cost.h"
#include "inject/session.h"
#include "inject/thread_state.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

namespace kc::inject {

namespace {

// Handles given to NVTX are string ids (domains, registered strings), which are never 0.
uint32_t domainId(nvtxDomainHandle_t d) { return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(d)); }
nvtxDomainHandle_t domainHandle(uint32_t id) { return reinterpret_cast<nvtxDomainHandle_t>(uintptr_t{id}); }

ThreadState* recordingThread() {
  if (!startDone()) [[unlikely]] {
    startRecording();
    waitForStart();  // another thread may be starting the session right now
  }
  if (!Session::get().recording()) return nullptr;
  return threadState();
}

// UTF-32 (wchar_t on Linux) to UTF-8 into a fixed buffer; cut at the buffer's end.
const char* toUtf8(const wchar_t* w, char* out, size_t cap) {
  size_t n = 0;
  for (; w != nullptr && *w != 0 && n + 4 < cap; ++w) {
    const auto c = static_cast<uint32_t>(*w);
    if (c < 0x80) {
      out[n++] = static_cast<char>(c);
    } else if (c < 0x800) {
      out[n++] = static_cast<char>(0xC0 | (c >> 6));
      out[n++] = static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
      out[n++] = static_cast<char>(0xE0 | (c >> 12));
      out[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out[n++] = static_cast<char>(0x80 | (c & 0x3F));
    } else {
      out[n++] = static_cast<char>(0xF0 | ((c >> 18) & 0x07));
      out[n++] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
      out[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
      out[n++] = static_cast<char>(0x80 | (c & 0x3F));
    }
  }
  out[n] = '\0';
  return out;
}

// The range's message: either text or a registered string id.
struct Message {
  const char* text = nullptr;
  size_t length = 0;
  uint32_t registered_id = 0;
};

Message messageOf(const nvtxEventAttributes_t* a, char* wide_buf, size_t cap) {
  Message m;
  if (a == nullptr) return m;
  switch (a->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII: m.text = a->message.ascii; break;
    case NVTX_MESSAGE_TYPE_UNICODE: m.text = toUtf8(a->message.unicode, wide_buf, cap); break;
    case NVTX_MESSAGE_TYPE_REGISTERED: m.registered_id = domainId(reinterpret_cast<nvtxDomainHandle_t>(a->message.registered)); break;
    default: break;
  }
  if (m.text != nullptr) m.length = std::strlen(m.text);
  return m;
}

// Scope of the range `m` opened inside `parent`, through the thread's cache (no lock when it hits).
uint32_t scopeFor(ThreadState* ts, uint32_t parent, uint32_t domain, const Message& m, uint32_t* name_id) {
  Session& s = Session::get();
  const uint64_t h = m.text != nullptr ? XXH3_64bits(m.text, m.length) : (uint64_t{m.registered_id} | (1ull << 63));
  ScopeCacheEntry& c = ts->cache[(h ^ (uint64_t{parent} * 0x9E3779B97F4A7C15ull) ^ domain) % ThreadState::kCacheSlots];
  if (c.hash == h && c.parent == parent && c.domain == domain &&
      (m.text == nullptr || (c.text != nullptr && c.text->size() == m.length &&
                             std::memcmp(c.text->data(), m.text, m.length) == 0))) {
    *name_id = c.name_id;
    return c.scope;
  }
  const uint32_t id = m.text != nullptr ? s.strings().intern(std::string_view(m.text, m.length)) : m.registered_id;
  const uint32_t scope = s.scopes().child(parent, id, domain);
  c = ScopeCacheEntry{h, m.text != nullptr ? s.strings().lookup(id) : nullptr, parent, domain, scope, id};
  *name_id = id;
  return scope;
}

// The push handler's work, counted as one callback; returns the range's level (ts->depth before it).
int pushCounted(ThreadState* ts, uint32_t domain, Message m) {
  const CallbackCostScope cost(ts);
  const uint32_t level = ts->depth;
  if (ts->depth < ThreadState::kMaxDepth) {
    // The stack is kept while no window is open too, so launches of a window that opens inside a range
    // are credited to it.
    // One range per op name, not per call (KCOUNT_TORCH_OPS); the configuration is fixed once read.
    static const bool trim_torch_ops = Session::get().config().torch_ops;
    if (trim_torch_ops && m.text != nullptr) m.length = torchOpNameLength(m.text, m.length);
    uint32_t name_id = 0;
    const uint32_t scope = scopeFor(ts, ts->currentScope(), domain, m, &name_id);
    uint32_t ends_window = 0;
    Session& s = Session::get();
    if (const uint32_t trigger = s.triggerNameId(); trigger != 0 && trigger == name_id && s.onTriggerPush())
      ends_window = kRangeEndsWindow;  // the window may have opened just now, before the range begins
    ts->stack[ts->depth] =
        OpenRange{hostTicks(), scope, name_id, domain, (Session::gateNow() & kGateEpochMask) | ends_window};
  }
  ++ts->depth;
  return static_cast<int>(level);
}

int push(uint32_t domain, Message m) {
  ThreadState* ts = recordingThread();
  if (ts == nullptr) return -1;
  const int level = pushCounted(ts, domain, m);
  // Read once the push's own CallbackCostScope has closed: the push is counted (and timed) before it, so
  // the range's callbacks start after it (rangeCallbacksSince).
  if (static_cast<uint32_t>(level) < ThreadState::kMaxDepth) ts->stack[level].at_push = ts->buffer->callbacks.read();
  return level;
}

// Writes a range ending now. `at_push`: the thread's callback tally at its push, for a range of this thread's
// stack popped by this handler (the pop's own count taken off); nullptr: no callbacks counted (process-wide
// ranges, which may end on another thread and overlap anything).
void emitRange(ThreadState* ts, uint64_t begin, uint32_t scope, uint32_t begin_thread, uint32_t flags,
               const CallbackCounts* at_push = nullptr) {
  const uint64_t end = hostTicks();
  // Written in place (ThreadBuffer::reserveEvent: no copy through the stack).
  HostEvent* e = ts->buffer->reserveEvent();
  if (e == nullptr) return;  // the buffer counted the drop
  e->kind = HostEvent::kRange;
  e->reserved = 0;
  HostRange& r = e->range;
  if (at_push != nullptr) {
    rangeCallbacksSince(ts->buffer->callbacks.read(), *at_push, /*own=*/1, &r);
  } else {
    r.callbacks = 0;
    r.timed = 0;
    r.timed_ticks = 0;
  }
  r.begin_ns = begin;
  r.end_ns = end;
  r.scope_id = scope;
  r.thread_id = begin_thread;
  r.end_thread_id = ts->thread_id;
  r.flags = flags;
  ts->buffer->commit();
}

// Pops the innermost range of `domain` on this thread. A range of another domain above it stays open
// and is re-parented (its path no longer contains the popped range).
int pop(uint32_t domain) {
  // As a push does, the process's first NVTX call starts the session: a pop before any push is counted.
  ThreadState* ts = recordingThread();
  if (ts == nullptr) return -1;
  const CallbackCostScope cost(ts);
  Session& s = Session::get();
  if (ts->depth > ThreadState::kMaxDepth) {
    // A range pushed past the thread's stack (kMaxDepth deep) was not tracked: inside a window its record
    // is lost, and counted so (Stats dropped_host_records; the log reads LOSSY), as a pop in range
    // would have written it.
    if ((Session::gateNow() & kGateEpochMask) != 0)
      s.counters().dropped_host_records.fetch_add(1, std::memory_order_relaxed);
    --ts->depth;
    return static_cast<int>(ts->depth);
  }
  uint32_t i = ts->depth;
  while (i > 0 && ts->stack[i - 1].domain_id != domain) --i;
  if (i == 0) {
    s.counters().nvtx_pop_underflow.fetch_add(1, std::memory_order_relaxed);
    return -1;
  }
  const uint32_t at = i - 1;
  const OpenRange r = ts->stack[at];
  // Written only inside a window; one that began before the window opened is flagged.
  if (const uint32_t epoch = Session::gateNow() & kGateEpochMask; epoch != 0)
    emitRange(ts, r.begin_ticks, r.scope_id, ts->thread_id,
              (r.epoch & kGateEpochMask) == epoch ? 0u : uint32_t{kRangeBeganOutsideWindow}, &r.at_push);
  for (uint32_t j = at; j + 1 < ts->depth; ++j) {
    ts->stack[j] = ts->stack[j + 1];
    const uint32_t parent = j == 0 ? kRootScope : ts->stack[j - 1].scope_id;
    ts->stack[j].scope_id = s.scopes().child(parent, ts->stack[j].name_id, ts->stack[j].domain_id);
  }
  --ts->depth;
  if (r.epoch & kRangeEndsWindow) {  // the last occurrence of the capture range: close the window
    std::string error;
    s.stopCapture("range end", &error);
  }
  return static_cast<int>(at);
}

// Process-wide ranges (start/end): may end on another thread; they do not change launch attribution.
struct StartedRange {
  uint64_t begin_ticks;  // hostTicks() at start (collector/clock.h)
  uint32_t scope;
  uint32_t thread_id;
};
std::mutex g_started_mutex;  // guards g_started, g_next_range_id
auto* g_started = new std::unordered_map<uint64_t, StartedRange>();  // immortal
uint64_t g_next_range_id = 1;

nvtxRangeId_t start(uint32_t domain, const Message& m) {
  ThreadState* ts = recordingThread();
  if (ts == nullptr) return 0;
  const CallbackCostScope cost(ts);
  try {
    Session& s = Session::get();
    const uint32_t name_id = m.text != nullptr ? s.strings().intern(std::string_view(m.text, m.length)) : m.registered_id;
    const uint32_t scope = s.scopes().child(kRootScope, name_id, domain);
    std::lock_guard<std::mutex> lock(g_started_mutex);
    const uint64_t id = g_next_range_id++;
    (*g_started)[id] = StartedRange{hostTicks(), scope, ts->thread_id};
    return id;
  } catch (...) {
    return 0;
  }
}

void end(nvtxRangeId_t id) {
  ThreadState* ts = threadState();
  if (ts == nullptr || !Session::get().recording()) return;
  const CallbackCostScope cost(ts);
  StartedRange r{};
  try {
    std::lock_guard<std::mutex> lock(g_started_mutex);
    auto it = g_started->find(id);
    if (it == g_started->end()) return;
    r = it->second;
    g_started->erase(it);
  } catch (...) {
    return;
  }
  if (Session::recordingNow()) emitRange(ts, r.begin_ticks, r.scope, r.thread_id, kRangeProcessWide);
}

}  // namespace

size_t torchOpNameLength(const char* text, size_t length) noexcept {
  const std::string_view name(text, length);
  size_t cut = length;
  for (const std::string_view suffix : {std::string_view(", seq = "), std::string_view(", op_id = ")}) {
    const size_t at = name.find(suffix);
    if (at != std::string_view::npos && at > 0 && at < cut) cut = at;
  }
  return cut;
}

void closeOpenStartedRanges() noexcept {
  ThreadState* ts = threadState();
  if (ts == nullptr) return;
  try {
    std::lock_guard<std::mutex> lock(g_started_mutex);
    for (const auto& [id, r] : *g_started) emitRange(ts, r.begin_ticks, r.scope, r.thread_id, kRangeProcessWide | kRangeUnclosed);
    g_started->clear();
  } catch (...) {
  }
}

namespace {

// ---- NVTX API handlers (signatures from nvtxDetail/nvtxTypes.h) ------------------------------------
constexpr size_t kWideBuf = 1024;

// Runs `f` and returns what it returns, or `failed` when it throws: no exception leaves an NVTX handler.
template <class R, class F>
R orFailed(R failed, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return failed;
  }
}

Message textMessage(const char* text) { return Message{text, text != nullptr ? std::strlen(text) : 0, 0}; }

int NVTX_API rangePushA(const char* message) {
  return orFailed(-1, [&] { return push(0, textMessage(message)); });
}
int NVTX_API rangePushW(const wchar_t* message) {
  char buf[kWideBuf];
  return orFailed(-1, [&] { return push(0, textMessage(toUtf8(message, buf, sizeof(buf)))); });
}
int NVTX_API rangePushEx(const nvtxEventAttributes_t* attr) {
  char buf[kWideBuf];
  return orFailed(-1, [&] { return push(0, messageOf(attr, buf, sizeof(buf))); });
}
int NVTX_API rangePop() {
  return orFailed(-1, [] { return pop(0); });
}
int NVTX_API domainRangePushEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  char buf[kWideBuf];
  return orFailed(-1, [&] { return push(domainId(domain), messageOf(attr, buf, sizeof(buf))); });
}
int NVTX_API domainRangePop(nvtxDomainHandle_t domain) {
  return orFailed(-1, [&] { return pop(domainId(domain)); });
}
nvtxRangeId_t NVTX_API rangeStartA(const char* message) {
  return orFailed(nvtxRangeId_t{0}, [&] { return start(0, textMessage(message)); });
}
nvtxRangeId_t NVTX_API rangeStartW(const wchar_t* message) {
  char buf[kWideBuf];
  return orFailed(nvtxRangeId_t{0}, [&] { return start(0, textMessage(toUtf8(message, buf, sizeof(buf)))); });
}
nvtxRangeId_t NVTX_API rangeStartEx(const nvtxEventAttributes_t* attr) {
  char buf[kWideBuf];
  return orFailed(nvtxRangeId_t{0}, [&] { return start(0, messageOf(attr, buf, sizeof(buf))); });
}
void NVTX_API rangeEnd(nvtxRangeId_t id) {
  try {
    end(id);
  } catch (...) {
  }
}
nvtxRangeId_t NVTX_API domainRangeStartEx(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attr) {
  char buf[kWideBuf];
  return orFailed(nvtxRangeId_t{0}, [&] { return start(domainId(domain), messageOf(attr, buf, sizeof(buf))); });
}
void NVTX_API domainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { rangeEnd(id); }

nvtxDomainHandle_t NVTX_API domainCreateA(const char* name) {
  return orFailed(nvtxDomainHandle_t{nullptr},
                  [&] { return domainHandle(Session::get().strings().intern(name != nullptr ? name : "")); });
}
nvtxDomainHandle_t NVTX_API domainCreateW(const wchar_t* name) {
  char buf[kWideBuf];
  return domainCreateA(toUtf8(name, buf, sizeof(buf)));
}
void NVTX_API domainDestroy(nvtxDomainHandle_t) {}
nvtxStringHandle_t NVTX_API domainRegisterStringA(nvtxDomainHandle_t, const char* text) {
  return orFailed(nvtxStringHandle_t{nullptr}, [&] {
    return reinterpret_cast<nvtxStringHandle_t>(uintptr_t{Session::get().strings().intern(text != nullptr ? text : "")});
  });
}
nvtxStringHandle_t NVTX_API domainRegisterStringW(nvtxDomainHandle_t d, const wchar_t* text) {
  char buf[kWideBuf];
  return domainRegisterStringA(d, toUtf8(text, buf, sizeof(buf)));
}

std::atomic<uint32_t> g_nvtx_inits{0};

}  // namespace

}  // namespace kc::inject

using namespace kc::inject;

/// NVTX injection entry point (nvtxDetail/nvtxInit.h): fills the calling library's NVTX function
/// tables with kcount's handlers. Called once per library that embeds NVTX3, possibly concurrently.
/// Returns 1 on success; 0 makes NVTX turn that library's calls into no-ops.
KC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  noteEntryPointCalled();
  try {
    if (get_export_table == nullptr || Session::get().state() == SessionState::kDisabled) return 0;
    const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        callbacks->GetModuleFunctionTable == nullptr)
      return 0;
    NvtxFunctionTable core = nullptr, core2 = nullptr;
    unsigned int core_size = 0, core2_size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) || core == nullptr) return 0;
    auto set = [](NvtxFunctionTable table, unsigned size, unsigned id, auto fn) {
      if (table != nullptr && id < size && table[id] != nullptr) *table[id] = reinterpret_cast<NvtxFunctionPointer>(fn);
    };
    set(core, core_size, NVTX_CBID_CORE_RangeStartEx, &rangeStartEx);
    set(core, core_size, NVTX_CBID_CORE_RangeStartA, &rangeStartA);
    set(core, core_size, NVTX_CBID_CORE_RangeStartW, &rangeStartW);
    set(core, core_size, NVTX_CBID_CORE_RangeEnd, &rangeEnd);
    set(core, core_size, NVTX_CBID_CORE_RangePushEx, &rangePushEx);
    set(core, core_size, NVTX_CBID_CORE_RangePushA, &rangePushA);
    set(core, core_size, NVTX_CBID_CORE_RangePushW, &rangePushW);
    set(core, core_size, NVTX_CBID_CORE_RangePop, &rangePop);
    if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size) && core2 != nullptr) {
      set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeStartEx, &domainRangeStartEx);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainRangeEnd, &domainRangeEnd);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, &domainRangePushEx);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, &domainRangePop);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, &domainRegisterStringA);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringW, &domainRegisterStringW);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateA, &domainCreateA);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainCreateW, &domainCreateW);
      set(core2, core2_size, NVTX_CBID_CORE2_DomainDestroy, &domainDestroy);
    }
    // Process-wide ranges (nvtxRangeStart) still open at the end are written as unclosed by the final flush.
    Session::get().setBeforeFinalDrain(&closeOpenStartedRanges);
    g_nvtx_inits.fetch_add(1, std::memory_order_relaxed);
    return 1;
  } catch (...) {
    return 0;
  }
}
