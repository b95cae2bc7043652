#include "harness/runner/results_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// Staging and old-results names carry the writer's pid so that two writers
// never collide, and a leftover one is recognizable by its prefix.
std::string staging_prefix(const fs::path& target) { return "." + target.filename().string() + ".partial-"; }
std::string old_prefix(const fs::path& target) { return "." + target.filename().string() + ".old-"; }

void check_replaceable(const fs::path& target) {
  const fs::file_status status = fs::symlink_status(target);
  if (!fs::exists(status)) return;
  if (fs::is_symlink(status))
    throw OutputRefused(target.string() + " is a symbolic link; give the folder it points to");
  if (!fs::is_directory(status))
    throw OutputRefused(target.string() + " exists and is not a folder; gauntlet replaces only a folder it wrote");
  if (fs::is_empty(target)) return;
  if (!fs::is_regular_file(fs::symlink_status(target / kResultsMarker)))
    throw OutputRefused(target.string() + " holds files gauntlet did not write (no " + std::string(kResultsMarker) +
                        "); give a new or empty folder");
}

// What an interrupted run left: its staging folder (remove it) and, when it
// died between the two renames of the fallback scheme, the old results with
// no folder in their place (put them back).
void recover_interrupted_writes(const fs::path& target) {
  const std::string staging = staging_prefix(target), old = old_prefix(target);
  std::vector<fs::path> stale_staging, stale_old;
  for (const fs::directory_entry& entry : fs::directory_iterator(target.parent_path())) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(staging, 0) == 0) stale_staging.push_back(entry.path());
    if (name.rfind(old, 0) == 0) stale_old.push_back(entry.path());
  }
  for (const fs::path& path : stale_staging) fs::remove_all(path);
  for (const fs::path& path : stale_old) {
    if (!fs::exists(fs::symlink_status(target)))
      fs::rename(path, target);
    else
      fs::remove_all(path);
  }
  if (!stale_staging.empty() || !stale_old.empty()) fsync_folder(target.parent_path());
}

// Locks parent/.NAME.lock. The lock file is removed on release; a claimant
// that locked a file another one has just removed sees a different inode
// and tries again.
int lock_beside(const fs::path& lock_path, const fs::path& target) {
  for (;;) {
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw OutputRefused("cannot create the lock " + lock_path.string() + ": " + std::strerror(errno));
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      ::close(fd);
      if (error == EWOULDBLOCK)
        throw OutputRefused("another gauntlet run is writing to " + target.string() + " (it holds " +
                            lock_path.string() + ")");
      errno = error;
      throw system_error("cannot lock " + lock_path.string());
    }
    struct stat held {
    }, named{};
    if (::fstat(fd, &held) == 0 && ::stat(lock_path.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      return fd;
    ::close(fd);
  }
}

}  // namespace

fs::path normalized_target(const fs::path& out) {
  fs::path target = fs::absolute(out).lexically_normal();
  // "dir/" and "." normalize to a path whose last element is empty.
  while (!target.has_filename() && target != target.root_path()) target = target.parent_path();
  return target;
}

void write_file_durably(const fs::path& path, const std::string& contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw system_error("cannot write " + path.string());
  std::size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      errno = error;
      throw system_error("cannot write " + path.string());
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    throw system_error("cannot sync " + path.string());
  }
  ::close(fd);
}

void fsync_folder(const fs::path& folder) {
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw system_error("cannot open " + folder.string());
  const int rc = ::fsync(fd);
  const int error = errno;
  ::close(fd);
  if (rc != 0 && error != EINVAL) {  // some file systems cannot sync a folder
    errno = error;
    throw system_error("cannot sync " + folder.string());
  }
}

ClaimedFolder ClaimedFolder::claim(const fs::path& out) {
  const fs::path target = normalized_target(out);
  if (target == target.root_path()) throw OutputRefused("cannot write results over the root folder");
  check_replaceable(target);
  std::error_code error;
  fs::create_directories(target.parent_path(), error);
  if (error) throw OutputRefused("cannot create " + target.parent_path().string() + ": " + error.message());
  const fs::path lock_path = target.parent_path() / ("." + target.filename().string() + ".lock");
  const int fd = lock_beside(lock_path, target);
  ClaimedFolder claimed(target, lock_path, fd);
  // Under the lock: whatever staging exists belongs to a run that died.
  recover_interrupted_writes(target);
  check_replaceable(target);
  return claimed;
}

ClaimedFolder::ClaimedFolder(ClaimedFolder&& other) noexcept
    : target_(std::move(other.target_)), lock_path_(std::move(other.lock_path_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

ClaimedFolder::~ClaimedFolder() {
  if (lock_fd_ < 0) return;
  ::unlink(lock_path_.c_str());  // while still locked, so no claimant holds a removed file unawares
  ::close(lock_fd_);
}

void ClaimedFolder::replace_with(const FileList& files) const {
  check_replaceable(target_);
  const fs::path parent = target_.parent_path();
  const fs::path staging = parent / (staging_prefix(target_) + std::to_string(::getpid()));
  fs::remove_all(staging);
  fs::create_directory(staging);
  try {
    for (const auto& [name, contents] : files) write_file_durably(staging / name, contents);
    write_file_durably(staging / kResultsMarker, "results written by gauntlet; it replaces this folder on a rerun\n");
    fsync_folder(staging);
    if (!fs::exists(fs::symlink_status(target_))) {
      fs::rename(staging, target_);
      fsync_folder(parent);
      return;
    }
    // One atomic swap: the target holds the old results or the new ones.
    if (::renameat2(AT_FDCWD, staging.c_str(), AT_FDCWD, target_.c_str(), RENAME_EXCHANGE) == 0) {
      fsync_folder(parent);
      fs::remove_all(staging);  // now the old results
      return;
    }
    if (errno != EINVAL && errno != ENOSYS && errno != ENOTSUP)
      throw system_error("cannot replace " + target_.string());
    // No exchange on this file system: two renames, undone by the next
    // claim if a crash falls between them.
    const fs::path old = parent / (old_prefix(target_) + std::to_string(::getpid()));
    fs::rename(target_, old);
    fsync_folder(parent);
    fs::rename(staging, target_);
    fsync_folder(parent);
    fs::remove_all(old);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
}

}  // namespace gauntlet::harness
