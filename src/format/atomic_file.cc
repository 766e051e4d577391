#include "ferrite/format/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include <fmt/format.h>

namespace ferrite {
namespace {

Status io_error(const std::filesystem::path& path, std::string_view what, int error_number) {
  return Status(ErrorCode::kIo, fmt::format("cannot {} `{}`: {}", what, path.string(),
                                            std::strerror(error_number)))
      .with_field("file", path.string());
}

std::filesystem::path temporary_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  const std::string name = fmt::format(".{}.tmp-{}-{}", path.filename().string(),
                                       static_cast<long>(::getpid()), counter.fetch_add(1));
  return path.has_parent_path() ? path.parent_path() / name : std::filesystem::path(name);
}

// Closes and unlinks the temporary file unless released.
class TemporaryFile {
 public:
  TemporaryFile(std::filesystem::path path, int fd) : path_(std::move(path)), fd_(fd) {}
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  ~TemporaryFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!released_) ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }
  Result<void> close() {
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) return make_error(io_error(path_, "close", errno));
    return {};
  }
  void release() { released_ = true; }

 private:
  std::filesystem::path path_;
  int fd_;
  bool released_ = false;
};

}  // namespace

Result<void> write_file_atomically(const std::filesystem::path& path, std::string_view bytes) {
  if (path.empty() || !path.has_filename()) {
    return make_error(Status(ErrorCode::kInvalidArgument,
                             fmt::format("output path `{}` does not name a file", path.string())));
  }
  const std::filesystem::path temporary = temporary_path_for(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(io_error(path, "create a temporary file beside", errno));
  TemporaryFile file(temporary, fd);
  size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(file.fd(), bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(io_error(path, "write", errno));
    }
    written += static_cast<size_t>(n);
  }
  if (::fsync(file.fd()) != 0) return make_error(io_error(path, "flush", errno));
  FERRITE_RETURN_IF_ERROR(file.close());
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return make_error(io_error(path, "replace", errno));
  }
  file.release();
  return {};
}

}  // namespace ferrite
