#include "app/server/stats/process_metrics.h"

#include <dirent.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace fieldbrain::server {
namespace {

void process_family(std::string& out, const char* name, const char* type, const char* help,
                    double value) {
  out += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n{0} {3}\n", name, help, type, value);
}

// The fields of /proc/self/stat after the command name (which may hold spaces and parentheses,
// hence the last ')'): fields[0] is field 3 (state) of proc(5).
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string line;
  if (!std::getline(in, line)) return {};
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return {};
  std::istringstream rest(line.substr(close + 1));
  std::vector<std::string> fields;
  for (std::string f; rest >> f;) fields.push_back(f);
  return fields;
}

// Seconds since the epoch at boot (/proc/stat "btime"), -1 when unknown.
double boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double t = -1;
      in >> t;
      return t;
    }
    std::string skip;
    std::getline(in, skip);
  }
  return -1;
}

// Entries of /proc/self/fd, without the directory stream's own descriptor.
double open_fds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int count = 0;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;
}

// CPU time, memory and start time from /proc/self/stat.
void append_stat_families(std::string& out) {
  const std::vector<std::string> f = stat_fields();
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  if (f.size() <= 21 || ticks <= 0) return;
  try {
    // proc(5) numbering: utime 14, stime 15, starttime 22, vsize 23, rss 24 (fields[n - 3]).
    process_family(out, "process_cpu_seconds_total", "counter",
                   "Total user and system CPU time spent in seconds.",
                   (std::stod(f[11]) + std::stod(f[12])) / ticks);
    process_family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
                   std::stod(f[20]));
    process_family(out, "process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
                   std::stod(f[21]) * page);
    if (const double boot = boot_time(); boot >= 0) {
      process_family(out, "process_start_time_seconds", "gauge",
                     "Start time of the process since unix epoch in seconds.",
                     boot + std::stod(f[19]) / ticks);
    }
  } catch (const std::exception&) {
    // A stat line this parser does not understand: its families are left out.
  }
}

}  // namespace

void append_process_metrics(std::string& out) {
  append_stat_families(out);
  if (const double fds = open_fds(); fds >= 0) {
    process_family(out, "process_open_fds", "gauge", "Number of open file descriptors.", fds);
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    process_family(out, "process_max_fds", "gauge", "Maximum number of open file descriptors.",
                   static_cast<double>(limit.rlim_cur));
  }
}

}  // namespace fieldbrain::server
