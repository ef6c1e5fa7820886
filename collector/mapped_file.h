// A log file mapped read-only for one forward pass: pages behind the reader are dropped as it moves on,
// so reading a file of any size keeps only a window of it resident.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace kc {

struct WatchedMapping;  // collector/mapped_file.cpp: a mapping the SIGBUS handler watches

/// Owns a read-only private mapping of a whole file. Not thread-safe; one reader. The bytes stay
/// addressable until destruction; release() only lets the kernel drop resident pages (they are read
/// again from the page cache or the file if touched later).
class MappedFile {
 public:
  MappedFile() = default;
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  /// Maps path. False with `error` ("cannot open PATH: reason", "cannot map PATH: reason") on failure.
  /// An empty file maps to an empty span.
  bool open(const std::string& path, std::string& error);
  std::span<const uint8_t> bytes() const { return {data_, size_}; }
  /// Tells the kernel the bytes before `offset` are done with (madvise MADV_DONTNEED on whole pages).
  void release(size_t offset);
  /// Tells the kernel the bytes in [from, to) are done with for now, whatever release() said before (a
  /// second scan over bytes already released once): madvise MADV_DONTNEED on the whole pages inside.
  void drop(size_t from, size_t to);
  /// Offset (bytes, page-aligned) of the first access past the file's end after the file shrank while
  /// mapped (another process truncated or rewrote it), or UINT64_MAX if none: such an access raises
  /// SIGBUS, which a process-wide handler (installed by the first open()) answers by mapping zero pages
  /// from there to the end of the mapping, so the bytes read as zeros instead of the process dying. A
  /// SIGBUS outside the mappings of open MappedFiles goes to the handler the process had before.
  uint64_t shrankAt() const;

 private:
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t released_ = 0;  // page-aligned offset up to which pages were released
  WatchedMapping* watched_ = nullptr;  // this mapping's slot in the SIGBUS handler's table
};

}  // namespace kc
