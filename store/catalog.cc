#include "store/catalog.h"

#include <algorithm>
#include <bit>
#include <chrono>

namespace neardup {

bool is_live(const records::DocRecord& record, std::uint64_t retention_seconds,
             std::int64_t now_ms) {
  using records::DocRecord;
  if (record.flags & (DocRecord::kSuperseded | DocRecord::kForgotten)) return false;
  return retention_seconds == 0 ||
         record.first_seen_ms >= now_ms - static_cast<std::int64_t>(retention_seconds) * 1000;
}

namespace {

// The options with their defaults taken from the store's configuration.
OpenOptions resolved(OpenOptions options, const StoreConfig& config) {
  if (options.delta_entries == 0) options.delta_entries = config.delta_entries;
  return options;
}

}  // namespace

Catalog::Catalog(const StoreConfig& store_config, const OpenOptions& open_options)
    : config(store_config), options(resolved(open_options, store_config)) {
  MutexLock lock(mutex);
  bucket_bits = std::clamp<std::uint32_t>(std::bit_width(options.delta_entries), 8, 20);
}

std::int64_t Catalog::now() const {
  if (options.now_ms) return options.now_ms();
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::uint64_t Catalog::expired_through(std::int64_t now_ms) const {
  if (config.retention_seconds == 0) return 0;
  const std::int64_t cutoff_s = now_ms / 1000 - static_cast<std::int64_t>(config.retention_seconds);
  std::uint64_t through = 0;
  for (const auto& [doc, stored_at_s] : stored_samples) {
    if (static_cast<std::int64_t>(stored_at_s) >= cutoff_s) break;
    through = doc;
  }
  return through;
}

Scheme* Catalog::scheme(std::string_view id) {
  auto it = scheme_numbers.find(id);
  return it == scheme_numbers.end() ? nullptr : &schemes[it->second];
}

LshDesign Catalog::lsh_design(const PageRequest& page, const Scheme* held) {
  if (page.bands != 0 || page.rows != 0) return {page.bands, page.rows};
  if (held != nullptr && held->state.has_minhash()) return {held->state.bands, held->state.rows};
  return kDefaultLsh;
}

bool Catalog::wide_bands(const PageRequest& page, const Scheme* held) {
  if (held != nullptr && held->state.has_minhash()) return held->state.wide_bands;
  return !page.sketch_upper.empty();
}

std::vector<SchemeName> Catalog::scheme_names() const {
  std::vector<SchemeName> by_number;
  by_number.reserve(schemes.size());
  for (const Scheme& s : schemes) by_number.push_back({s.id, s.state.hashes});
  return by_number;
}

std::vector<Column*> Catalog::columns_of(Scheme& scheme) const {
  std::vector<Column*> out;
  for (auto& table : scheme.tables) out.push_back(table.get());
  if (scheme.bands) out.push_back(scheme.bands.get());
  if (scheme.passages) out.push_back(scheme.passages.get());
  return out;
}

std::vector<std::pair<Column*, Scheme*>> Catalog::columns_and_schemes() {
  std::vector<std::pair<Column*, Scheme*>> out;
  for (Scheme& scheme : schemes) {
    for (Column* column : columns_of(scheme)) out.emplace_back(column, &scheme);
  }
  if (ids) out.emplace_back(ids.get(), nullptr);
  if (members) out.emplace_back(members.get(), nullptr);
  return out;
}

std::vector<Column*> Catalog::all_columns() {
  std::vector<Column*> out;
  for (auto [column, scheme] : columns_and_schemes()) out.push_back(column);
  return out;
}

void Catalog::note_scheme_memory() {
  std::vector<std::uint64_t> bytes;
  for (Scheme& scheme : schemes) {
    std::uint64_t sum = 0;
    for (Column* column : columns_of(scheme)) sum += column->memory();
    bytes.push_back(sum);
  }
  MemoryTotals totals{.index = id_filter.memory()};
  for (Column* column : all_columns()) {
    totals.deltas += column->delta_memory();
    totals.index += column->memory() - column->delta_memory();
    totals.merging += column->merge_filter_memory();
  }
  MutexLock lock(memory_mutex);
  scheme_memory_ = std::move(bytes);
  memory_totals_ = totals;
}

Catalog::MemoryTotals Catalog::memory_totals() const {
  MutexLock lock(memory_mutex);
  return memory_totals_;
}

std::vector<std::uint64_t> Catalog::scheme_memory() const {
  MutexLock lock(memory_mutex);
  return scheme_memory_;
}

}  // namespace neardup
