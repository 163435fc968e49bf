// Wide band keys (common/sketch.h, store/FORMAT.md "Wide band keys"): a scheme begun by a page
// with upper values bands every page by 32 bits a value, refuses pages without them, and keeps
// them through a reopen; a scheme begun without them keeps the sketch's 16 bits.
#include <gtest/gtest.h>

#include <random>

#include "store/index.h"
#include "store/test_util.h"

namespace neardup {
namespace {

using namespace testing;  // NOLINT(google-build-using-namespace)
using Status = Verdict::Status;

// 128 random upper values, the same for the same seed.
SketchUpper random_upper(std::uint64_t seed) { return random_sketch(seed + 1'000'000); }

// A page of the default design (21 x 2, left to the store) with upper values (none when empty).
IndexItem wide(std::string id, std::uint64_t fingerprint, Sketch sketch, SketchUpper upper,
               std::string scheme = "s-wide") {
  IndexItem item = testing::sketched(std::move(id), fingerprint, std::move(sketch), 0, 0,
                                     kThreshold, std::move(scheme));
  item.page->sketch_upper = std::move(upper);
  return item;
}

constexpr std::uint64_t kFar = ~kA;  // past any k: only the sketch can match

TEST(WideBands, ANewSchemeOfPagesWithUpperValuesFindsCopiesByAll32Bits) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(1);
  const SketchUpper u = random_upper(1);
  // b agrees with a in every 16-bit value but in no upper value: its minima are other shingles'
  // (a chance agreement a narrow key would take for a shared band); c is a's copy.
  SketchUpper other = u;
  for (auto& v : other) v ^= 0x5a5a;
  auto v = apply_or_die(
      *index, {wide("a", kA, s, u), wide("b", kFar, s, other), wide("c", kFar ^ 0xff00, s, u)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].status, Status::kUnique);
  EXPECT_EQ(v[1].status, Status::kUnique);
  EXPECT_EQ(v[2].status, Status::kDuplicate);
  EXPECT_EQ(v[2].matched, "a");
  EXPECT_EQ(v[2].method, Verdict::kMinHash);
  const auto stats = index->stats();
  ASSERT_EQ(stats.schemes.size(), 1u);
  EXPECT_TRUE(stats.schemes[0].wide_bands);
  EXPECT_EQ(stats.schemes[0].bands, kDefaultLsh.bands);
  // The same pages without upper values, in a scheme of their own: narrow keys, b a copy.
  auto narrow =
      apply_or_die(*index, {wide("a", kA, s, {}, "s-narrow"), wide("b", kFar, s, {}, "s-narrow")});
  EXPECT_EQ(narrow[1].status, Status::kDuplicate);
  EXPECT_FALSE(index->stats().schemes[1].wide_bands);
}

TEST(WideBands, AWideSchemeRefusesAPageWithoutUpperValuesAndTheBatchGoesOn) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(2);
  apply_or_die(*index, {wide("a", kA, s, random_upper(2))});
  SketchUpper shorter = random_upper(2);
  shorter.resize(64);
  auto v = apply_or_die(
      *index, {at(wide("b", kFar, s, {}), "p/0", 1), at(wide("x", kFar, s, shorter), "p/0", 2),
               at(wide("c", kFar, s, random_upper(2)), "p/0", 3)});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].status, Status::kDeadLetter);
  EXPECT_NE(v[0].detail.find("scheme s-wide bands its pages by wide keys"), std::string::npos)
      << v[0].detail;
  EXPECT_EQ(v[1].status, Status::kDeadLetter);
  EXPECT_NE(v[1].detail.find("64 upper values for a sketch of 128"), std::string::npos)
      << v[1].detail;
  EXPECT_EQ(v[2].status, Status::kDuplicate);
  EXPECT_EQ(v[2].matched, "a");
  // A lookup is refused alike.
  auto looked = index->lookup(*wide("d", kFar, s, {}).page);
  ASSERT_FALSE(looked.has_value());
  EXPECT_NE(looked.error().message.find("by wide keys"), std::string::npos) << looked.error();
}

TEST(WideBands, ASchemeBegunWithoutUpperValuesKeepsTheSketchs16Bits) {
  TempDir dir;
  auto index = open_or_die(store_config(dir.path()));
  const Sketch s = random_sketch(3);
  SketchUpper upper = random_upper(3);
  // A store's scheme of pages without upper values (as every scheme stored before wide keys):
  // pages that carry them are banded by the 16 bits alone, their upper values not kept.
  apply_or_die(*index, {wide("a", kA, s, {})});
  auto v = apply_or_die(*index, {wide("b", kFar, s, upper)});
  EXPECT_EQ(v[0].status, Status::kDuplicate);
  EXPECT_EQ(v[0].matched, "a");
  EXPECT_FALSE(index->stats().schemes[0].wide_bands);
}

TEST(WideBands, AReopenedStoreRebuildsItsDeltasWideKeysFromWhatItKept) {
  TempDir dir;
  const Sketch s = random_sketch(4);
  const SketchUpper u = random_upper(4);
  {
    auto index = open_or_die(store_config(dir.path()));
    std::vector<IndexItem> pages;
    for (std::uint64_t i = 0; i < 50; ++i) {
      pages.push_back(wide(numbered("p", i), std::mt19937_64(i)(), random_sketch(100 + i),
                           random_upper(100 + i)));
    }
    pages.push_back(wide("a", kA, s, u));
    apply_or_die(*index, std::move(pages));
  }
  auto index = open_or_die(store_config(dir.path()));
  ASSERT_NE(index, nullptr);
  ASSERT_EQ(index->stats().runs, 0u);  // every band entry in the delta
  // The copy is found by its wide keys, rebuilt at open;
  // the same 16 bits with other upper values are not.
  auto copy = index->lookup(*wide("c", kFar, s, u).page);
  ASSERT_TRUE(copy.has_value()) << copy.error();
  EXPECT_EQ(copy->status, Status::kDuplicate);
  EXPECT_EQ(copy->matched, "a");
  SketchUpper other = u;
  for (auto& v : other) v += 1;
  auto chance = index->lookup(*wide("d", kFar, s, other).page);
  ASSERT_TRUE(chance.has_value()) << chance.error();
  EXPECT_EQ(chance->status, Status::kUnique);
  for (std::uint64_t i = 0; i < 50; ++i) {
    auto found =
        index->lookup(*wide("q", kFar, random_sketch(100 + i), random_upper(100 + i)).page);
    ASSERT_TRUE(found.has_value()) << found.error();
    EXPECT_EQ(found->matched, numbered("p", i));
  }
}

}  // namespace
}  // namespace neardup
