// Helpers for the store tests: a temporary directory and page items.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "store/index.h"

namespace neardup::testing {

// A fresh directory under /tmp, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/neardup-store-XXXXXX";
    path_ = ::mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// prefix followed by the decimal number (GCC 12 warns falsely on "p" + std::to_string(n)).
inline std::string numbered(std::string prefix, std::uint64_t number) {
  return prefix.append(std::to_string(number));
}

inline StoreConfig store_config(const std::string& path, std::uint32_t k = 3,
                                std::uint32_t tables = 0) {
  StoreConfig config;
  config.path = path;
  config.design_k = k;
  config.tables = tables;
  config.expected_documents = 1'000'000;
  config.map_size = 1ull << 26;
  config.sync = false;
  return config;
}

inline IndexItem page(std::string id, std::uint64_t fingerprint, std::string scheme = "s-test",
                      std::uint32_t max_distance = 3) {
  IndexItem item;
  item.page = IndexItem::Page{std::move(id), fingerprint, std::move(scheme), max_distance, 0};
  return item;
}

inline IndexItem at(IndexItem item, std::string partition, std::int64_t offset) {
  item.source = SourceOffset{std::move(partition), offset};
  return item;
}

}  // namespace neardup::testing
