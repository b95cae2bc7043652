#pragma once
// The folder a run's results go to. gauntlet replaces only a folder it wrote
// itself (one holding the marker file), an empty folder or a missing one, so
// `--out ~` or a folder of notes is refused before anything is simulated.
//
// Claiming a folder takes a lock beside it (two runs into one folder: the
// second is refused up front), removes what an interrupted run left behind,
// and replaces the folder crash-safely: the new files are written and fsynced
// in a staging folder that is swapped with the old one in a single rename.
#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace gauntlet::harness {

inline constexpr const char* kResultsMarker = ".gauntlet-results";

// The destination cannot be used; nothing was written. Bad input (exit 2).
class OutputRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using FileList = std::vector<std::pair<std::string, std::string>>;  // name -> contents
// Files too large to hold as one string (a month's faults.jsonl): name ->
// what writes the contents, straight into the staging folder's file.
using FileWriter = std::function<void(std::ostream&)>;
using StreamedFiles = std::vector<std::pair<std::string, FileWriter>>;

class ClaimedFolder {
 public:
  // Checks `out` and locks it; throws OutputRefused with the reason.
  static ClaimedFolder claim(const std::filesystem::path& out);

  ClaimedFolder(ClaimedFolder&& other) noexcept;
  ClaimedFolder& operator=(ClaimedFolder&&) = delete;
  ClaimedFolder(const ClaimedFolder&) = delete;
  ~ClaimedFolder();

  const std::filesystem::path& path() const { return target_; }

  // Replaces the folder with exactly `files` plus the marker. On a crash the
  // folder holds either the old results or the new ones, never neither.
  void replace_with(const FileList& files, const StreamedFiles& streamed = {}) const;

 private:
  ClaimedFolder(std::filesystem::path target, std::filesystem::path lock_path, int lock_fd)
      : target_(std::move(target)), lock_path_(std::move(lock_path)), lock_fd_(lock_fd) {}

  std::filesystem::path target_;
  std::filesystem::path lock_path_;
  int lock_fd_ = -1;
};

// A folder that fills up over several commands (a sweep's cells, a suite's
// episodes, shards writing side by side, then a merge): the same rules as a
// ClaimedFolder (missing, empty or holding the marker; never a symbolic
// link, the root or the working folder), but it is kept and files are
// replaced one at a time. A lock inside it lets one whole command at a time
// write there, or any number of distinct shards together.
class ResultsTree {
 public:
  // `shard` empty: the whole folder, exclusively. Otherwise a shard's name:
  // shards share the folder, each name once at a time.
  static ResultsTree claim(const std::filesystem::path& out, const std::string& shard = "");

  ResultsTree(ResultsTree&& other) noexcept;
  ResultsTree& operator=(ResultsTree&&) = delete;
  ResultsTree(const ResultsTree&) = delete;
  ~ResultsTree();

  const std::filesystem::path& path() const { return target_; }
  // Replaces path()/name at once; a failure leaves the old file.
  void write_file(const std::string& name, const std::string& contents) const;

 private:
  ResultsTree(std::filesystem::path target, int whole_fd, int shard_fd)
      : target_(std::move(target)), whole_fd_(whole_fd), shard_fd_(shard_fd) {}

  std::filesystem::path target_;
  int whole_fd_ = -1;
  int shard_fd_ = -1;
};

// One output file (a calibration table, a report page): never a device, a
// FIFO, a folder or a symbolic link, and an existing file only when
// `written_by_gauntlet` recognizes its first bytes. Locked until destroyed;
// replaced at once.
class ClaimedFile {
 public:
  using Recognizer = std::function<bool(const std::string& head)>;
  static ClaimedFile claim(const std::filesystem::path& out, const Recognizer& written_by_gauntlet);

  ClaimedFile(ClaimedFile&& other) noexcept;
  ClaimedFile& operator=(ClaimedFile&&) = delete;
  ClaimedFile(const ClaimedFile&) = delete;
  ~ClaimedFile();

  const std::filesystem::path& path() const { return target_; }
  void replace_with(const std::string& contents) const;

 private:
  ClaimedFile(std::filesystem::path target, std::filesystem::path lock_path, int lock_fd)
      : target_(std::move(target)), lock_path_(std::move(lock_path)), lock_fd_(lock_fd) {}

  std::filesystem::path target_;
  std::filesystem::path lock_path_;
  int lock_fd_ = -1;
};

// Refuses two destinations of one command where one holds the other (a run's
// --out and --metrics-out): replacing one would remove the other.
void check_apart(const std::filesystem::path& a, const std::filesystem::path& b);

// `out` made absolute, with `dir/` and `.` resolved to the folder they name.
std::filesystem::path normalized_target(const std::filesystem::path& out);

// Replaces path's contents at once (a sibling written, then renamed); on any
// failure the old file stays and no sibling is left.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

// Writes `contents` to `path` and fsyncs it; throws std::runtime_error.
void write_file_durably(const std::filesystem::path& path, const std::string& contents);
void fsync_folder(const std::filesystem::path& folder);

}  // namespace gauntlet::harness
