#include "harness/runner/results_folder.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace gauntlet::harness {
namespace {

namespace fs = std::filesystem;

// Inside a ResultsTree: held shared by shards, exclusively by a whole command.
constexpr const char* kTreeLock = ".gauntlet-lock";

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error(what + ": " + std::strerror(errno));
}

// Staging and old-results names carry the writer's pid so that two writers
// never collide, and a leftover one is recognizable by its prefix.
std::string staging_prefix(const fs::path& target) { return "." + target.filename().string() + ".partial-"; }
std::string old_prefix(const fs::path& target) { return "." + target.filename().string() + ".old-"; }

bool same_file(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// The root, the working folder or a folder holding it (`--out .`, `--out ..`)
// would be replaced, or written into, under the user's shell.
void refuse_unsafe_target(const fs::path& target, const char* kind) {
  if (target == target.root_path()) throw OutputRefused("cannot write " + std::string(kind) + " over the root folder");
  const fs::file_status status = fs::symlink_status(target);
  if (fs::is_symlink(status))
    throw OutputRefused(target.string() + " is a symbolic link; give the " + kind + " it points to");
  struct stat named {};
  if (::stat(target.c_str(), &named) != 0) return;
  std::error_code error;
  for (fs::path p = fs::current_path(error); !error && !p.empty(); p = p.parent_path()) {
    struct stat here {};
    if (::stat(p.c_str(), &here) == 0 && same_file(here, named))
      throw OutputRefused(target.string() + " is the working folder or holds it; give a folder inside it");
    if (p == p.root_path()) break;
  }
}

// A mount point cannot be renamed (EBUSY) or swapped: found only after
// simulating, the results would be lost.
bool is_mount_point(const fs::path& folder) {
#ifdef STATX_ATTR_MOUNT_ROOT
  struct statx x {};
  if (::statx(AT_FDCWD, folder.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &x) == 0 &&
      (x.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
    return (x.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
#endif
  struct stat own {
  }, parent{};
  return ::stat(folder.c_str(), &own) == 0 && ::stat(folder.parent_path().c_str(), &parent) == 0 &&
         own.st_dev != parent.st_dev;
}

// Missing, empty, or holding the marker: a folder gauntlet may write into.
void check_ours(const fs::path& target) {
  const fs::file_status status = fs::symlink_status(target);
  if (!fs::exists(status)) return;
  if (!fs::is_directory(status))
    throw OutputRefused(target.string() + " exists and is not a folder; gauntlet replaces only a folder it wrote");
  if (fs::is_empty(target)) return;
  if (!fs::is_regular_file(fs::symlink_status(target / kResultsMarker)))
    throw OutputRefused(target.string() + " holds files gauntlet did not write (no " + std::string(kResultsMarker) +
                        "); give a new or empty folder");
}

void check_replaceable(const fs::path& target) {
  refuse_unsafe_target(target, "folder");
  check_ours(target);
  if (fs::is_directory(fs::symlink_status(target)) && is_mount_point(target))
    throw OutputRefused(target.string() +
                        " is a mount point, which cannot be replaced; give a folder inside it, such as " +
                        (target / "results").string());
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

// A sweep or suite writing into the folder holds the lock inside it.
void refuse_if_tree_busy(const fs::path& target) {
  const int fd = ::open((target / kTreeLock).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  const bool busy = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (busy) throw OutputRefused("another gauntlet command is writing to " + target.string());
}

// Proves, before any work, that the staging entry can be made in `parent`
// (a read-only or foreign folder fails here, not after simulating).
void probe_writable(const fs::path& parent, const std::string& staging_name) {
  const fs::path probe = parent / staging_name;
  if (::mkdir(probe.c_str(), 0755) != 0 && errno != EEXIST)
    throw OutputRefused("cannot write in " + parent.string() + ": " + std::strerror(errno));
  ::rmdir(probe.c_str());
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

// Writes `path` through an ofstream, then makes it durable.
void write_streamed_file_durably(const fs::path& path, const FileWriter& write) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw system_error("cannot write " + path.string());
    write(out);
    out.flush();
    if (!out) throw system_error("cannot write " + path.string());
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 || ::fsync(fd) != 0) {
    const int error = errno;
    if (fd >= 0) ::close(fd);
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
  refuse_if_tree_busy(target);
  probe_writable(target.parent_path(), staging_prefix(target) + std::to_string(::getpid()));
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

void ClaimedFolder::replace_with(const FileList& files, const StreamedFiles& streamed) const {
  check_replaceable(target_);
  const fs::path parent = target_.parent_path();
  const fs::path staging = parent / (staging_prefix(target_) + std::to_string(::getpid()));
  fs::remove_all(staging);
  fs::create_directory(staging);
  try {
    for (const auto& [name, contents] : files) write_file_durably(staging / name, contents);
    for (const auto& [name, write] : streamed) write_streamed_file_durably(staging / name, write);
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
    try {
      fs::rename(staging, target_);
    } catch (...) {
      std::error_code ignored;
      fs::rename(old, target_, ignored);  // the old results back in place
      throw;
    }
    fsync_folder(parent);
    fs::remove_all(old);
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
}

void write_file_atomically(const fs::path& path, const std::string& contents) {
  const fs::path staging =
      path.parent_path() / ("." + path.filename().string() + ".partial-" + std::to_string(::getpid()));
  try {
    write_file_durably(staging, contents);
    fs::rename(staging, path);
  } catch (...) {  // a failed write or rename leaves no staging file behind
    std::error_code ignored;
    fs::remove(staging, ignored);
    throw;
  }
  fsync_folder(fs::absolute(path).parent_path());
}

namespace {

int lock_inside(const fs::path& lock_path, int operation, const fs::path& target) {
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw OutputRefused("cannot create the lock " + lock_path.string() + ": " + std::strerror(errno));
  if (::flock(fd, operation | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK)
      throw OutputRefused("another gauntlet command is writing to " + target.string() + " (it holds " +
                          lock_path.string() + ")");
    throw OutputRefused("cannot lock " + lock_path.string() + ": " + std::strerror(error));
  }
  return fd;
}

// A run replacing the whole folder holds the lock beside it.
void refuse_if_folder_busy(const fs::path& target) {
  const fs::path beside = target.parent_path() / ("." + target.filename().string() + ".lock");
  const int fd = ::open(beside.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return;
  const bool busy = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd);
  if (busy) throw OutputRefused("another gauntlet run is writing to " + target.string());
}

// The first bytes of an existing file, without blocking on a FIFO swapped in.
std::string read_head(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return {};
  std::string head(4096, '\0');
  const ssize_t n = ::read(fd, head.data(), head.size());
  ::close(fd);
  head.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return head;
}

void check_replaceable_file(const fs::path& target, const ClaimedFile::Recognizer& written_by_gauntlet) {
  refuse_unsafe_target(target, "file");
  const fs::file_status status = fs::symlink_status(target);
  if (!fs::exists(status)) return;
  if (!fs::is_regular_file(status))
    throw OutputRefused(target.string() +
                        " exists and is not a regular file (a folder, a device or a FIFO); give a new file");
  if (!written_by_gauntlet(read_head(target)))
    throw OutputRefused(target.string() + " holds a file gauntlet did not write; give a new file name");
}

}  // namespace

ResultsTree ResultsTree::claim(const fs::path& out, const std::string& shard) {
  const fs::path target = normalized_target(out);
  refuse_unsafe_target(target, "folder");
  check_ours(target);
  std::error_code error;
  fs::create_directories(target, error);
  if (error) throw OutputRefused("cannot create " + target.string() + ": " + error.message());
  ResultsTree tree(target, lock_inside(target / kTreeLock, shard.empty() ? LOCK_EX : LOCK_SH, target), -1);
  if (!shard.empty()) tree.shard_fd_ = lock_inside(target / (std::string(kTreeLock) + "-" + shard), LOCK_EX, target);
  refuse_if_folder_busy(target);
  refuse_unsafe_target(target, "folder");  // swapped for a link meanwhile
  if (!fs::exists(fs::symlink_status(target / kResultsMarker)))
    write_file_durably(target / kResultsMarker, "results written by gauntlet; it writes into this folder again\n");
  probe_writable(target, "." + std::string(kResultsMarker) + ".probe-" + std::to_string(::getpid()));
  return tree;
}

ResultsTree::ResultsTree(ResultsTree&& other) noexcept
    : target_(std::move(other.target_)), whole_fd_(other.whole_fd_), shard_fd_(other.shard_fd_) {
  other.whole_fd_ = other.shard_fd_ = -1;
}

ResultsTree::~ResultsTree() {
  // The lock files stay: removing one another command has open would let a
  // third lock a new file beside it.
  if (shard_fd_ >= 0) ::close(shard_fd_);
  if (whole_fd_ >= 0) ::close(whole_fd_);
}

void ResultsTree::write_file(const std::string& name, const std::string& contents) const {
  write_file_atomically(target_ / name, contents);
}

ClaimedFile ClaimedFile::claim(const fs::path& out, const Recognizer& written_by_gauntlet) {
  const std::string text = out.string();
  if (text.empty() || text.back() == '/' || !out.has_filename() || out.filename() == "." || out.filename() == "..")
    throw OutputRefused("'" + text + "' names a folder; give a file");
  const fs::path target = fs::absolute(out).lexically_normal();
  check_replaceable_file(target, written_by_gauntlet);
  std::error_code error;
  fs::create_directories(target.parent_path(), error);
  if (error) throw OutputRefused("cannot create " + target.parent_path().string() + ": " + error.message());
  const fs::path lock_path = target.parent_path() / ("." + target.filename().string() + ".lock");
  ClaimedFile claimed(target, lock_path, lock_beside(lock_path, target));
  check_replaceable_file(target, written_by_gauntlet);
  probe_writable(target.parent_path(), "." + target.filename().string() + ".partial-" + std::to_string(::getpid()));
  return claimed;
}

ClaimedFile::ClaimedFile(ClaimedFile&& other) noexcept
    : target_(std::move(other.target_)), lock_path_(std::move(other.lock_path_)), lock_fd_(other.lock_fd_) {
  other.lock_fd_ = -1;
}

ClaimedFile::~ClaimedFile() {
  if (lock_fd_ < 0) return;
  ::unlink(lock_path_.c_str());
  ::close(lock_fd_);
}

void ClaimedFile::replace_with(const std::string& contents) const {
  const fs::file_status status = fs::symlink_status(target_);
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw OutputRefused(target_.string() + " is no longer a regular file; nothing written");
  write_file_atomically(target_, contents);
}

void check_apart(const fs::path& a, const fs::path& b) {
  const fs::path x = normalized_target(a), y = normalized_target(b);
  const auto holds = [](const fs::path& outer, const fs::path& inner) {
    auto o = outer.begin(), i = inner.begin();
    for (; o != outer.end() && i != inner.end(); ++o, ++i)
      if (*o != *i) return false;
    return o == outer.end();
  };
  if (holds(x, y) || holds(y, x))
    throw OutputRefused(x.string() + " and " + y.string() +
                        " overlap: replacing one would remove the other; give two separate folders");
}

}  // namespace gauntlet::harness
