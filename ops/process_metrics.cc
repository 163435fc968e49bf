// The process_* series (Prometheus client library conventions, "process metrics"), from
// /proc/self on Linux, as families for MetricsRegistry's text (prometheus-cpp has no process
// collector of its own).
#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ops/metrics.h"

namespace neardup::ops {
namespace {

// A family of one sample without labels.
void append_family(std::vector<prometheus::MetricFamily>& out, std::string name,
                   prometheus::MetricType type, std::string help, double value) {
  prometheus::ClientMetric sample;
  if (type == prometheus::MetricType::Counter) {
    sample.counter.value = value;
  } else {
    sample.gauge.value = value;
  }
  out.push_back(prometheus::MetricFamily{
      .name = std::move(name), .help = std::move(help), .type = type, .metric = {sample}});
}

// The fields of /proc/self/stat after the command name, numbered as in proc(5) from 3 (state).
std::vector<std::string> stat_fields() {
  std::ifstream in("/proc/self/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::string> fields;
  auto close = text.rfind(')');
  if (close == std::string::npos) return fields;
  std::istringstream rest(text.substr(close + 1));
  for (std::string field; rest >> field;) fields.push_back(field);
  return fields;
}

// Seconds since the epoch at boot (/proc/stat "btime"), or -1.
double boot_time() {
  std::ifstream in("/proc/stat");
  for (std::string key; in >> key;) {
    if (key == "btime") {
      double value = -1;
      in >> value;
      return value;
    }
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return -1;
}

double open_fds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (!dir) return -1;
  double count = 0;
  while (const dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  ::closedir(dir);
  return count - 1;  // the directory handle itself
}

}  // namespace

void collect_process_metrics(std::vector<prometheus::MetricFamily>& out) {
  using prometheus::MetricType;
  const double ticks = static_cast<double>(::sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(::sysconf(_SC_PAGESIZE));
  const std::vector<std::string> f = stat_fields();
  // proc(5) numbering: utime 14, stime 15, num_threads 20, starttime 22, vsize 23, rss 24;
  // f[0] is field 3.
  auto field = [&](int number) { return std::stod(f.at(static_cast<std::size_t>(number - 3))); };
  if (f.size() >= 22 && ticks > 0) {
    append_family(out, "process_cpu_seconds_total", MetricType::Counter,
                  "Total user and system CPU time spent in seconds.",
                  (field(14) + field(15)) / ticks);
    append_family(out, "process_resident_memory_bytes", MetricType::Gauge,
                  "Resident memory size in bytes.", field(24) * page);
    append_family(out, "process_virtual_memory_bytes", MetricType::Gauge,
                  "Virtual memory size in bytes.", field(23));
    if (double boot = boot_time(); boot >= 0) {
      append_family(out, "process_start_time_seconds", MetricType::Gauge,
                    "Start time of the process since unix epoch in seconds.",
                    boot + field(22) / ticks);
    }
    append_family(out, "process_threads", MetricType::Gauge, "Number of OS threads in the process.",
                  field(20));
  }
  if (double fds = open_fds(); fds >= 0) {
    append_family(out, "process_open_fds", MetricType::Gauge, "Number of open file descriptors.",
                  fds);
  }
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    append_family(out, "process_max_fds", MetricType::Gauge,
                  "Maximum number of open file descriptors.", static_cast<double>(limit.rlim_cur));
  }
}

}  // namespace neardup::ops
