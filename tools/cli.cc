#include "cli.h"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "driver/pipeline.h"
#include "shard/shard_spec.h"
#include "support/budget.h"
#include "support/suggest.h"
#include "support/printable.h"

namespace polyred::cli {

namespace {

enum class Takes { Nothing, Value };

struct Option {
  std::string_view name;
  Takes takes;
  std::string_view value;  // placeholder in help
  std::string_view help;
};

// Every option once; commands list the ones they take.
const Option kOptions[] = {
    {"deterministic", Takes::Nothing, "", "bitwise-reproducible multi-block reductions (still one launch)"},
    {"arch", Takes::Value, "sm_XY", "target architecture when no GPU is queried (default sm_90)"},
    {"sms", Takes::Value, "N", "number of SMs the binding assumes (default 132)"},
    {"l2-mib", Takes::Value, "N", "L2 size in MiB the binding and the cache hints assume (default 50)"},
    {"dump", Takes::Value, "STAGES", "print the IR after stages: all, or a comma list of graph,rewrite,partition,binding,schedule,ast,cuda,launches"},
    {"no-horizontal-fusion", Takes::Nothing, "", "launch independent kernels one after another instead of as one kernel"},
    {"fast-exp", Takes::Nothing, "", "every f32 exp on the GPU's approximate exp2 unit, 2 + 1.173|x| ulp (default: only where that cannot show, docs/design.md)"},
    {"nvrtc", Takes::Nothing, "", "also compile every kernel to CUBIN through NVRTC (compile: with its registers and stack a thread)"},
    {"config", Takes::Value, "KNOBS", "the policy's knobs for every kernel, e.g. threads=512,items=16,vector=1,unroll=8 (default: tuned, else analytic)"},
    {"candidates", Takes::Value, "KNOBS;KNOBS...", "tune: time these configs (';' between them) instead of the built-in grid; the default config is always timed first"},
    {"no-tune-db", Takes::Nothing, "", "ignore the tuning database (use the analytic policy or --config)"},
    {"output", Takes::Value, "DIR", "write the artifacts: CUDA, CUBIN, manifest.json (also -o DIR; one subdirectory per file if several)"},
    {"test-data", Takes::Nothing, "", "with --output: also random inputs, reference outputs and tolerances in DIR/test"},
    {"seed", Takes::Value, "N", "seed of the random inputs (default 1)"},
    {"max-points", Takes::Value, "N", "CPU check: statement instances run, as whole tiles (default 1048576; 0 = all)"},
    {"size", Takes::Value, "SYMBOL=N[,N...]", "check: the values of a size symbol (repeat for each symbol); the file compiles once and is checked at every value"},
    {"max-memory", Takes::Value, "SIZE", "host memory for inputs, outputs and the reference (K/M/G/T); default and most: 3/4 of what the process may still allocate (MemAvailable, cgroup limit, ulimit -v/-d)"},
    {"timeout", Takes::Value, "SECONDS", "stop a check that runs longer, with exit 2 (default 300)"},
    {"no-time", Takes::Nothing, "", "run without timing"},
    {"iterations", Takes::Value, "N", "timed launches (default 50)"},
    {"misalign", Takes::Value, "N", "each tensor starts N of its elements into its allocation, as a view with a storage offset (default 0)"},
    {"json", Takes::Value, "OUT", "write the results as JSON to OUT"},
    {"min-compiled", Takes::Value, "N", "fail unless at least N files compile"},
    {"max-launches", Takes::Value, "N", "fail if a file needs more than N launches, unless --launch-exceptions lists it"},
    {"launch-exceptions", Takes::Value, "FILE", "files allowed more launches: one path (relative to DIR) per line, # comments"},
    {"verbose", Takes::Nothing, "", "print per-stage timings to stderr (also -v; tune: every timed config and its time)"},
    {"shard", Takes::Value, "IN:AXIS[:SIZES]", "split input IN along AXIS across ranks (SIZES: comma list, default even; several joined by ';'); docs/multigpu.md"},
    {"ranks", Takes::Value, "N", "check --shard: ranks the CPU simulation of the sharded run uses"},
    {"gpus", Takes::Value, "N", "run --shard: GPUs (one rank each, one process, NCCL)"},
    {"no-check", Takes::Nothing, "", "run --shard: skip the reference comparison (benchmarks); ranks must still agree"},
    {"help", Takes::Nothing, "", "this help"},
};

struct Command {
  std::string_view name, operands, summary;
  std::vector<std::string_view> options;
};

const Command kCommands[] = {
    {"compile", "FILE...", "print the generated CUDA and launch configuration (no GPU needed)",
     {"dump", "deterministic", "no-horizontal-fusion", "fast-exp", "config", "no-tune-db", "nvrtc", "output", "test-data", "seed", "arch", "sms", "l2-mib", "verbose",
      "help"}},
    {"check", "FILE...", "run the lowered kernels on the CPU and compare them with the reference (no GPU needed)",
     {"seed", "max-points", "size", "deterministic", "no-horizontal-fusion", "fast-exp", "config", "no-tune-db", "max-memory", "timeout", "arch",
      "sms", "l2-mib", "verbose", "shard", "ranks", "help"}},
    {"run", "FILE...", "run on the GPU with random inputs, compare with the reference, time (needs a GPU)",
     {"seed", "deterministic", "no-horizontal-fusion", "fast-exp", "config", "no-tune-db", "no-time", "iterations", "misalign", "json",
      "max-memory", "timeout", "verbose", "shard", "gpus", "no-check", "help"}},
    {"corpus", "DIR", "compile and check every composite file under DIR, with a summary",
     {"max-points", "deterministic", "no-horizontal-fusion", "min-compiled", "max-launches", "launch-exceptions", "nvrtc",
      "arch", "sms", "l2-mib", "help"}},
    {"tune", "FILE...|DIR...", "time candidate configs of each file on the GPU (20 launches each unless --iterations); keep the best in the tuning database (needs a GPU)",
     {"seed", "deterministic", "no-horizontal-fusion", "iterations", "max-memory", "timeout", "candidates", "verbose", "help"}},
    {"cache", "[clear]", "where the kernel cache is, its entries and size; 'clear' removes its entries", {"help"}},
    {"help", "[COMMAND]", "this overview, or one command's options", {}},
};

const Command* findCommand(const std::string& name) {
  for (const Command& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}
const Option* findOption(std::string_view name) {
  for (const Option& o : kOptions)
    if (o.name == name) return &o;
  return nullptr;
}

std::string suggestionFor(const std::string& word, const std::vector<std::string>& names, const std::string& prefix) {
  std::string best = closestName(word, names);
  return best.empty() ? "" : "; did you mean " + prefix + best + "?";
}

bool allDigits(const std::string& v) {
  return !v.empty() && v.size() <= 18 && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); });
}

void validate(const std::string& name, const std::string& v) {
  auto bad = [&](const std::string& want) {
    throw UsageError("--" + name + " expects " + want + ", got " + quotedName(v));
  };
  if (name == "arch") {
    if (v.size() < 5 || v.size() > 7 || v.rfind("sm_", 0) != 0 || !allDigits(v.substr(3))) bad("sm_XY (e.g. sm_90)");
    int cc = std::stoi(v.substr(3));
    if (cc < 50 || cc > 199) bad("an architecture from sm_50 to sm_199");
  } else if (name == "sms" || name == "iterations" || name == "l2-mib") {
    if (!allDigits(v) || std::stoll(v) < 1 || std::stoll(v) > 100000) bad("a count from 1 to 100000");
  } else if (name == "misalign") {
    if (!allDigits(v) || std::stoll(v) > 1024) bad("a number of elements from 0 to 1024");
  } else if (name == "size") {
    const size_t eq = v.find('=');
    if (eq == std::string::npos || eq == 0) bad("SYMBOL=N[,N...]");
    std::stringstream list(v.substr(eq + 1));
    std::string n;
    while (std::getline(list, n, ','))
      if (!allDigits(n)) bad("SYMBOL=N[,N...] with non-negative integers N");
    if (v.back() == ',' || eq + 1 == v.size()) bad("SYMBOL=N[,N...]");
  } else if (name == "seed" || name == "max-points" || name == "min-compiled" || name == "max-launches") {
    if (!allDigits(v)) bad("a non-negative integer");
  } else if (name == "max-memory") {
    try {
      parseByteSize(v);
    } catch (const Error& e) {
      throw UsageError("--max-memory: " + e.reason());
    }
  } else if (name == "timeout") {
    if (!allDigits(v) || std::stoll(v) < 1) bad("a whole number of seconds, at least 1");
  } else if (name == "dump") {
    std::vector<std::string> stages = dumpStages();
    stages.insert(stages.begin(), "all");
    std::stringstream list(v);
    std::string stage;
    while (std::getline(list, stage, ','))
      if (std::find(stages.begin(), stages.end(), stage) == stages.end())
        throw UsageError("unknown --dump stage " + quotedName(stage) + suggestionFor(stage, stages, ""));
    if (v.empty() || v.back() == ',') bad("a comma list of stages");
  } else if (name == "ranks" || name == "gpus") {
    if (!allDigits(v) || std::stoll(v) < 1 || std::stoll(v) > 1024) bad("a count from 1 to 1024");
  } else if (name == "shard") {
    try {
      parseShardText(v);
    } catch (const Error& e) {
      throw UsageError(e.reason());
    }
  } else if (name == "json" || name == "launch-exceptions" || name == "output") {
    if (v.empty()) bad("a file name");
  }
}

}  // namespace

std::string Args::get(const std::string& name, const std::string& fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : it->second;
}

int64_t Args::integer(const std::string& name, int64_t fallback) const {
  auto it = values.find(name);
  return it == values.end() ? fallback : std::stoll(it->second);
}

Args parse(int argc, char** argv) {
  Args a;
  std::vector<std::string> words(argv + 1, argv + argc);
  for (size_t k = 0; k < words.size(); ++k) {
    const std::string& w = words[k];
    if (w == "-o") {  // -o DIR, as --output=DIR
      if (k + 1 == words.size()) throw UsageError("-o needs a directory: -o DIR");
      validate("output", words[k + 1]);
      a.values["output"] = words[++k];
      continue;
    }
    if (w == "-" || w.empty() || w[0] != '-') {  // the command, then operands
      if (a.command.empty() && w != "-") a.command = w;
      else a.files.push_back(w);
      continue;
    }
    if (w == "-v") {
      a.values["verbose"] = "";
      continue;
    }
    if (w == "-h") {
      a.values["help"] = "";
      continue;
    }
    if (w.rfind("--", 0) != 0) throw UsageError("unknown option " + quotedName(w));
    size_t eq = w.find('=');
    std::string name = w.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    if (name == "version") {
      a.values["version"] = "";
      continue;
    }
    const Option* o = findOption(name);
    if (!o) {
      std::vector<std::string> names = {"version"};
      for (const Option& each : kOptions) names.emplace_back(each.name);
      throw UsageError("unknown option --" + printable(name) + suggestionFor(name, names, "--"));
    }
    if (o->takes == Takes::Nothing && eq != std::string::npos)
      throw UsageError("--" + name + " takes no value");
    if (o->takes == Takes::Value && eq == std::string::npos)
      throw UsageError("--" + name + " needs a value: --" + name + "=" + std::string(o->value));
    std::string value = eq == std::string::npos ? "" : w.substr(eq + 1);
    validate(name, value);
    if (name == "size" && a.has("size")) a.values[name] += ";" + value;  // repeated: one per symbol
    else a.values[name] = value;
  }
  if (a.has("version") || (a.command.empty() && a.has("help"))) return a;
  if (a.command.empty()) throw UsageError("no command given");
  const Command* c = findCommand(a.command);
  if (!c) {
    std::vector<std::string> names;
    for (const Command& each : kCommands) names.emplace_back(each.name);
    throw UsageError("unknown command " + quotedName(a.command) + suggestionFor(a.command, names, ""));
  }
  if (a.has("help") || a.command == "help") return a;
  for (const auto& [name, value] : a.values)
    if (std::find(c->options.begin(), c->options.end(), name) == c->options.end())
      throw UsageError(a.command + " does not take --" + name);
  if (a.command == "cache") {
    if (a.files.size() > 1 || (a.files.size() == 1 && a.files[0] != "clear"))
      throw UsageError("cache takes nothing or 'clear'");
    return a;
  }
  if (a.files.empty()) throw UsageError(a.command + " needs " + std::string(c->operands));
  if (a.has("test-data") && !a.has("output")) throw UsageError("--test-data goes with --output=DIR (or -o DIR)");
  if (a.has("shard") && a.command == "check" && !a.has("ranks")) throw UsageError("check --shard needs --ranks=N");
  if (a.has("shard") && a.command == "run" && !a.has("gpus")) throw UsageError("run --shard needs --gpus=N");
  if (a.has("shard") && a.has("misalign")) throw UsageError("--misalign is for one GPU's run, not with --shard");
  if (a.has("no-check") && !a.has("shard")) throw UsageError("--no-check goes with run --shard");
  if ((a.has("ranks") || a.has("gpus")) && !a.has("shard"))
    throw UsageError("--" + std::string(a.has("ranks") ? "ranks" : "gpus") + " goes with --shard=INPUT:AXIS[:SIZES]");
  if (a.command == "corpus" && a.files.size() != 1) throw UsageError("corpus takes one directory");
  return a;
}

std::string helpText(const std::string& command) {
  std::ostringstream os;
  if (command.empty()) {
    os << "usage: polyred <command> [options] FILE...\n\n"
          "polyred compiles fused deep-learning sub-graphs (composite JSON) into CUDA reduction kernels.\n\n"
          "commands:\n";
    for (const Command& c : kCommands) os << "  " << c.name << " " << c.operands << "\n      " << c.summary << "\n";
    os << "\nFILE '-' reads standard input. 'polyred help COMMAND' lists a command's options.\n"
          "--version prints the version, git hash, NVRTC and isl versions.\n";
  } else {
    const Command* c = findCommand(command);
    if (!c) throw UsageError("unknown command " + quotedName(command));
    os << "usage: polyred " << c->name << " [options] " << c->operands << "\n  " << c->summary << "\n";
    if (!c->options.empty()) os << "\noptions:\n";
    for (std::string_view name : c->options) {
      const Option& o = *findOption(name);
      std::string head = "--" + std::string(o.name) + (o.takes == Takes::Value ? "=" + std::string(o.value) : "");
      os << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ') << o.help << "\n";
    }
  }
  os << "\nenvironment:\n"
        "  POLYRED_CACHE_DIR      on-disk kernel cache (default $XDG_CACHE_HOME/polyred or ~/.cache/polyred)\n"
        "  POLYRED_DISABLE_CACHE  1: no on-disk cache\n"
        "  POLYRED_DUMP_CUDA      a directory: every generated kernel's CUDA source is written there (every command)\n"
        "  POLYRED_DEVICE         GPU index (default 0)\n"
        "  POLYRED_TUNE_DB        tuning database file (default tuning.json in the kernel cache directory)\n"
        "  POLYRED_CUDA_ROOT      CUDA toolkit for NVRTC's headers (default /usr/local/cuda)\n"
        "\nexit codes:\n"
        "  0 success   1 a result did not match the reference\n"
        "  2 bad input, usage, out of scope, over a budget, or no GPU for 'run'   3 internal error (a polyred bug)\n";
  return os.str();
}

}  // namespace polyred::cli
