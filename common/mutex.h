// Locks the compiler checks (common/thread_annotations.h): a Mutex, a SharedMutex, their scoped
// holders, a condition variable over a Mutex, and ThreadRole, the capability of being one
// particular thread.
//
//   Mutex mutex_;
//   int count_ GUARDED_BY(mutex_);
//   void add() EXCLUDES(mutex_) { MutexLock lock(mutex_); ++count_; }
//
//   ThreadRole consumer_thread_;  // "consumer thread only", checked
//   std::set<PartitionId> assigned_ GUARDED_BY(consumer_thread_);
//   void consume_loop() { ThreadRole::Scope in(consumer_thread_); ... }
//   void rebalance_cb(...) { consumer_thread_.assert_held(); ... }  // a librdkafka callback
//
// These wrap the standard types without changing what they do; only the annotations are new.
#pragma once

#include <atomic>
#include <cassert>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <shared_mutex>
#include <thread>

#include "common/thread_annotations.h"

namespace neardup {

class CAPABILITY("mutex") Mutex {
 public:
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }
  // Tells the analysis that the calling thread holds the mutex (a callback called with it held).
  void assert_held() const ASSERT_CAPABILITY(this) {}

 private:
  friend class CondVar;
  std::mutex mutex_;
};

// Holds a Mutex for its scope (std::lock_guard, annotated).
class SCOPED_CAPABILITY MutexLock {
 public:
  explicit MutexLock(Mutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~MutexLock() RELEASE() { mutex_.unlock(); }
  MutexLock(const MutexLock&) = delete;
  MutexLock& operator=(const MutexLock&) = delete;

 private:
  Mutex& mutex_;
};

// A condition variable whose waits need its Mutex held (std::condition_variable underneath).
class CondVar {
 public:
  void wait(Mutex& mutex) REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    cv_.wait(lock);
    lock.release();
  }
  // False on timeout.
  template <typename Rep, typename Period>
  bool wait_for(Mutex& mutex, std::chrono::duration<Rep, Period> timeout) REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    const bool woken = cv_.wait_for(lock, timeout) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  template <typename Clock, typename Duration>
  bool wait_until(Mutex& mutex, std::chrono::time_point<Clock, Duration> deadline) REQUIRES(mutex) {
    std::unique_lock<std::mutex> lock(mutex.mutex_, std::adopt_lock);
    const bool woken = cv_.wait_until(lock, deadline) == std::cv_status::no_timeout;
    lock.release();
    return woken;
  }
  void notify_one() { cv_.notify_one(); }
  void notify_all() { cv_.notify_all(); }

 private:
  std::condition_variable cv_;
};

// Readers share it, a writer holds it alone (std::shared_mutex, annotated).
class CAPABILITY("shared mutex") SharedMutex {
 public:
  void lock() ACQUIRE() { mutex_.lock(); }
  void unlock() RELEASE() { mutex_.unlock(); }
  bool try_lock() TRY_ACQUIRE(true) { return mutex_.try_lock(); }
  void lock_shared() ACQUIRE_SHARED() { mutex_.lock_shared(); }
  void unlock_shared() RELEASE_SHARED() { mutex_.unlock_shared(); }

 private:
  std::shared_mutex mutex_;
};

class SCOPED_CAPABILITY SharedLock {
 public:
  explicit SharedLock(SharedMutex& mutex) ACQUIRE_SHARED(mutex) : mutex_(mutex) {
    mutex_.lock_shared();
  }
  ~SharedLock() RELEASE() { mutex_.unlock_shared(); }
  SharedLock(const SharedLock&) = delete;
  SharedLock& operator=(const SharedLock&) = delete;

 private:
  SharedMutex& mutex_;
};

class SCOPED_CAPABILITY ExclusiveLock {
 public:
  explicit ExclusiveLock(SharedMutex& mutex) ACQUIRE(mutex) : mutex_(mutex) { mutex_.lock(); }
  ~ExclusiveLock() RELEASE() { mutex_.unlock(); }
  ExclusiveLock(const ExclusiveLock&) = delete;
  ExclusiveLock& operator=(const ExclusiveLock&) = delete;

 private:
  SharedMutex& mutex_;
};

// Being one particular thread, as a capability: state that a single thread owns is
// GUARDED_BY its role, and the functions that touch it REQUIRES it. The thread takes the role
// where it starts (Scope); code called on it from elsewhere (a library callback) asserts it.
// Both check at run time, in builds with assertions, that it is the role's thread.
class CAPABILITY("thread role") ThreadRole {
 public:
  // Held for the scope by the calling thread, which becomes the role's thread.
  class SCOPED_CAPABILITY Scope {
   public:
    explicit Scope(ThreadRole& role) ACQUIRE(role) : role_(role) { role_.enter(); }
    ~Scope() RELEASE() { role_.leave(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    ThreadRole& role_;
  };

  // The calling thread is the role's thread (or no thread holds the role: set-up and
  // tear-down, before and after the thread runs).
  void assert_held() const ASSERT_CAPABILITY(this) {
    [[maybe_unused]] const std::thread::id holder = holder_.load(std::memory_order_relaxed);
    assert(holder == std::thread::id() || holder == std::this_thread::get_id());
  }

 private:
  void enter() ACQUIRE() { holder_.store(std::this_thread::get_id(), std::memory_order_relaxed); }
  void leave() RELEASE() { holder_.store(std::thread::id(), std::memory_order_relaxed); }

  std::atomic<std::thread::id> holder_{};
};

}  // namespace neardup
