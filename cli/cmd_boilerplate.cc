// neardup boilerplate --store DIR [--config F] [--host H] [--json|--text]: what a scheme with
// denoise.site_boilerplate learned about a host's own boilerplate (pipeline/learn/site_blocks.h),
// or which hosts it learned about; read without changing the store.
#include <algorithm>
#include <iostream>

#include "cli/cli_util.h"
#include "cli/commands.h"
#include "common/help.h"
#include "message/learning.h"
#include "pipeline/learn/site_blocks.h"
#include "store/index.h"

namespace neardup::cli {
namespace {

// A host's blocks, most pages first, as JSON.
nlohmann::json host_json(const learn::SiteBoilerplate& sites, std::string_view name,
                         const learn::SiteBoilerplate::Host& host) {
  std::vector<const learn::SiteBoilerplate::Block*> blocks;
  for (const auto& block : host.blocks) blocks.push_back(&block);
  std::ranges::stable_sort(blocks,
                           [](const auto* a, const auto* b) { return a->count > b->count; });
  nlohmann::json out{{"host", name}, {"pages", host.pages}, {"blocks", nlohmann::json::array()}};
  for (const auto* block : blocks) {
    if (!sites.learned(host, *block)) continue;
    out["blocks"].push_back({{"pages", block->count}, {"text", host.text(block->hash)}});
  }
  return out;
}

}  // namespace

void register_boilerplate(CLI::App& root, CommandRegistry& registry) {
  struct Options {
    std::string store, config_path, host;
    std::size_t limit = 20;
    OutputOptions output;
  };
  auto options = std::make_shared<Options>();
  CLI::App* sub = root.add_subcommand(
      "boilerplate", "What the index learned about a site's own boilerplate (site_boilerplate)");
  sub->add_option("--store", options->store, "index directory")->required()->option_text("DIR");
  add_config_option(sub, options->config_path);
  sub->add_option("--host", options->host,
                  "the host (as in its URLs, without www.); without it, the hosts learned about")
      ->option_text("H");
  sub->add_option("--limit", options->limit, "without --host: the hosts with most pages, at most")
      ->option_text("N");
  add_output_options(sub, options->output);
  sub->footer(
      "A block is a paragraph of the main text. The host's learned blocks (those on at least\n"
      "denoise.site_min_pages of its pages and a tenth of them) are listed with the pages that\n"
      "carried them (halved every 1024 pages of the host) and their first 160 bytes; they are\n"
      "removed from the host's pages before features. The scheme is --config's.");
  set_examples(sub, {"neardup boilerplate --store idx --config sites.yaml --host example.com",
                     "neardup boilerplate --store idx --config sites.yaml --json | jq ."});
  registry.add(sub, [options]() {
    auto config = load_config_or_defaults(options->config_path);
    if (!config) {
      std::cerr << "neardup boilerplate: " << config.error() << "\n";
      return kExitUsage;
    }
    if (!config->denoise.site_boilerplate) {
      std::cerr << "neardup boilerplate: "
                << (options->config_path.empty() ? "the defaults" : options->config_path)
                << " set no denoise.site_boilerplate: its scheme learns no site's boilerplate\n";
      return kExitUsage;
    }
    auto index = open_read_only("boilerplate", options->store);
    if (!index) return kExitFailure;
    const std::string scheme = scheme_id(*config);
    auto state = Learning::read(*index, scheme, *config);
    if (!state) {
      std::cerr << "neardup boilerplate: " << state.error().message << "\n";
      return kExitFailure;
    }
    const learn::SiteBoilerplate& sites = (*state)->sites;
    nlohmann::json answer;
    if (!options->host.empty()) {
      const std::string host = learn::host_of("http://" + options->host);
      const learn::SiteBoilerplate::Host* found = sites.find(host);
      if (found == nullptr) {
        std::cerr << "neardup boilerplate: scheme " << scheme << " learned nothing about host "
                  << host << " (" << sites.hosts() << " hosts learned about)\n";
        return kExitNo;
      }
      answer = host_json(sites, host, *found);
    } else {
      std::vector<std::pair<std::string_view, const learn::SiteBoilerplate::Host*>> hosts;
      for (const auto& [name, host] : sites.all()) hosts.emplace_back(name, &host);
      std::ranges::stable_sort(
          hosts, [](const auto& a, const auto& b) { return a.second->pages > b.second->pages; });
      // What the scheme's learned state takes: in memory (as the index's writer holds it) and
      // in the store (keys and values).
      auto records = index->learned(scheme + "/");
      std::uint64_t stored = 0;
      if (records) {
        for (const auto& [key, value] : *records) stored += key.size() + value.size();
      }
      answer = {{"scheme", scheme},
                {"hosts", sites.hosts()},
                {"memory_bytes", (*state)->frequencies.memory_bytes() + sites.memory_bytes()},
                {"stored_bytes", stored},
                {"top", nlohmann::json::array()}};
      for (std::size_t i = 0; i < hosts.size() && i < options->limit; ++i) {
        const auto& host = *hosts[i].second;
        const auto learned = std::ranges::count_if(
            host.blocks, [&](const auto& block) { return sites.learned(host, block); });
        answer["top"].push_back(
            {{"host", hosts[i].first}, {"pages", host.pages}, {"learned_blocks", learned}});
      }
    }
    if (options->output.format() == OutputFormat::kJson) {
      print_json_line(answer);
      return kExitOk;
    }
    std::string text;
    if (answer.contains("blocks")) {
      text = "host " + answer["host"].get<std::string>() + ": " +
             std::to_string(answer["pages"].get<std::uint64_t>()) + " pages, " +
             std::to_string(answer["blocks"].size()) + " learned blocks\n";
      for (const auto& block : answer["blocks"]) {
        text += "  " + std::to_string(block["pages"].get<std::uint64_t>()) + "  " +
                block["text"].get<std::string>() + "\n";
      }
    } else {
      text = "scheme " + scheme + ": " + std::to_string(sites.hosts()) + " hosts, " +
             std::to_string(answer["memory_bytes"].get<std::uint64_t>()) + " bytes in memory, " +
             std::to_string(answer["stored_bytes"].get<std::uint64_t>()) + " stored\n";
      for (const auto& host : answer["top"]) {
        text += "  " + host["host"].get<std::string>() + "  " +
                std::to_string(host["pages"].get<std::uint64_t>()) + " pages  " +
                std::to_string(host["learned_blocks"].get<std::int64_t>()) + " learned blocks\n";
      }
    }
    print_text(text);
    return kExitOk;
  });
}

}  // namespace neardup::cli
