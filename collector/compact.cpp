#include "collector/compact.h"

#include <algorithm>
#include <cstring>

namespace kc {
namespace {

// Flag bits of the per-record flags byte (column 0 of every batch). A clear bit means "predicted": the
// field is not stored. Layout and predictions: docs/format.md, "Compact batches".
enum LaunchBits : uint8_t {
  kLCorr = 0x01,      // correlation id != previous + 1: column 1 holds zigzag(corr - prev - 1)
  kLScope = 0x02,     // scope id differs from the previous record: column 3 holds it
  kLThread = 0x04,    // thread id differs: column 4 holds it
  kLApi = 0x08,       // api_id, cbid, domain, is_graph_launch or flags differ: column 4 holds all five
  kLReserved = 0x10,  // reserved bytes not all zero: column 4 holds the 5 bytes
};
enum KernelBits : uint8_t {
  kKCorr = 0x01,       // as kLCorr
  kKName = 0x02,       // name id differs: column 3
  // The next three compare with the reference record: the last kernel of the same name in the batch
  // (through its name slot, kNameSlots), else the previous record.
  kKWhere = 0x04,      // device, context or stream differ: column 4, three varints
  kKShape = 0x08,      // grid or block differ: column 4, six zigzag varints
  kKResources = 0x10,  // shared bytes, cluster or registers differ: column 4, five varints
  kKGraph = 0x20,      // graph id differs: column 4
  kKNode = 0x40,       // graph node id != (previous node id ? previous + 1 : 0): column 4, zigzag(node - predicted)
};
enum RangeBits : uint8_t {
  kRScope = 0x01,      // scope differs: column 2
  kRThread = 0x02,     // thread differs: column 2
  kREndThread = 0x04,  // end thread differs from this record's thread: column 2
  kRFlags = 0x08,      // flags differ: column 2
};

uint64_t zz32(int32_t v) { return zigzag(static_cast<uint64_t>(static_cast<int64_t>(v))); }
int32_t unzz32(uint64_t z) { return static_cast<int32_t>(static_cast<int64_t>(unzigzag(z))); }

template <size_t N>
size_t columnBytes(const std::vector<uint8_t> (&cols)[N]) {
  size_t n = 0;
  for (const auto& c : cols) n += c.size();
  return n;
}

template <size_t N>
void finishColumns(std::vector<uint8_t> (&cols)[N], uint32_t count, std::vector<uint8_t>& out) {
  putVarint(out, count);
  for (const auto& c : cols) putVarint(out, c.size());
  for (auto& c : cols) {
    out.insert(out.end(), c.begin(), c.end());
    c.clear();
  }
}

/// Splits a batch body into its count and N column cursors; checks the count against the flags column.
template <size_t N>
bool openColumns(std::span<const uint8_t> body, uint32_t& count, VarintCursor (&cols)[N], const uint8_t*& flags,
                 uint8_t known_bits, std::string& error) {
  VarintCursor head(body);
  const uint64_t n = head.next();
  uint64_t len[N];
  for (auto& l : len) l = head.next();
  if (head.failed()) {
    error = "batch header (record count and column lengths) runs past the body";
    return false;
  }
  if (n > kMaxBatchRecords) {
    error = "batch announces " + std::to_string(n) + " records (limit " + std::to_string(kMaxBatchRecords) + ")";
    return false;
  }
  size_t at = static_cast<size_t>(head.ptr() - body.data());
  for (size_t i = 0; i < N; ++i) {
    if (len[i] > body.size() - at) {
      error = "batch column " + std::to_string(i) + " announces " + std::to_string(len[i]) + " bytes, " +
              std::to_string(body.size() - at) + " remain in the body";
      return false;
    }
    cols[i] = VarintCursor(body.subspan(at, len[i]));
    if (i == 0) flags = body.data() + at;
    at += len[i];
  }
  if (at != body.size()) {
    error = "batch body has " + std::to_string(body.size() - at) + " bytes after its columns";
    return false;
  }
  if (len[0] != n) {
    error = "batch announces " + std::to_string(n) + " records but its flags column holds " + std::to_string(len[0]);
    return false;
  }
  for (uint64_t i = 0; i < n; ++i)
    if (flags[i] & ~known_bits) {
      error = "record " + std::to_string(i) + " of the batch has unknown flag bits " + std::to_string(flags[i]);
      return false;
    }
  cols[0] = VarintCursor();  // the flags column is read as bytes
  count = static_cast<uint32_t>(n);
  return true;
}

template <size_t N>
bool closeColumns(VarintCursor (&cols)[N], std::string& error) {
  for (size_t i = 1; i < N; ++i) {
    if (cols[i].failed()) {
      error = "batch column " + std::to_string(i) + " ends inside a value or holds a varint over 10 bytes";
      return false;
    }
    if (!cols[i].atEnd()) {
      error = "batch column " + std::to_string(i) + " has bytes left after the last record";
      return false;
    }
  }
  return true;
}

}  // namespace

bool VarintCursor::raw(void* out, size_t n) {
  if (static_cast<size_t>(end_ - p_) < n) {
    failed_ = true;
    return false;
  }
  std::memcpy(out, p_, n);
  p_ += n;
  return true;
}

// Canonical encodings only matter to the writer; the reader accepts any varint of at most 10 bytes whose
// bits fit 64 bits (the 10th byte may carry only the top bit).
uint64_t VarintCursor::slow() {
  uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    if (p_ >= end_) break;
    const uint8_t b = *p_++;
    if (shift == 63 && b > 1) break;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (b < 0x80) return v;
  }
  failed_ = true;
  p_ = end_;
  return 0;
}

// ---- launches: columns 0 flags, 1 correlation id, 2 times, 3 scope, 4 other ----

void LaunchBatchEncoder::add(const LaunchBody& l) {
  uint8_t f = 0;
  if (l.correlation_id != prev_.correlation_id + 1) {
    f |= kLCorr;
    putVarint(col_[1], zigzag(l.correlation_id - prev_.correlation_id - 1));
  }
  putVarint(col_[2], zigzag(l.enter_ns - prev_.exit_ns));
  putVarint(col_[2], zigzag(l.exit_ns - l.enter_ns));
  if (l.scope_id != prev_.scope_id) {
    f |= kLScope;
    putVarint(col_[3], l.scope_id);
  }
  if (l.thread_id != prev_.thread_id) {
    f |= kLThread;
    putVarint(col_[4], l.thread_id);
  }
  if (l.api_id != prev_.api_id || l.cbid != prev_.cbid || l.domain != prev_.domain ||
      l.is_graph_launch != prev_.is_graph_launch || l.flags != prev_.flags) {
    f |= kLApi;
    putVarint(col_[4], l.api_id);
    putVarint(col_[4], l.cbid);
    col_[4].push_back(l.domain);
    col_[4].push_back(l.is_graph_launch);
    col_[4].push_back(l.flags);
  }
  static constexpr uint8_t kZero[sizeof(l.reserved)] = {};
  if (std::memcmp(l.reserved, kZero, sizeof(kZero)) != 0) {
    f |= kLReserved;
    col_[4].insert(col_[4].end(), l.reserved, l.reserved + sizeof(l.reserved));
  }
  col_[0].push_back(f);
  prev_ = l;
  ++count_;
}

size_t LaunchBatchEncoder::bytes() const { return columnBytes(col_); }

void LaunchBatchEncoder::finish(std::vector<uint8_t>& out) {
  finishColumns(col_, count_, out);
  prev_ = {};
  count_ = 0;
}

bool decodeLaunchBatch(std::span<const uint8_t> body, std::vector<LaunchBody>& out, std::string& error, bool reuse) {
  uint32_t n = 0;
  VarintCursor c[5];
  const uint8_t* flags = nullptr;
  if (!openColumns(body, n, c, flags, kLCorr | kLScope | kLThread | kLApi | kLReserved, error)) return false;
  // reuse: out's old contents are overwritten from index 0 (elements already there are not zero-filled).
  const size_t base = reuse ? 0 : out.size();
  out.resize(base + n);
  for (uint32_t i = 0; i < n; ++i) {
    LaunchBody& l = out[base + i];
    if (i > 0)
      l = out[base + i - 1];
    else
      l = LaunchBody{};
    const uint64_t prev_corr = l.correlation_id, prev_exit = l.exit_ns;
    const uint8_t f = flags[i];
    l.correlation_id = (f & kLCorr) ? prev_corr + 1 + unzigzag(c[1].next()) : prev_corr + 1;
    l.enter_ns = prev_exit + unzigzag(c[2].next());
    l.exit_ns = l.enter_ns + unzigzag(c[2].next());
    if (f & kLScope) l.scope_id = static_cast<uint32_t>(c[3].next());
    if (f & kLThread) l.thread_id = static_cast<uint32_t>(c[4].next());
    if (f & kLApi) {
      l.api_id = static_cast<uint32_t>(c[4].next());
      l.cbid = static_cast<uint32_t>(c[4].next());
      uint8_t b[3] = {};
      c[4].raw(b, 3);
      l.domain = b[0];
      l.is_graph_launch = b[1];
      l.flags = b[2];
    }
    if (f & kLReserved)
      c[4].raw(l.reserved, sizeof(l.reserved));
    else
      std::memset(l.reserved, 0, sizeof(l.reserved));
  }
  if (!closeColumns(c, error)) {
    out.resize(base);
    return false;
  }
  return true;
}

// ---- kernels: columns 0 flags, 1 correlation id, 2 times, 3 name, 4 other ----

void KernelBatchEncoder::add(const KernelBody& k) {
  uint8_t f = 0;
  if (k.correlation_id != prev_.correlation_id + 1) {
    f |= kKCorr;
    putVarint(col_[1], zigzag(k.correlation_id - prev_.correlation_id - 1));
  }
  putVarint(col_[2], zigzag(k.start_ns - prev_.end_ns));
  putVarint(col_[2], zigzag(k.end_ns - k.start_ns));
  if (k.name_id != prev_.name_id) {
    f |= kKName;
    putVarint(col_[3], k.name_id);
  }
  auto& o = col_[4];
  // Launch configuration: predicted from the last kernel of the same name in this batch, if the name's
  // slot holds one, else from the previous record.
  const uint32_t slot = k.name_id % kNameSlots;
  const KernelBody& r = by_name_used_[slot] && by_name_[slot].name_id == k.name_id ? by_name_[slot] : prev_;
  if (k.device_id != r.device_id || k.context_id != r.context_id || k.stream_id != r.stream_id) {
    f |= kKWhere;
    putVarint(o, k.device_id);
    putVarint(o, k.context_id);
    putVarint(o, k.stream_id);
  }
  if (std::memcmp(k.grid, r.grid, sizeof(k.grid)) != 0 || std::memcmp(k.block, r.block, sizeof(k.block)) != 0) {
    f |= kKShape;
    for (int32_t v : k.grid) putVarint(o, zz32(v));
    for (int32_t v : k.block) putVarint(o, zz32(v));
  }
  if (k.shared_bytes != r.shared_bytes || k.registers != r.registers ||
      std::memcmp(k.cluster, r.cluster, sizeof(k.cluster)) != 0) {
    f |= kKResources;
    putVarint(o, k.shared_bytes);
    for (uint32_t v : k.cluster) putVarint(o, v);
    putVarint(o, k.registers);
  }
  if (k.graph_id != prev_.graph_id) {
    f |= kKGraph;
    putVarint(o, k.graph_id);
  }
  const uint64_t predicted = prev_.graph_node_id ? prev_.graph_node_id + 1 : 0;
  if (k.graph_node_id != predicted) {
    f |= kKNode;
    putVarint(o, zigzag(k.graph_node_id - predicted));
  }
  col_[0].push_back(f);
  prev_ = k;
  by_name_[slot] = k;
  by_name_used_[slot] = 1;
  ++count_;
}

size_t KernelBatchEncoder::bytes() const { return columnBytes(col_); }

void KernelBatchEncoder::finish(std::vector<uint8_t>& out) {
  finishColumns(col_, count_, out);
  prev_ = {};
  std::fill(by_name_used_.begin(), by_name_used_.end(), 0);
  count_ = 0;
}

bool decodeKernelBatch(std::span<const uint8_t> body, std::vector<KernelBody>& out, std::string& error, bool reuse) {
  uint32_t n = 0;
  VarintCursor c[5];
  const uint8_t* flags = nullptr;
  if (!openColumns(body, n, c, flags, kKCorr | kKName | kKWhere | kKShape | kKResources | kKGraph | kKNode, error))
    return false;
  // reuse: out's old contents are overwritten from index 0 (elements already there are not zero-filled).
  const size_t base = reuse ? 0 : out.size();
  out.resize(base + n);
  // The last kernel of each name slot in this batch (see KernelBatchEncoder::add).
  KernelBody by_name[kNameSlots];
  bool used[kNameSlots] = {};
  for (uint32_t i = 0; i < n; ++i) {
    KernelBody& k = out[base + i];
    if (i > 0)
      k = out[base + i - 1];
    else
      k = KernelBody{};
    const uint64_t prev_corr = k.correlation_id, prev_end = k.end_ns, prev_node = k.graph_node_id;
    const uint8_t f = flags[i];
    k.correlation_id = (f & kKCorr) ? prev_corr + 1 + unzigzag(c[1].next()) : prev_corr + 1;
    k.start_ns = prev_end + unzigzag(c[2].next());
    k.end_ns = k.start_ns + unzigzag(c[2].next());
    if (f & kKName) k.name_id = static_cast<uint32_t>(c[3].next());
    const uint32_t slot = k.name_id % kNameSlots;
    if (used[slot] && by_name[slot].name_id == k.name_id) {
      // k holds the previous record's fields; take the predicted ones from this name's last kernel.
      const KernelBody& r = by_name[slot];
      if (!(f & kKWhere)) {
        k.device_id = r.device_id;
        k.context_id = r.context_id;
        k.stream_id = r.stream_id;
      }
      if (!(f & kKShape)) {
        std::memcpy(k.grid, r.grid, sizeof(k.grid));
        std::memcpy(k.block, r.block, sizeof(k.block));
      }
      if (!(f & kKResources)) {
        k.shared_bytes = r.shared_bytes;
        std::memcpy(k.cluster, r.cluster, sizeof(k.cluster));
        k.registers = r.registers;
      }
    }
    if (f & (kKWhere | kKShape | kKResources | kKGraph | kKNode)) {
      auto& o = c[4];
      if (f & kKWhere) {
        k.device_id = static_cast<uint32_t>(o.next());
        k.context_id = static_cast<uint32_t>(o.next());
        k.stream_id = static_cast<uint32_t>(o.next());
      }
      if (f & kKShape) {
        for (int32_t& v : k.grid) v = unzz32(o.next());
        for (int32_t& v : k.block) v = unzz32(o.next());
      }
      if (f & kKResources) {
        k.shared_bytes = static_cast<uint32_t>(o.next());
        for (uint32_t& v : k.cluster) v = static_cast<uint32_t>(o.next());
        k.registers = static_cast<uint32_t>(o.next());
      }
      if (f & kKGraph) k.graph_id = static_cast<uint32_t>(o.next());
    }
    const uint64_t predicted = prev_node ? prev_node + 1 : 0;
    k.graph_node_id = (f & kKNode) ? predicted + unzigzag(c[4].next()) : predicted;
    by_name[slot] = k;
    used[slot] = true;
  }
  if (!closeColumns(c, error)) {
    out.resize(base);
    return false;
  }
  return true;
}

// ---- ranges: columns 0 flags, 1 times, 2 other ----

void RangeBatchEncoder::add(const RangeBody& r) {
  uint8_t f = 0;
  putVarint(col_[1], zigzag(r.begin_ns - prev_.begin_ns));
  putVarint(col_[1], zigzag(r.end_ns - r.begin_ns));
  if (r.scope_id != prev_.scope_id) {
    f |= kRScope;
    putVarint(col_[2], r.scope_id);
  }
  if (r.thread_id != prev_.thread_id) {
    f |= kRThread;
    putVarint(col_[2], r.thread_id);
  }
  if (r.end_thread_id != r.thread_id) {
    f |= kREndThread;
    putVarint(col_[2], r.end_thread_id);
  }
  if (r.flags != prev_.flags) {
    f |= kRFlags;
    putVarint(col_[2], r.flags);
  }
  col_[0].push_back(f);
  prev_ = r;
  ++count_;
}

size_t RangeBatchEncoder::bytes() const { return columnBytes(col_); }

void RangeBatchEncoder::finish(std::vector<uint8_t>& out) {
  finishColumns(col_, count_, out);
  prev_ = {};
  count_ = 0;
}

bool decodeRangeBatch(std::span<const uint8_t> body, std::vector<RangeBody>& out, std::string& error, bool reuse) {
  uint32_t n = 0;
  VarintCursor c[3];
  const uint8_t* flags = nullptr;
  if (!openColumns(body, n, c, flags, kRScope | kRThread | kREndThread | kRFlags, error)) return false;
  // reuse: out's old contents are overwritten from index 0 (elements already there are not zero-filled).
  const size_t base = reuse ? 0 : out.size();
  out.resize(base + n);
  RangeBody prev{};
  for (uint32_t i = 0; i < n; ++i) {
    RangeBody r = prev;
    const uint8_t f = flags[i];
    r.begin_ns = prev.begin_ns + unzigzag(c[1].next());
    r.end_ns = r.begin_ns + unzigzag(c[1].next());
    if (f & kRScope) r.scope_id = static_cast<uint32_t>(c[2].next());
    if (f & kRThread) r.thread_id = static_cast<uint32_t>(c[2].next());
    r.end_thread_id = (f & kREndThread) ? static_cast<uint32_t>(c[2].next()) : r.thread_id;
    if (f & kRFlags) r.flags = static_cast<uint32_t>(c[2].next());
    out[base + i] = r;
    prev = r;
  }
  if (!closeColumns(c, error)) {
    out.resize(base);
    return false;
  }
  return true;
}

}  // namespace kc
