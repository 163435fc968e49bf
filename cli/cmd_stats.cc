// neardup stats --store DIR [--json|--text]: what an index holds, read without changing it.
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/human_text.h"
#include "common/help.h"
#include "store/index.h"

namespace neardup::cli {

void register_stats(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store;
    OutputOptions output;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "stats", "Index statistics: design, schemes, documents, bytes on disk, offsets");
  sub->add_option("--store", options->store, "index directory")->required()->option_text("DIR");
  add_output_options(sub, options->output);
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
        entry["minhash"] = {{"hashes", scheme.hashes},
                            {"bands", scheme.bands},
                            {"rows", scheme.rows},
                            {"wide_bands", scheme.wide_bands}};
      }
      schemes.push_back(std::move(entry));
    }
    for (const auto& [partition, offset] : s.applied_offsets) offsets[partition] = offset;
    const nlohmann::json answer{{"store", options->store},
                                {"format_version", s.format_version},
                                {"design",
                                 {{"k", s.design_k},
                                  {"r", s.design_r},
                                  {"blocks", s.blocks},
                                  {"block_bits", s.block_widths},
                                  {"tables", s.tables},
                                  {"table_key_bits", s.table_key_bits},
                                  {"id_key_bits", s.id_key_bits}}},
                                {"schemes", schemes},
                                {"documents", s.documents},
                                {"bytes_on_disk", s.bytes_on_disk},
                                {"map_size", s.map_size},
                                {"runs", s.runs},
                                {"applied_offsets", offsets},
                                {"pending_verdicts", s.pending_verdicts}};
    if (options->output.format() == OutputFormat::kJson) {
      print_json_line(answer);
    } else {
      print_text(stats_text(answer));
    }
    return kExitOk;
  });
}

}  // namespace neardup::cli
