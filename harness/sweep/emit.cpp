#include "harness/sweep/emit.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <regex>
#include <stdexcept>

namespace gauntlet::harness {
namespace {

// A DNS-1123 label for the Job's name.
std::string kubernetes_name(const std::string& subcommand, const std::string& sweep) {
  std::string name = "gauntlet-" + subcommand + "-";
  for (char c : sweep) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  if (name.size() > 45) name.resize(45);  // room for "-gather" and the pod suffixes Kubernetes adds
  while (name.back() == '-') name.pop_back();
  return name;
}

bool is_control(char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; }

// A YAML double-quoted scalar; control characters as escapes, so that no
// value can end its line.
std::string yaml_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (is_control(c)) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\x%02x", static_cast<unsigned char>(c));
      out += escape;
      continue;
    }
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Text for a comment line: a control character would start a line of its
// own, which the shell or the YAML reader would then read.
std::string comment(const std::string& text) {
  std::string out;
  for (char c : text) out += is_control(c) ? '?' : c;
  return out;
}

// A Slurm job name: letters, digits, '.', '_' and '-' only.
std::string slurm_name(const std::string& sweep) {
  std::string name;
  for (char c : sweep) name += std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' ? c : '-';
  return name;
}

bool all_of(const std::string& text, const char* allowed, bool digits, bool letters) {
  for (char c : text) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((digits && std::isdigit(u)) || (letters && std::isalpha(u)) || std::strchr(allowed, c) != nullptr) continue;
    return false;
  }
  return !text.empty();
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The pod template both Jobs share: the image, the claim at `out`, requests.
std::string pod_spec(const EmitOptions& o, const std::string& args, const std::string& cpus,
                     const std::string& memory) {
  std::string out;
  out += "    spec:\n      restartPolicy: Never\n      containers:\n        - name: gauntlet\n";
  out += "          image: " + yaml_quote(o.image) + "\n";
  out += "          workingDir: " + yaml_quote(o.working_dir) + "\n";
  out += "          command: [" + yaml_quote(o.binary) + "]\n";
  out += "          args: [" + args + "]\n";
  out += "          resources:\n            requests: {cpu: " + yaml_quote(cpus) + ", memory: " + yaml_quote(memory) +
         "}\n            limits: {memory: " + yaml_quote(memory) + "}\n";
  out += "          volumeMounts:\n            - {name: results, mountPath: " + yaml_quote(o.out) + "}\n";
  out +=
      "      volumes:\n        - name: results\n          persistentVolumeClaim: {claimName: " + yaml_quote(o.claim) +
      "}\n";
  return out;
}

std::vector<std::string> gather_args(const EmitOptions& o) {
  return o.gather_args.empty() ? std::vector<std::string>{"report", o.out} : o.gather_args;
}

}  // namespace

std::string slurm_memory(const std::string& quantity) {
  static const std::regex form(R"(([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|K|M|G|T)?)");
  std::smatch m;
  if (!std::regex_match(quantity, m, form)) return "";
  const double value = std::stod(m[1]);
  const std::string unit = m[2];
  const double bytes = value * (unit == "Ki"   ? 1024.0
                                : unit == "Mi" ? 1048576.0
                                : unit == "Gi" ? 1073741824.0
                                : unit == "Ti" ? 1099511627776.0
                                : unit == "K"  ? 1e3
                                : unit == "M"  ? 1e6
                                : unit == "G"  ? 1e9
                                : unit == "T"  ? 1e12
                                               : 1.0);
  return std::to_string(static_cast<long long>(std::ceil(bytes / 1048576.0))) + "M";
}

std::string emit_options_error(const EmitOptions& o) {
  const std::pair<const char*, const std::string*> fields[] = {{"the sweep's path", &o.sweep_path},
                                                               {"the name", &o.sweep_name},
                                                               {"--out", &o.out},
                                                               {"--binary", &o.binary},
                                                               {"--image", &o.image},
                                                               {"--workdir", &o.working_dir},
                                                               {"--claim", &o.claim},
                                                               {"--storage", &o.storage},
                                                               {"--memory", &o.memory},
                                                               {"--cpus", &o.cpus},
                                                               {"--time", &o.time_limit}};
  for (const auto& [what, value] : fields)
    for (char c : *value)
      if (is_control(c))
        return std::string(what) + ": a control character (a line break, a tab) would break the launcher's lines";
  for (const std::string& arg : o.gather_args)
    for (char c : arg)
      if (is_control(c)) return "the gather step's arguments hold a control character";
  if (!all_of(o.cpus, "", true, false) || o.cpus.size() > 4 || o.cpus.find_first_not_of('0') == std::string::npos)
    return "--cpus: a whole number from 1 to 9999, got '" + comment(o.cpus) + "'";
  if (!all_of(o.time_limit, ":-", true, false))
    return "--time: digits, ':' and '-' as Slurm takes it (04:00:00, 1-00:00:00), got '" + comment(o.time_limit) + "'";
  if (!all_of(o.claim, "-.", true, true) || o.claim.size() > 253)
    return "--claim: a Kubernetes name (letters, digits, '-' and '.'), got '" + comment(o.claim) + "'";
  if (!all_of(o.storage, ".", true, true))
    return "--storage: a quantity such as 20Gi, got '" + comment(o.storage) + "'";
  return "";
}

std::string kubernetes_manifest(const EmitOptions& o) {
  if (const std::string error = emit_options_error(o); !error.empty()) throw std::invalid_argument(error);
  const std::string n = std::to_string(o.shards);
  const std::string name = kubernetes_name(o.subcommand, o.sweep_name);
  std::string out;
  out += comment("# gauntlet " + o.subcommand + " " + o.sweep_name + ": " + std::to_string(o.cells) + " " +
                 o.task_unit + " in " + n + " shards.") +
         "\n";
  out +=
      comment("# Pod k runs shard k/" + n + " into " + o.out + " on the ReadWriteMany claim " + o.claim + ";") + "\n";
  out += "# the gather Job merges the shards once all " + comment(o.task_unit) + " are there (the merge fails,\n";
  out += comment("# and the pod is retried, while some are missing). The image holds " + o.binary + " and the") + "\n";
  out += comment("# " + o.subcommand + " and scenario files under " + o.working_dir +
                 " (scripts/build-image.sh builds one).") +
         "\n";
  out += comment("# kubectl apply -f this.yaml; the merged report: " + o.out + "/report.html") + "\n";
  out += "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: " + yaml_quote(o.claim) + "\n";
  out +=
      "spec:\n  accessModes: [ReadWriteMany]\n  resources:\n    requests: {storage: " + yaml_quote(o.storage) + "}\n";
  out += "---\n";
  out += "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "\n";
  out += "  labels:\n    app.kubernetes.io/name: gauntlet\n";
  out += "spec:\n  completionMode: Indexed\n  completions: " + n + "\n  parallelism: " + n + "\n";
  out += "  backoffLimit: " + std::to_string(o.shards * 2) + "\n";
  out += "  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: gauntlet\n";
  out += pod_spec(o,
                  yaml_quote(o.subcommand) + ", " + yaml_quote(o.sweep_path) +
                      ", \"--shard\", \"$(JOB_COMPLETION_INDEX)/" + n +
                      "\", \"--jobs\", \"1\", \"--no-progress\", \"--out\", " + yaml_quote(o.out),
                  o.cpus, o.memory);
  out += "---\n";
  out += "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + name + "-gather\n";
  out += "  labels:\n    app.kubernetes.io/name: gauntlet\n";
  out +=
      "spec:\n  backoffLimit: 30\n  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: "
      "gauntlet\n";
  std::string gather;
  for (const std::string& arg : gather_args(o)) gather += (gather.empty() ? "" : ", ") + yaml_quote(arg);
  out += pod_spec(o, gather, "1", "1Gi");
  return out;
}

std::string slurm_script(const EmitOptions& o) {
  if (const std::string error = emit_options_error(o); !error.empty()) throw std::invalid_argument(error);
  const std::string n = std::to_string(o.shards);
  const std::string memory = slurm_memory(o.memory);
  std::string out = "#!/bin/bash\n";
  out += comment("# gauntlet " + o.subcommand + " " + o.sweep_name + ": " + std::to_string(o.cells) + " " +
                 o.task_unit + " in " + n + " shards.") +
         "\n";
  out += comment("# Submit with sbatch from the folder the " + o.subcommand + " path is relative to; " + o.out) + "\n";
  out += "# must be on a file system every node shares. The gather step runs after the\n";
  out += comment("# whole array (afterok) and writes " + o.out + "/report.html.") + "\n";
  const std::string job = slurm_name(o.sweep_name);
  out += "#SBATCH --job-name=gauntlet-" + job + "\n";
  out += "#SBATCH --array=0-" + std::to_string(o.shards - 1) + "\n";
  out += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" + comment(o.cpus) + "\n";
  out += "#SBATCH --mem=" + memory + "\n";
  out += "#SBATCH --time=" + comment(o.time_limit) + "\n";
  out += "#SBATCH --output=gauntlet-" + job + "-%A_%a.log\n";
  out += "set -euo pipefail\n";
  std::string gather_command = shell_quote(o.binary);
  const std::vector<std::string> gather = gather_args(o);
  // The subcommand's name (set by gauntlet, never by input) goes as it is, like the tasks' own.
  for (std::size_t i = 0; i < gather.size(); ++i) gather_command += " " + (i == 0 ? gather[i] : shell_quote(gather[i]));
  out += "if [ \"${SLURM_ARRAY_TASK_ID}\" = 0 ]; then\n";
  out += "  sbatch --dependency=afterok:\"${SLURM_ARRAY_JOB_ID}\" --job-name=gauntlet-" + job +
         "-gather --ntasks=1 --time=00:30:00 \\\n";
  out += "    --output=gauntlet-" + job + "-gather-%j.log --wrap=" + shell_quote(gather_command) + "\n";
  out += "fi\n";
  out += "exec " + shell_quote(o.binary) + " " + o.subcommand + " " + shell_quote(o.sweep_path) +
         " --shard \"${SLURM_ARRAY_TASK_ID}/" + n + "\" --jobs 1 --no-progress --out " + shell_quote(o.out) + "\n";
  return out;
}

}  // namespace gauntlet::harness
