// Administration of an open store (index.h): the counts and sizes of stats(), the applied
// offsets, trimming stored verdicts, forgetting pages and dropping a retired scheme. Each change
// is one write transaction: all or nothing, also when the process is killed meanwhile.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "store/catalog.h"
#include "store/index.h"
#include "store/store_env.h"

namespace neardup::admin {

// Index::stats(): from a read transaction, on any thread, never blocking the writer.
IndexStats stats(StoreEnv& env, const Catalog& catalog);
// Index::learned(), likewise.
StoreResult<std::vector<std::pair<std::string, std::string>>> learned(StoreEnv& env,
                                                                      std::string_view prefix);
// Index::applied_offset(), likewise.
StoreResult<std::optional<std::int64_t>> applied_offset(StoreEnv& env,
                                                        const std::string& partition);

// Index::trim_pending(), forget() and drop_scheme(). Writer mutex held.
StoreResult<> trim_pending(StoreEnv& env, const std::string& partition,
                           std::int64_t committed_offset);
StoreResult<std::size_t> forget(StoreEnv& env, Catalog& catalog, std::span<const std::string> ids)
    REQUIRES(catalog.mutex);
StoreResult<Index::DroppedScheme> drop_scheme(StoreEnv& env, Catalog& catalog,
                                              const std::string& id) REQUIRES(catalog.mutex);

}  // namespace neardup::admin
