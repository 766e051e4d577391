// ferrite/models/mapped_file.h — a read-only memory map of a whole file.
//
// Contract: `MappedFile::open` maps a regular file read-only (POSIX mmap,
// PROT_READ, MAP_PRIVATE) and owns the mapping until destruction. Errors are
// ErrorCode::kIo and name the path (missing file, not a regular file, open /
// fstat / mmap failures with the system's reason). An empty file is valid: it
// maps nothing and `bytes()` is an empty span. The mapping's address never
// changes, so spans taken from `bytes()` stay valid across moves of the
// owning object. The class is move-only.
//
// `release_mapped_pages(range)` drops this process's resident pages that lie
// wholly inside `range` (madvise MADV_DONTNEED on the page-aligned
// interior). `range` must lie inside a MappedFile's mapping: the mapping is
// read-only and private and never written, so nothing is lost — the next
// access reads the bytes from the file again. Readers call it after copying
// a tensor out, so a model's bytes are not resident twice (file pages and the
// plan's weight arena). Failure is harmless and ignored.
//
// Caveat: like every mmap reader, a file truncated by another process while it
// is mapped can raise SIGBUS on access; Ferrite's model files are treated as
// immutable inputs.
//
// Example:
//   FERRITE_ASSIGN_OR_RETURN(MappedFile file, MappedFile::open("model.gguf"));
//   std::span<const std::byte> bytes = file.bytes();
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "ferrite/core/status.h"

namespace ferrite {

class MappedFile {
 public:
  static Result<MappedFile> open(const std::filesystem::path& path);

  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  uint64_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  void release() noexcept;

  std::filesystem::path path_;
  const std::byte* data_ = nullptr;  // nullptr for an empty file
  size_t size_ = 0;
};

void release_mapped_pages(std::span<const std::byte> range) noexcept;

}  // namespace ferrite
