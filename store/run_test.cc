// Run records in both forms: packed (what this build writes: keys without the bits their
// record shares, docs from the record's smallest, each in the fewest bytes) and fixed (format
// 5 and older), read and probed alike.
#include <gtest/gtest.h>

#include <random>

#include "store/run.h"
#include "store/test_util.h"

namespace neardup {
namespace {

struct Map {
  testing::TempDir dir;
  lmdb::Env env = std::move(*lmdb::Env::open(dir.path(), {.map_size = 1ull << 28}));
};

// n entries of the format: keys uniform below 2^key_bits (as the format stores them), docs
// 1..n in random order.
std::vector<Entry> entries_of(RunFormat format, std::size_t n, int key_bits, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Entry> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t key = key_bits == 64 ? rng() : rng() >> (64 - key_bits);
    out[i] = Entry{stored_key(format, key), i + 1};
  }
  std::shuffle(out.begin(), out.end(), rng);  // docs no longer in key order
  std::sort(out.begin(), out.end());
  return out;
}

// Writes the entries as a run in full records: packed by RunWriter, or fixed with the 88-byte
// key of format 5 (as that build wrote them).
lmdb::Dbi write(const Map& map, const std::string& name, RunFormat format,
                const std::vector<Entry>& entries, bool packed) {
  auto txn = lmdb::Txn::begin(map.env, 0);
  auto dbi = *lmdb::Dbi::open(*txn, name, MDB_CREATE);
  RunWriter writer(*txn, dbi, format);
  const std::size_t per = packed ? entries_per_record(format)
                                 : kRecordBytes / fixed_form(format).entry_bytes();
  for (std::size_t at = 0; at < entries.size(); at += per) {
    auto record = std::span(entries).subspan(at, std::min(per, entries.size() - at));
    if (packed) {
      EXPECT_TRUE(writer.write_record(record));
      continue;
    }
    std::string value;
    encode_record(fixed_form(format), record, value);
    char key[kRecordKeyBytes];
    coding::encode_be64(key, record.back().key);
    coding::encode_be64(key + 8, record.back().doc);
    coding::encode_fixed64(key + 16, record_checksum(value.data(), value.size()));
    for (std::size_t j = 0; j < kFences; ++j) {
      coding::encode_fixed32(key + 24 + 4 * j,
                             static_cast<std::uint32_t>(record[fence_position(j, record.size())].key >> 32));
    }
    EXPECT_TRUE(dbi.put(*txn, std::string_view(key, sizeof key), value, MDB_APPEND));
  }
  EXPECT_TRUE(txn->commit());
  return dbi;
}

std::vector<Entry> read_all(const Map& map, lmdb::Dbi dbi, RunFormat format) {
  auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
  auto reader = RunReader::open(*txn, dbi, format);
  EXPECT_TRUE(reader.has_value());
  std::vector<Entry> out;
  while (!reader->done()) {
    out.push_back(reader->current());
    EXPECT_TRUE(reader->next());
  }
  return out;
}

TEST(RunRecords, PackedAndFixedRecordsReadAndProbeAlike) {
  for (RunFormat format : {RunFormat::kWide, RunFormat::kNarrow}) {
    Map map;
    const auto entries = entries_of(format, 40000, 64, 1);
    lmdb::Dbi packed = write(map, "packed", format, entries, true);
    lmdb::Dbi fixed = write(map, "fixed", format, entries, false);
    EXPECT_EQ(read_all(map, packed, format), entries);
    EXPECT_EQ(read_all(map, fixed, format), entries);
    auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
    const RunDirectory p = *RunDirectory::load(*txn, packed, format);
    const RunDirectory f = *RunDirectory::load(*txn, fixed, format);
    ASSERT_FALSE(p.fences.empty());
    ASSERT_FALSE(f.fences.empty());
    for (std::size_t r = 0; r < p.forms.size(); ++r) {
      EXPECT_TRUE(p.forms[r].packed);
      EXPECT_TRUE(p.intact(r));
    }
    for (std::size_t r = 0; r < f.forms.size(); ++r) EXPECT_FALSE(f.forms[r].packed);
    for (auto [lo, hi] : testing::probe_ranges(entries, 3000, 2, 48)) {
      const auto expected = testing::entries_between(entries, format, lo, hi);
      EXPECT_EQ(testing::probe_run(p, lo, hi, entries.size()), expected) << lo;
      EXPECT_EQ(testing::probe_run(f, lo, hi, entries.size()), expected) << lo;
    }
  }
}

// Keys spread over 2^32 of a band key's 40 stored bits and 30,000 documents: every record's
// keys share their top byte (4 bytes a key) and its docs fit in 2 bytes from the smallest.
TEST(RunRecords, PackedRecordsKeepTheBytesTheirEntriesNeed) {
  Map map;
  const auto entries = entries_of(RunFormat::kNarrow, 30000, 56, 3);
  lmdb::Dbi run = write(map, "b/0/1", RunFormat::kNarrow, entries, true);
  auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
  const RunDirectory dir = *RunDirectory::load(*txn, run, RunFormat::kNarrow);
  std::size_t total = 0;
  for (std::size_t r = 0; r < dir.forms.size(); ++r) {
    EXPECT_EQ(dir.forms[r].key_bytes, 4u);
    EXPECT_EQ(dir.forms[r].doc_bytes, 2u);
    EXPECT_EQ(dir.bytes[r], dir.sizes[r] * 6 + RecordForm::kPackedSlack);
    total += dir.sizes[r];
  }
  EXPECT_EQ(total, entries.size());
  // One entry alone: a byte of key, a byte of doc.
  const RecordForm one = packed_form(RunFormat::kNarrow, std::span(entries).first(1));
  EXPECT_EQ(one.key_bytes, 1u);
  EXPECT_EQ(one.doc_bytes, 1u);
  EXPECT_EQ(one.base_doc, entries[0].doc);
}

TEST(RunRecords, AKeyNamingNoFormIsDamage) {
  char key[kPackedRecordKeyBytes] = {};
  key[kRecordKeyBytes + 8] = 6;  // six bytes of a narrow key that stores five
  key[kRecordKeyBytes + 9] = 1;
  RecordForm form;
  EXPECT_FALSE(record_form(RunFormat::kNarrow, std::string_view(key, sizeof key), form));
  EXPECT_TRUE(record_form(RunFormat::kWide, std::string_view(key, sizeof key), form));
  EXPECT_TRUE(form.packed);
  key[kRecordKeyBytes + 9] = 0;  // no doc bytes
  EXPECT_FALSE(record_form(RunFormat::kWide, std::string_view(key, sizeof key), form));
}

}  // namespace
}  // namespace neardup
