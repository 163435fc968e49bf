// Names the calling thread, as `top -H`, `ps -L`, `perf` and /proc/PID/task/TID/comm show it.
//
// Linux keeps at most 15 bytes of a thread's name: a longer name is cut to its first 15. The
// name is a label for people and tools; a failure to set it changes nothing else and is
// ignored.
#pragma once

#include <pthread.h>

#include <string>
#include <string_view>

namespace neardup {

inline void name_this_thread(std::string_view name) {
  const std::string shortened(name.substr(0, 15));
  pthread_setname_np(pthread_self(), shortened.c_str());
}

}  // namespace neardup
