// Run records in every form: Elias–Fano (what this build writes: keys coded by their
// distances), bit-packed (what format 8 wrote for every run, and format 9 at first for wide
// ones: keys without the bits their record shares, docs from the record's smallest, each in the
// fewest bits), byte-packed (formats 6 and 7) and fixed (format 5 and older), read and probed
// alike.
#include "store/run.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <numeric>
#include <random>

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

enum class Form { kWritten, kBitPacked, kBytePacked, kFixed };

// Writes the entries as a run: by RunWriter, or in the forms earlier builds wrote: bit-packed
// with the 102-byte key of format 8, byte-packed with the 98-byte key of formats 6 and 7, fixed
// with the 88-byte key of format 5 (full records).
lmdb::Dbi write(const Map& map, const std::string& name, RunFormat format,
                const std::vector<Entry>& entries, Form form) {
  auto txn = lmdb::Txn::begin(map.env, 0);
  auto dbi = *lmdb::Dbi::open(*txn, name, MDB_CREATE);
  RunWriter writer(*txn, dbi, format);
  if (form == Form::kWritten) {
    testing::write_records(writer, entries);
    EXPECT_TRUE(txn->commit());
    return dbi;
  }
  const bool bits = form == Form::kBitPacked, bytes = form == Form::kBytePacked;
  const std::size_t per =
      bytes ? (kRecordBytes - RecordForm::kPackedSlack) / (format == RunFormat::kWide ? 11 : 7)
            : kRecordBytes / (2 * fixed_form(format).key_bits / 8);
  for (std::size_t at = 0; at < entries.size();) {
    const auto rest = std::span(entries).subspan(at);
    const RecordForm f = bits    ? packed_form(format, rest)
                         : bytes ? byte_packed_form(format, rest.first(std::min(per, rest.size())))
                                 : fixed_form(format);
    const auto record = rest.first(bits ? f.count : std::min(per, rest.size()));
    std::string value;
    encode_record(f, record, value);
    char key[kBitPackedRecordKeyBytes];
    coding::encode_be64(key, record.back().key);
    coding::encode_be64(key + 8, record.back().doc);
    coding::encode_fixed64(key + 16, record_checksum(value.data(), value.size()));
    for (std::size_t j = 0; j < kFences; ++j) {
      coding::encode_fixed32(
          key + 24 + 4 * j,
          static_cast<std::uint32_t>(record[fence_position(j, record.size())].key >> 32));
    }
    coding::encode_fixed64(key + kRecordKeyBytes, f.base_doc);
    const int unit = bits ? 1 : 8;  // byte-packed keys give widths in bytes
    key[kRecordKeyBytes + 8] = static_cast<char>(f.key_bits / unit);
    key[kRecordKeyBytes + 9] = static_cast<char>(f.doc_bits / unit);
    coding::encode_fixed32(key + kRecordKeyBytes + 10, f.count);
    const std::size_t key_size = bits    ? kBitPackedRecordKeyBytes
                                 : bytes ? kPackedRecordKeyBytes
                                         : kRecordKeyBytes;
    EXPECT_TRUE(dbi.put(*txn, std::string_view(key, key_size), value, MDB_APPEND));
    at += record.size();
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

TEST(RunRecords, EveryFormReadsAndProbesAlike) {
  for (RunFormat format : {RunFormat::kWide, RunFormat::kNarrow}) {
    Map map;
    const auto entries = entries_of(format, 40000, 64, 1);
    for (Form form : {Form::kWritten, Form::kBitPacked, Form::kBytePacked, Form::kFixed}) {
      const std::string name = "run" + std::to_string(static_cast<int>(form));
      lmdb::Dbi dbi = write(map, name, format, entries, form);
      EXPECT_EQ(read_all(map, dbi, format), entries) << name;
      auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
      const RunDirectory dir = *RunDirectory::load(*txn, dbi, format);
      ASSERT_FALSE(dir.fences.empty());
      for (std::size_t r = 0; r < dir.forms.size(); ++r) {
        EXPECT_EQ(dir.forms[r].packed, form != Form::kFixed);
        EXPECT_EQ(dir.forms[r].count != 0, form == Form::kWritten || form == Form::kBitPacked);
        EXPECT_EQ(dir.forms[r].elias_fano, form == Form::kWritten);
        EXPECT_TRUE(dir.intact(r));
      }
      RunDirectory unfenced = dir;  // as a run written before fences is probed
      unfenced.fences.clear();
      for (auto [lo, hi] : testing::probe_ranges(entries, 3000, 2, 48)) {
        const auto expected = testing::entries_between(entries, format, lo, hi);
        EXPECT_EQ(testing::probe_run(dir, lo, hi, entries.size()), expected) << name << " " << lo;
        EXPECT_EQ(testing::probe_run(unfenced, lo, hi, entries.size()), expected)
            << name << " " << lo;
      }
    }
  }
}

// Short runs (table and `ids` columns of format 11 and later) keep a key's top 40 to 63 bits and
// its u64 doc, Elias–Fano only: every width reads back and probes as the keys it kept.
TEST(RunRecords, ShortRunsOfEveryWidthReadAndProbeAsTheirKeptBits) {
  for (std::uint32_t kept : {40u, 46u, 50u, 63u}) {
    const RunFormat format = RunFormat::keeping(kept);
    ASSERT_EQ(format.kept_bits(), kept);
    Map map;
    auto entries = entries_of(format, 30000, 64, kept);
    for (Entry& e : entries) e.doc = (e.doc << 30) + 7;  // docs past 2^40
    std::sort(entries.begin(), entries.end());
    const std::string name = "t/0/" + std::to_string(kept);
    lmdb::Dbi dbi = write(map, name, format, entries, Form::kWritten);
    EXPECT_EQ(read_all(map, dbi, format), entries) << kept;
    auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
    const RunDirectory dir = *RunDirectory::load(*txn, dbi, format);
    for (std::size_t r = 0; r < dir.forms.size(); ++r) {
      EXPECT_TRUE(dir.forms[r].elias_fano);
      EXPECT_EQ(dir.forms[r].shift, 64 - kept);
      EXPECT_TRUE(dir.intact(r));
    }
    for (auto [lo, hi] : testing::probe_ranges(entries, 3000, 2, 48)) {
      EXPECT_EQ(testing::probe_run(dir, lo, hi, entries.size()),
                testing::entries_between(entries, format, lo, hi))
          << kept << " " << lo;
    }
    // A key's dropped bits never tell it from its kept ones.
    const std::uint64_t any = entries[entries.size() / 2].key;
    EXPECT_EQ(stored_key(format, any | format.dropped_mask()), any);
    EXPECT_EQ(stored_key_end(format, any), any | format.dropped_mask());
  }
}

// A table's probe of a prefix bucket through finish_near() gives every entry of the range within
// k bits of the query, as finish() followed by the comparison does, and counts the range's entries.
TEST(RunRecords, ANearProbeFindsEveryEntryWithinKOfTheQuery) {
  std::mt19937_64 rng(8);
  for (std::uint32_t kept : {40u, 44u, 64u}) {
    const RunFormat format = kept == 64 ? RunFormat::kWide : RunFormat::keeping(kept);
    Map map;
    auto entries = entries_of(format, 60000, 64, kept);
    // Copies of some keys a few bits apart, so that the buckets hold neighbours.
    for (std::size_t i = 0; i < 3000; ++i) {
      Entry e = entries[rng() % entries.size()];
      e.key ^= std::uint64_t{1} << (64 - kept + rng() % (kept - 12));
      e.doc = 1'000'000 + i;
      entries.push_back(e);
    }
    std::sort(entries.begin(), entries.end());
    lmdb::Dbi dbi = write(map, "t/0/" + std::to_string(kept), format, entries, Form::kWritten);
    auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
    const RunDirectory dir = *RunDirectory::load(*txn, dbi, format);
    const double gap = std::ldexp(1.0, 64) / static_cast<double>(entries.size());
    std::uint64_t total_scanned = 0, total_in_range = 0, passed = 0;
    for (int probe = 0; probe < 2000; ++probe) {
      const std::uint64_t near = entries[rng() % entries.size()].key;
      // Near a stored key, or at it, in the key space with the dropped bits 0 (as a table's).
      const std::uint64_t query =
          stored_key(format, near ^ (rng() % 8 == 0 ? 0 : rng() & rng() & rng()));
      // A 12-bit prefix's range: about 15 entries, as a table's bucket holds tens to thousands.
      const std::uint64_t bucket = (std::uint64_t{1} << 52) - 1;
      const std::uint64_t lo = query & ~bucket, hi = lo | bucket;
      for (int k : {0, 3}) {
        std::vector<Entry> want;
        std::size_t in_range = 0;
        RunProbe all(dir, lo, hi, gap);
        all.start();
        all.finish([&](std::uint64_t key, auto doc) {
          ++in_range;
          if (std::popcount(key ^ query) <= k) want.push_back({key, doc()});
        });
        std::vector<Entry> got;
        RunProbe near_probe(dir, lo, hi, gap);
        near_probe.start();
        const std::uint64_t scanned =
            near_probe.finish_near(query, k, [&](std::uint64_t key, auto doc) {
              if (std::popcount(key ^ query) <= k) got.push_back({key, doc()});
            });
        EXPECT_EQ(got, want) << kept << " " << probe;
        EXPECT_GE(scanned, in_range) << kept << " " << probe;
        total_scanned += scanned;
        total_in_range += in_range;
        passed += want.size();
      }
    }
    // Counted from the first entry of the range's first high part: a few more than the range.
    EXPECT_LE(total_scanned, total_in_range + total_in_range / 10) << kept;
    EXPECT_GT(passed, 500u) << kept;  // neighbours found, not only the keys themselves
  }
}

// Keys spread over 2^32 of a band key's 40 stored bits and 30,000 documents: each record keeps
// the bits its keys and docs need (about 30 + 15), as many entries as fit in a record, where the
// byte-packed form spent 4 + 2 bytes.
TEST(RunRecords, BitPackedRecordsKeepTheBitsTheirEntriesNeed) {
  Map map;
  const auto entries = entries_of(RunFormat::kNarrow, 30000, 56, 3);
  lmdb::Dbi run = write(map, "b/0/1", RunFormat::kNarrow, entries, Form::kBitPacked);  // format 8
  auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
  const RunDirectory dir = *RunDirectory::load(*txn, run, RunFormat::kNarrow);
  ASSERT_GE(dir.forms.size(), 2u);
  std::size_t total = 0;
  for (std::size_t r = 0; r < dir.forms.size(); ++r) {
    const RecordForm& form = dir.forms[r];
    std::vector<Entry> decoded(dir.sizes[r]);
    dir.decode(r, decoded);
    std::uint64_t low = decoded[0].doc, high = low;
    for (const Entry& e : decoded) {
      low = std::min(low, e.doc);
      high = std::max(high, e.doc);
    }
    const auto first = decoded.front().key >> kNarrowDroppedBits;
    const auto last = decoded.back().key >> kNarrowDroppedBits;
    EXPECT_EQ(form.key_bits, std::bit_width(first ^ last));
    EXPECT_EQ(form.doc_bits, std::bit_width(high - low));
    EXPECT_EQ(form.doc_bits, 15);
    EXPECT_LE(form.key_bits, 32);
    EXPECT_EQ(dir.bytes[r], form.value_bytes(dir.sizes[r]));
    EXPECT_LE(dir.bytes[r], kRecordBytes);
    // Full: one entry more would not have fit (the last record excepted).
    if (r + 1 < dir.forms.size()) {
      EXPECT_GT(form.value_bytes(dir.sizes[r] + 1), kRecordBytes);
    }
    total += dir.sizes[r];
  }
  EXPECT_EQ(total, entries.size());
  // At most 47 bits an entry (about 31 + 15), where byte-packed records spend 48 (4 + 2 bytes).
  const std::size_t bytes = std::accumulate(dir.bytes.begin(), dir.bytes.end(), std::size_t{0});
  EXPECT_LE(bytes, entries.size() * 47 / 8 + 9 * dir.bytes.size());
  // One entry alone: a bit of key, a bit of doc.
  const RecordForm one = packed_form(RunFormat::kNarrow, std::span(entries).first(1));
  EXPECT_EQ(one.key_bits, 1u);
  EXPECT_EQ(one.doc_bits, 1u);
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.base_doc, entries[0].doc);
  // Widths past 56 bits are whole u64s (wide keys of a small run).
  const auto wide = entries_of(RunFormat::kWide, 100, 64, 4);
  EXPECT_EQ(packed_form(RunFormat::kWide, wide).key_bits, 64u);
}

TEST(RunRecords, AKeyNamingNoFormIsDamage) {
  char key[kBitPackedRecordKeyBytes] = {};
  const std::string_view byte_packed(key, kPackedRecordKeyBytes), bit_packed(key, sizeof key);
  key[kRecordKeyBytes + 8] = 6;  // six bytes of a narrow key that stores five
  key[kRecordKeyBytes + 9] = 1;
  RecordForm form;
  EXPECT_FALSE(record_form(RunFormat::kNarrow, byte_packed, form));
  EXPECT_TRUE(record_form(RunFormat::kWide, byte_packed, form));
  EXPECT_TRUE(form.packed);
  EXPECT_EQ(form.key_bits, 48u);
  key[kRecordKeyBytes + 9] = 0;  // no doc bytes
  EXPECT_FALSE(record_form(RunFormat::kWide, byte_packed, form));

  coding::encode_fixed32(key + kRecordKeyBytes + 10, 100);  // entries
  key[kRecordKeyBytes + 8] = 40;
  key[kRecordKeyBytes + 9] = 22;
  EXPECT_TRUE(record_form(RunFormat::kNarrow, bit_packed, form));
  EXPECT_EQ(form.count, 100u);
  EXPECT_EQ(form.value_bytes(100), 500u + 275u + 8u);
  key[kRecordKeyBytes + 8] = 41;  // more bits than a narrow key stores
  EXPECT_FALSE(record_form(RunFormat::kNarrow, bit_packed, form));
  EXPECT_TRUE(record_form(RunFormat::kWide, bit_packed, form));
  key[kRecordKeyBytes + 9] = 60;  // no such width (57-63 do not fit a load)
  EXPECT_FALSE(record_form(RunFormat::kWide, bit_packed, form));
  key[kRecordKeyBytes + 9] = 64;
  EXPECT_TRUE(record_form(RunFormat::kWide, bit_packed, form));
  coding::encode_fixed32(key + kRecordKeyBytes + 10, 0);  // no entries
  EXPECT_FALSE(record_form(RunFormat::kWide, bit_packed, form));

  // Elias–Fano: the first key (after the count) at most the last; low bits that a narrow key
  // has; a high part that fits the count's value.
  char ef[kEliasFanoRecordKeyBytes] = {};
  const std::string_view elias_fano(ef, sizeof ef);
  coding::encode_be64(ef, std::uint64_t{5000} << kNarrowDroppedBits);  // the last key
  coding::encode_fixed32(ef + kRecordKeyBytes + 10, 100);
  coding::encode_fixed64(ef + kBitPackedRecordKeyBytes, 1000);  // the first key
  ef[kRecordKeyBytes + 8] = 5;
  ef[kRecordKeyBytes + 9] = 10;
  ASSERT_TRUE(record_form(RunFormat::kNarrow, elias_fano, form));
  EXPECT_TRUE(form.elias_fano);
  EXPECT_EQ(form.prefix, 1000u);
  EXPECT_EQ(form.high_bits, 100u + 4000u / 32);
  EXPECT_EQ(form.value_bytes(100), (500u + 7) / 8 + (225u + 7) / 8 + 125u + 8u);
  ef[kRecordKeyBytes + 8] = 41;
  EXPECT_FALSE(record_form(RunFormat::kNarrow, elias_fano, form));
  ef[kRecordKeyBytes + 8] = 0;  // no low bits: 4,100 bits of high part
  EXPECT_TRUE(record_form(RunFormat::kNarrow, elias_fano, form));
  coding::encode_fixed64(ef + kBitPackedRecordKeyBytes, 5001);  // first after last
  EXPECT_FALSE(record_form(RunFormat::kNarrow, elias_fano, form));
}

// Narrow keys spread over 2^32 of a band key's 40 stored bits (30,000 documents): an
// Elias–Fano record spends about two bits above log2(spread / entries) on a key (where the
// bit-packed one kept the 30 bits its keys differ in), takes as many entries as fit, and is
// probed alike with repeated keys (one band key of many documents) and a single key.
TEST(RunRecords, EliasFanoRecordsSpendAboutTwoBitsAKeyAboveTheirSpacing) {
  Map map;
  auto entries = entries_of(RunFormat::kNarrow, 30000, 56, 3);
  lmdb::Dbi run = write(map, "b/0/1", RunFormat::kNarrow, entries, Form::kWritten);
  auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
  const RunDirectory dir = *RunDirectory::load(*txn, run, RunFormat::kNarrow);
  ASSERT_GE(dir.forms.size(), 2u);
  std::size_t total = 0, at = 0;
  for (std::size_t r = 0; r < dir.forms.size(); ++r) {
    const RecordForm& form = dir.forms[r];
    const std::size_t n = dir.sizes[r];
    ASSERT_TRUE(form.elias_fano);
    const std::uint64_t first = entries[at].key >> kNarrowDroppedBits;
    const std::uint64_t span = (entries[at + n - 1].key >> kNarrowDroppedBits) - first;
    EXPECT_EQ(form.prefix, first);
    EXPECT_EQ(form.key_bits, elias_fano::low_bits_for(n, span));
    EXPECT_EQ(form.high_bits, n + (span >> form.key_bits));
    EXPECT_LE(form.key_bits, std::log2(static_cast<double>(span) / n) + 1);
    EXPECT_EQ(dir.bytes[r], form.value_bytes(n));
    if (r + 1 < dir.forms.size()) {  // full: the next entry would not have fit
      EXPECT_GT(elias_fano_form(RunFormat::kNarrow, std::span(entries).subspan(at, n + 1))
                    .value_bytes(n + 1),
                kRecordBytes);
    }
    total += n;
    at += n;
  }
  EXPECT_EQ(total, entries.size());
  // Keys of 2^32 / 30,000 ≈ 2^17 apart: about 17 + 2 bits a key, 15 a doc.
  const std::size_t bytes = std::accumulate(dir.bytes.begin(), dir.bytes.end(), std::size_t{0});
  EXPECT_LE(bytes, entries.size() * 35 / 8 + 9 * dir.bytes.size());

  // Repeated keys (every fifth document shares its key with the next four), then one key.
  for (auto& e : entries)
    e.key = stored_key(RunFormat::kNarrow, entries[(&e - entries.data()) / 5 * 5].key);
  std::sort(entries.begin(), entries.end());
  std::vector<Entry> single(300, Entry{std::uint64_t{7} << kNarrowDroppedBits, 0});
  for (std::size_t i = 0; i < single.size(); ++i) single[i].doc = 10 + 3 * i;
  txn->abort();
  for (const auto* set : {&entries, &single}) {
    lmdb::Dbi dbi =
        write(map, "b/0/" + std::to_string(set->size()), RunFormat::kNarrow, *set, Form::kWritten);
    EXPECT_EQ(read_all(map, dbi, RunFormat::kNarrow), *set);
    auto read = lmdb::Txn::begin(map.env, MDB_RDONLY);
    const RunDirectory d = *RunDirectory::load(*read, dbi, RunFormat::kNarrow);
    for (auto [lo, hi] : testing::probe_ranges(*set, 2000, 5, 30)) {
      EXPECT_EQ(testing::probe_run(d, lo, hi, set->size()),
                testing::entries_between(*set, RunFormat::kNarrow, lo, hi))
          << lo;
    }
    const std::uint64_t key = set->front().key;
    EXPECT_EQ(testing::probe_run(d, key, key, set->size()),
              testing::entries_between(*set, RunFormat::kNarrow, key, key));
  }
}

// Wide keys (permuted fingerprints, id hashes: uniform over 64 bits) of 40,000 entries: an
// Elias–Fano record spends about two bits above log2(2^64 / entries) on a key, where a
// bit-packed record of the same entries keeps every bit below the few its keys share (about 12
// bits more a key).
TEST(RunRecords, WideEliasFanoRecordsSpendAboutTwoBitsAKeyAboveTheirSpacing) {
  Map map;
  const auto entries = entries_of(RunFormat::kWide, 40000, 64, 5);
  const lmdb::Dbi ef = write(map, "t/0/0/1", RunFormat::kWide, entries, Form::kWritten);
  const lmdb::Dbi bits = write(map, "t/0/0/2", RunFormat::kWide, entries, Form::kBitPacked);
  auto txn = lmdb::Txn::begin(map.env, MDB_RDONLY);
  const RunDirectory a = *RunDirectory::load(*txn, ef, RunFormat::kWide);
  const RunDirectory b = *RunDirectory::load(*txn, bits, RunFormat::kWide);
  auto total = [](const RunDirectory& d) {
    return std::accumulate(d.bytes.begin(), d.bytes.end(), std::size_t{0});
  };
  const double spacing = std::log2(std::pow(2.0, 64) / static_cast<double>(entries.size()));
  std::size_t at = 0;
  for (std::size_t r = 0; r < a.forms.size(); ++r) {
    ASSERT_TRUE(a.forms[r].elias_fano);
    EXPECT_EQ(a.forms[r].prefix, entries[at].key);
    // The low parts: log2 of the record's own spacing, which is the run's (keys are uniform).
    EXPECT_NEAR(a.forms[r].key_bits, spacing, 1.5) << r;
    at += a.sizes[r];
  }
  EXPECT_EQ(at, entries.size());
  // Docs take 16 bits in both; keys about 51 against 63.
  EXPECT_LE(total(a) * 8,
            entries.size() * (static_cast<std::size_t>(spacing) + 3 + 16) + 64 * a.bytes.size());
  EXPECT_LE(total(a) * 100, total(b) * 87);
  txn->abort();
  EXPECT_EQ(read_all(map, ef, RunFormat::kWide), entries);
}

}  // namespace
}  // namespace neardup
