#include "ferrite/models/mapped_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace ferrite {
namespace {

// Closes a descriptor on every path out of `open`.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

Result<MappedFile> MappedFile::open(const std::filesystem::path& path) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return make_error(ErrorCode::kIo, "cannot map `{}`: open failed: {}", path.c_str(),
                      std::strerror(errno))
        .with_field("file", path.string());
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    return make_error(ErrorCode::kIo, "cannot map `{}`: fstat failed: {}", path.c_str(),
                      std::strerror(errno))
        .with_field("file", path.string());
  }
  if (!S_ISREG(info.st_mode)) {
    return make_error(ErrorCode::kIo, "cannot map `{}`: not a regular file", path.string())
        .with_field("file", path.string());
  }
  if (info.st_size < 0 ||
      static_cast<uint64_t>(info.st_size) > std::numeric_limits<size_t>::max()) {
    return make_error(ErrorCode::kIo, "cannot map `{}`: unsupported size {}", path.string(),
                      info.st_size)
        .with_field("file", path.string());
  }
  const auto size = static_cast<size_t>(info.st_size);
  if (size == 0) return MappedFile(path, nullptr, 0);
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.get(), 0);
  if (address == MAP_FAILED) {
    return make_error(ErrorCode::kIo, "cannot map `{}`: mmap failed: {}", path.c_str(),
                      std::strerror(errno))
        .with_field("file", path.string());
  }
  return MappedFile(path, static_cast<const std::byte*>(address), size);
}

MappedFile::MappedFile(MappedFile&& other) noexcept
    : path_(std::move(other.path_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

MappedFile::~MappedFile() { release(); }

void MappedFile::release() noexcept {
  if (data_ != nullptr) {
    ::munmap(const_cast<std::byte*>(data_), size_);
    data_ = nullptr;
    size_ = 0;
  }
}

void release_mapped_pages(std::span<const std::byte> range) noexcept {
  if (range.empty()) return;
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (page_size <= 0) return;
  const auto page = static_cast<uintptr_t>(page_size);
  const auto start = reinterpret_cast<uintptr_t>(range.data());
  const uintptr_t end = start + range.size();
  const uintptr_t first = (start + page - 1) / page * page;  // whole pages only
  const uintptr_t last = end / page * page;
  if (last <= first) return;
  ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

}  // namespace ferrite
