// neardup stats --store DIR [--json]: what an index holds, read without changing it.
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "store/index.h"

namespace neardup::cli {

void register_stats(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "stats", "Index statistics: design, schemes, documents, bytes on disk, offsets");
  sub->add_option("--store", options->store, "index directory")->required()->option_text("DIR");
  sub->add_flag("--json", options->json, "print one JSON object");
  set_examples(sub, {"neardup stats --store /var/lib/neardup",
                     "neardup stats --store /tmp/nd --json | jq .documents"});
  registry.add(sub, [options]() {
    // Read-only: never creates a store, and works while neardupd or `dedup` writes to it.
    auto index = open_read_only("stats", options->store);
    if (!index) return kExitFailure;
    IndexStats s = index->stats();
    nlohmann::json offsets = nlohmann::json::object();
    nlohmann::json schemes = nlohmann::json::array();
    for (const auto& scheme : s.schemes) {
      nlohmann::json entry{{"id", scheme.id}};
      if (scheme.hashes > 0) {
        entry["minhash"] = {{"hashes", scheme.hashes}, {"bands", scheme.bands}, {"rows", scheme.rows}};
      }
      schemes.push_back(std::move(entry));
    }
    for (const auto& [partition, offset] : s.applied_offsets) offsets[partition] = offset;
    if (options->json) {
      print_json_line({{"store", options->store},
                       {"format_version", s.format_version},
                       {"design",
                        {{"k", s.design_k},
                         {"r", s.design_r},
                         {"blocks", s.blocks},
                         {"block_bits", s.block_widths},
                         {"tables", s.tables}}},
                       {"schemes", schemes},
                       {"documents", s.documents},
                       {"bytes_on_disk", s.bytes_on_disk},
                       {"map_size", s.map_size},
                       {"runs", s.runs},
                       {"applied_offsets", offsets},
                       {"pending_verdicts", s.pending_verdicts}});
      return kExitOk;
    }
    std::string widths;
    for (auto w : s.block_widths) widths += (widths.empty() ? "" : ",") + std::to_string(w);
    std::cout << "store            " << options->store << "\n"
              << "format version   " << s.format_version << "\n"
              << "design           k=" << s.design_k << " r=" << s.design_r
              << " blocks=" << s.blocks << " (" << widths << " bits) tables=" << s.tables << "\n"
              << "schemes          " << s.schemes.size() << "\n";
    for (const auto& scheme : s.schemes) {
      std::cout << "  " << scheme.id << "      SimHash";
      if (scheme.hashes > 0) {
        std::cout << " + MinHash (" << scheme.hashes << " hashes, LSH " << scheme.bands << " bands x "
                  << scheme.rows << " rows)";
      }
      std::cout << "\n";
    }
    std::cout
              << "documents        " << s.documents << "\n"
              << "bytes on disk    " << s.bytes_on_disk;
    if (s.documents > 0) std::cout << " (" << s.bytes_on_disk / s.documents << " per document)";
    std::cout << "\n"
              << "map size         " << s.map_size << "\n"
              << "sorted runs      " << s.runs << "\n"
              << "pending verdicts " << s.pending_verdicts << "\n";
    for (const auto& [partition, offset] : s.applied_offsets) {
      std::cout << "applied offset   " << partition << " " << offset << "\n";
    }
    return kExitOk;
  });
}

}  // namespace neardup::cli
