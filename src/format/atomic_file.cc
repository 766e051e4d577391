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
    if (::close(fd) != 0) {
      return make_error(ErrorCode::kIo, "cannot close `{}`: {}", path_.c_str(),
                        std::strerror(errno))
          .with_field("file", path_.string());
    }
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
  return write_file_atomically(path, {bytes});
}

Result<void> write_file_atomically(const std::filesystem::path& path,
                                   std::initializer_list<std::string_view> parts) {
  return write_file_atomically(path, parts, {});
}

Result<void> write_file_atomically(const std::filesystem::path& path,
                                   std::initializer_list<std::string_view> parts,
                                   const std::function<Result<void>()>& commit_if) {
  if (path.empty() || !path.has_filename()) {
    return make_error(ErrorCode::kInvalidArgument, "output path `{}` does not name a file",
                      path.string());
  }
  const std::filesystem::path temporary = temporary_path_for(path);
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    return make_error(ErrorCode::kIo, "cannot create a temporary file beside `{}`: {}",
                      path.c_str(), std::strerror(errno))
        .with_field("file", path.string());
  }
  TemporaryFile file(temporary, fd);
  for (const std::string_view bytes : parts) {
    size_t written = 0;
    while (written < bytes.size()) {
      const ssize_t n = ::write(file.fd(), bytes.data() + written, bytes.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        return make_error(ErrorCode::kIo, "cannot write `{}`: {}", path.c_str(),
                          std::strerror(errno))
            .with_field("file", path.string());
      }
      written += static_cast<size_t>(n);
    }
  }
  if (::fsync(file.fd()) != 0) {
    return make_error(ErrorCode::kIo, "cannot flush `{}`: {}", path.c_str(), std::strerror(errno))
        .with_field("file", path.string());
  }
  FERRITE_RETURN_IF_ERROR(file.close());
  if (commit_if) FERRITE_RETURN_IF_ERROR(commit_if());
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    return make_error(ErrorCode::kIo, "cannot replace `{}`: {}", path.c_str(), std::strerror(errno))
        .with_field("file", path.string());
  }
  file.release();
  return {};
}

}  // namespace ferrite
