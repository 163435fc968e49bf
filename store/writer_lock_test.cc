#include "store/writer_lock.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "store/index.h"
#include "store/test_util.h"

namespace neardup {
namespace {

using testing::page;
using testing::store_config;
using testing::TempDir;

// A child process that opens the store for writing, applies a page, reports through a pipe
// and holds the store until the parent closes the other pipe. Returns its pid.
pid_t hold_in_child(const StoreConfig& config, int& release_fd, int& ready_fd) {
  int ready[2], release[2];
  EXPECT_EQ(pipe(ready), 0);
  EXPECT_EQ(pipe(release), 0);
  const pid_t pid = fork();
  if (pid == 0) {
    close(ready[0]);
    close(release[1]);
    auto index = Index::open(config);
    const IndexItem item = page("child", 0x1234);
    const char status = index && (*index)->apply({&item, 1}) ? 'y' : 'n';
    if (write(ready[1], &status, 1) != 1) _exit(2);
    char byte;
    while (read(release[0], &byte, 1) > 0) {
    }
    _exit(0);
  }
  close(ready[1]);
  close(release[0]);
  release_fd = release[1];
  ready_fd = ready[0];
  return pid;
}

TEST(WriterLock, ASecondWriterInAnotherProcessFailsNamingTheStoreAndTheHoldersPid) {
  TempDir dir;
  const StoreConfig config = store_config(dir.path());
  int release_fd = -1, ready_fd = -1;
  const pid_t child = hold_in_child(config, release_fd, ready_fd);
  char status = 0;
  ASSERT_EQ(read(ready_fd, &status, 1), 1);
  ASSERT_EQ(status, 'y');

  auto second = Index::open(config);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, StoreError::Code::kLocked);
  EXPECT_NE(second.error().message.find(dir.path()), std::string::npos) << second.error();
  EXPECT_NE(second.error().message.find("pid " + std::to_string(child)), std::string::npos)
      << second.error();

  // Read-only opens take no lock: they work beside the writer and see its pages.
  auto reader = Index::open(config, {.read_only = true});
  ASSERT_TRUE(reader.has_value()) << reader.error();
  EXPECT_EQ((*reader)->stats().documents, 1u);

  close(release_fd);  // the child exits, and with it the lock
  int wait_status = 0;
  ASSERT_EQ(waitpid(child, &wait_status, 0), child);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0);
  close(ready_fd);
  auto after = Index::open(config);
  ASSERT_TRUE(after.has_value()) << after.error();
  EXPECT_EQ((*after)->stats().documents, 1u);
}

TEST(WriterLock, TwoOpensInOneProcessConflictBecauseTheLockBelongsToTheOpenFile) {
  TempDir dir;
  const StoreConfig config = store_config(dir.path());
  auto first = Index::open(config);
  ASSERT_TRUE(first.has_value()) << first.error();
  auto second = Index::open(config);
  ASSERT_FALSE(second.has_value());
  EXPECT_EQ(second.error().code, StoreError::Code::kLocked);
  EXPECT_NE(second.error().message.find("pid " + std::to_string(getpid())), std::string::npos)
      << second.error();
  first->reset();  // closing the writer releases the lock
  auto third = Index::open(config);
  EXPECT_TRUE(third.has_value()) << third.error();
}

TEST(WriterLock, TheLockFileHoldsTheWritersPid) {
  TempDir dir;
  auto lock = WriterLock::acquire(dir.path());
  ASSERT_TRUE(lock.has_value()) << lock.error();
  EXPECT_TRUE(lock->held());
  std::FILE* file = std::fopen((dir.path() + "/lock").c_str(), "r");
  ASSERT_NE(file, nullptr);
  long pid = 0;
  EXPECT_EQ(std::fscanf(file, "%ld", &pid), 1);
  std::fclose(file);
  EXPECT_EQ(pid, static_cast<long>(getpid()));
}

// A store was once created world-readable outside systemd (files 0644, directory 0755): page
// ids and URLs are not for every local user.
TEST(WriterLock, AStoreIsCreatedReadableByItsOwnerAndGroupOnly) {
  TempDir dir;
  StoreConfig config = store_config(dir.path() + "/a/store");
  const mode_t old_mask = ::umask(022);
  auto index = Index::open(config);
  ::umask(old_mask);
  ASSERT_TRUE(index.has_value()) << index.error();
  auto mode_of = [](const std::string& path) {
    struct stat st {};
    EXPECT_EQ(::stat(path.c_str(), &st), 0) << path;
    return st.st_mode & 0777;
  };
  EXPECT_EQ(mode_of(config.path), 0750u);
  for (const char* file : {"data.mdb", "lock.mdb", "lock"}) {
    EXPECT_EQ(mode_of(config.path + "/" + file), 0640u) << file;
  }
  // Also a relative path of one component (no parent to create).
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir.path());
  auto relative = Index::open(store_config("relative"));
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(relative.has_value()) << relative.error();
  EXPECT_EQ(mode_of(dir.path() + "/relative"), 0750u);
  // A directory that exists already keeps its mode.
  (*index).reset();
  ASSERT_EQ(::chmod(config.path.c_str(), 0700), 0);
  auto again = Index::open(config);
  ASSERT_TRUE(again.has_value()) << again.error();
  EXPECT_EQ(mode_of(config.path), 0700u);
}

}  // namespace
}  // namespace neardup
