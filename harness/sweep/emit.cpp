#include "harness/sweep/emit.hpp"

#include <cctype>
#include <cmath>
#include <regex>

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

// A YAML double-quoted scalar.
std::string yaml_quote(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
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

std::string kubernetes_manifest(const EmitOptions& o) {
  const std::string n = std::to_string(o.shards);
  const std::string name = kubernetes_name(o.subcommand, o.sweep_name);
  std::string out;
  out += "# gauntlet " + o.subcommand + " " + o.sweep_name + ": " + std::to_string(o.cells) + " " + o.task_unit +
         " in " + n + " shards.\n";
  out += "# Pod k runs shard k/" + n + " into " + o.out + " on the ReadWriteMany claim " + o.claim + ";\n";
  out += "# the gather Job merges the shards once all " + o.task_unit + " are there (the merge fails,\n";
  out += "# and the pod is retried, while some are missing). The image holds " + o.binary + " and the\n";
  out += "# " + o.subcommand + " and scenario files under " + o.working_dir + " (scripts/build-image.sh builds one).\n";
  out += "# kubectl apply -f this.yaml; the merged report: " + o.out + "/report.html\n";
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
  const std::string n = std::to_string(o.shards);
  const std::string memory = slurm_memory(o.memory);
  std::string out = "#!/bin/bash\n";
  out += "# gauntlet " + o.subcommand + " " + o.sweep_name + ": " + std::to_string(o.cells) + " " + o.task_unit +
         " in " + n + " shards.\n";
  out += "# Submit with sbatch from the folder the " + o.subcommand + " path is relative to; " + o.out + "\n";
  out += "# must be on a file system every node shares. The gather step runs after the\n";
  out += "# whole array (afterok) and writes " + o.out + "/report.html.\n";
  out += "#SBATCH --job-name=gauntlet-" + o.sweep_name + "\n";
  out += "#SBATCH --array=0-" + std::to_string(o.shards - 1) + "\n";
  out += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=" + o.cpus + "\n";
  out += "#SBATCH --mem=" + memory + "\n";
  out += "#SBATCH --time=" + o.time_limit + "\n";
  out += "#SBATCH --output=gauntlet-" + o.sweep_name + "-%A_%a.log\n";
  out += "set -euo pipefail\n";
  std::string gather_command = shell_quote(o.binary);
  const std::vector<std::string> gather = gather_args(o);
  // The subcommand's name goes as it is, like the tasks' own.
  for (std::size_t i = 0; i < gather.size(); ++i) gather_command += " " + (i == 0 ? gather[i] : shell_quote(gather[i]));
  out += "if [ \"${SLURM_ARRAY_TASK_ID}\" = 0 ]; then\n";
  out += "  sbatch --dependency=afterok:\"${SLURM_ARRAY_JOB_ID}\" --job-name=gauntlet-" + o.sweep_name +
         "-gather --ntasks=1 --time=00:30:00 \\\n";
  out += "    --output=gauntlet-" + o.sweep_name + "-gather-%j.log --wrap=" + shell_quote(gather_command) + "\n";
  out += "fi\n";
  out += "exec " + shell_quote(o.binary) + " " + o.subcommand + " " + shell_quote(o.sweep_path) +
         " --shard \"${SLURM_ARRAY_TASK_ID}/" + n + "\" --jobs 1 --no-progress --out " + shell_quote(o.out) + "\n";
  return out;
}

}  // namespace gauntlet::harness
