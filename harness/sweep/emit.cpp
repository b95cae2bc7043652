#include "harness/sweep/emit.hpp"

#include <cctype>

namespace gauntlet::harness {
namespace {

// A DNS-1123 label for the Job's name.
std::string kubernetes_name(const std::string& sweep) {
  std::string name = "gauntlet-sweep-";
  for (char c : sweep) name += std::isalnum(static_cast<unsigned char>(c)) ? static_cast<char>(std::tolower(c)) : '-';
  if (name.size() > 52) name.resize(52);  // leaves room for the pod suffixes Kubernetes adds
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

}  // namespace

std::string kubernetes_manifest(const EmitOptions& o) {
  const std::string n = std::to_string(o.shards);
  std::string out;
  out += "# gauntlet sweep " + o.sweep_name + ": " + std::to_string(o.cells) + " cells in " + n + " shards.\n";
  out += "# Pod k runs shard k/" + n + ". The image must hold gauntlet on PATH and the sweep and\n";
  out += "# scenario files under " + o.working_dir + ". Results go to the volume 'results': replace the\n";
  out += "# emptyDir with a PersistentVolumeClaim, then merge with: gauntlet report " + o.out + "\n";
  out += "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: " + kubernetes_name(o.sweep_name) + "\n";
  out += "  labels:\n    app.kubernetes.io/name: gauntlet\n";
  out += "spec:\n  completionMode: Indexed\n  completions: " + n + "\n  parallelism: " + n + "\n";
  out += "  backoffLimit: " + std::to_string(o.shards * 2) + "\n";
  out += "  template:\n    metadata:\n      labels:\n        app.kubernetes.io/name: gauntlet\n";
  out += "    spec:\n      restartPolicy: Never\n      containers:\n        - name: gauntlet\n";
  out += "          image: " + yaml_quote(o.image) + "\n";
  out += "          workingDir: " + yaml_quote(o.working_dir) + "\n";
  out += "          command: [\"gauntlet\"]\n";
  out += "          args: [\"sweep\", " + yaml_quote(o.sweep_path) + ", \"--shard\", \"$(JOB_COMPLETION_INDEX)/" + n +
         "\", \"--jobs\", \"1\", \"--no-progress\", \"--out\", " + yaml_quote(o.out) + "]\n";
  out += "          resources:\n            requests: {cpu: \"2\", memory: 2Gi}\n";
  out += "          volumeMounts:\n            - {name: results, mountPath: " + yaml_quote(o.out) + "}\n";
  out += "      volumes:\n        - name: results\n          emptyDir: {}\n";
  return out;
}

std::string slurm_script(const EmitOptions& o) {
  const std::string n = std::to_string(o.shards);
  std::string out = "#!/bin/bash\n";
  out += "# gauntlet sweep " + o.sweep_name + ": " + std::to_string(o.cells) + " cells in " + n + " shards.\n";
  out += "# Submit from the folder the sweep path is relative to (sbatch runs tasks there);\n";
  out += "# when every task is done, merge with: gauntlet report " + o.out + "\n";
  out += "#SBATCH --job-name=gauntlet-" + o.sweep_name + "\n";
  out += "#SBATCH --array=0-" + std::to_string(o.shards - 1) + "\n";
  out += "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=2\n";
  out += "#SBATCH --output=gauntlet-" + o.sweep_name + "-%A_%a.log\n";
  out += "set -euo pipefail\n";
  out += "exec \"${GAUNTLET:-gauntlet}\" sweep " + shell_quote(o.sweep_path) + " --shard \"${SLURM_ARRAY_TASK_ID}/" + n +
         "\" --jobs 1 --no-progress --out " + shell_quote(o.out) + "\n";
  return out;
}

}  // namespace gauntlet::harness
