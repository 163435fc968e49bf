// Clang's thread-safety analysis (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html), as
// LevelDB's port/thread_annotations.h and Abseil spell it. State shared between threads says
// which capability guards it, and functions say which capabilities they need; with clang,
// -Wthread-safety (on in every clang build, an error with -Werror) rejects an access without
// it. Other compilers see nothing.
//
//   class Queue {
//     void push(Item item) EXCLUDES(mutex_);
//     void pop_locked() REQUIRES(mutex_);
//     Mutex mutex_;
//     std::deque<Item> items_ GUARDED_BY(mutex_);
//   };
//
// A capability need not be a mutex: common/mutex.h's ThreadRole stands for "the consumer
// thread" or "the index thread", state that only one thread touches.
#pragma once

#if defined(__clang__)
#define NEARDUP_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define NEARDUP_THREAD_ANNOTATION(x)
#endif

#define CAPABILITY(x) NEARDUP_THREAD_ANNOTATION(capability(x))
#define SCOPED_CAPABILITY NEARDUP_THREAD_ANNOTATION(scoped_lockable)
#define GUARDED_BY(x) NEARDUP_THREAD_ANNOTATION(guarded_by(x))
#define PT_GUARDED_BY(x) NEARDUP_THREAD_ANNOTATION(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) NEARDUP_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) NEARDUP_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))
#define REQUIRES(...) NEARDUP_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) NEARDUP_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))
#define ACQUIRE(...) NEARDUP_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) NEARDUP_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) NEARDUP_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) NEARDUP_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
#define RELEASE_GENERIC(...) NEARDUP_THREAD_ANNOTATION(release_generic_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) NEARDUP_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) NEARDUP_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) NEARDUP_THREAD_ANNOTATION(assert_capability(x))
#define RETURN_CAPABILITY(x) NEARDUP_THREAD_ANNOTATION(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS NEARDUP_THREAD_ANNOTATION(no_thread_safety_analysis)
