#include "common/thread_name.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <string>
#include <string_view>
#include <thread>

namespace neardup {
namespace {

std::string this_thread_name() {
  char name[16] = {};
  pthread_getname_np(pthread_self(), name, sizeof name);
  return name;
}

// The name a new thread reads back after naming itself `name`.
std::string name_read_back(std::string_view name) {
  std::string seen;
  std::thread([&] {
    name_this_thread(name);
    seen = this_thread_name();
  }).join();
  return seen;
}

TEST(NameThisThread, TheThreadCarriesTheName) { EXPECT_EQ(name_read_back("nd:work"), "nd:work"); }

TEST(NameThisThread, ALongNameIsCutToFifteenBytes) {
  EXPECT_EQ(name_read_back("nd:a-name-longer-than-fifteen"), "nd:a-name-longe");
}

TEST(NameThisThread, OtherThreadsKeepTheirNames) {
  const std::string before = this_thread_name();
  std::thread([] { name_this_thread("nd:other"); }).join();
  EXPECT_EQ(this_thread_name(), before);
}

}  // namespace
}  // namespace neardup
