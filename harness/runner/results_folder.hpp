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
  void replace_with(const FileList& files) const;

 private:
  ClaimedFolder(std::filesystem::path target, std::filesystem::path lock_path, int lock_fd)
      : target_(std::move(target)), lock_path_(std::move(lock_path)), lock_fd_(lock_fd) {}

  std::filesystem::path target_;
  std::filesystem::path lock_path_;
  int lock_fd_ = -1;
};

// `out` made absolute, with `dir/` and `.` resolved to the folder they name.
std::filesystem::path normalized_target(const std::filesystem::path& out);

// Writes `contents` to `path` and fsyncs it; throws std::runtime_error.
void write_file_durably(const std::filesystem::path& path, const std::string& contents);
void fsync_folder(const std::filesystem::path& folder);

}  // namespace gauntlet::harness
