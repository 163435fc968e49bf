// site_blocks: each site's own boilerplate, learned from its pages (denoise.site_boilerplate;
// docs/configuration.md, "Learning from the crawl").
//
// A block is one paragraph of a page's main text, named by the hash of its tokens
// (finish.h). Per host, the kSlots blocks seen on most of its recent pages are counted, a page
// counting each of its blocks once: a block not counted yet takes the slot of the least counted
// one (the least recently seen of equal ones) and starts at 1, so the blocks every page carries
// keep their slots while each page's own paragraphs pass through the others. A block is the
// host's boilerplate once it was seen on at least min_pages of the host's pages and on at least
// kMinShare of them. Every kWindow pages of a host its counts are halved, so that a redesign is
// learned again within a few windows and a block the site dropped is forgotten. At most
// max_hosts hosts are kept; a new host beyond them takes the place of the one seen least
// recently. A learned block keeps its first kTextBytes of text, to be shown
// (`neardup boilerplate`).
// Memory: about kSlots * 16 bytes a host, plus the kept text of learned blocks.
// Deterministic: the same pages in the same order learn the same blocks.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace neardup::learn {

struct SiteRules {
  std::uint32_t min_pages = 8;      // denoise.site_min_pages
  std::uint32_t max_hosts = 65536;  // denoise.site_max_hosts
};

class SiteBoilerplate {
 public:
  static constexpr std::size_t kSlots = 64;
  static constexpr double kMinShare = 0.1;
  static constexpr std::uint32_t kWindow = 1024;
  static constexpr std::size_t kTextBytes = 160;

  struct Block {
    std::uint64_t hash = 0;
    std::uint32_t count = 0;  // pages of the host that carried it (halved every kWindow)
    std::uint32_t last = 0;   // the host's page count when it was last seen

    bool operator==(const Block&) const = default;
  };
  struct Host {
    std::uint32_t pages = 0;      // pages learned from (halved every kWindow)
    std::uint64_t last_seen = 0;  // sequence number of its last page, over all hosts
    std::vector<Block> blocks;    // at most kSlots
    // The first kTextBytes of each learned block still in `blocks`, sorted by hash (few: kept
    // apart so that the slots stay 16 bytes).
    std::vector<std::pair<std::uint64_t, std::string>> texts;

    std::string_view text(std::uint64_t block) const;
    bool operator==(const Host&) const = default;
  };

  explicit SiteBoilerplate(SiteRules rules) : rules_(rules) {}

  const Host* find(std::string_view host) const;
  // Whether the block is the host's boilerplate (above).
  bool learned(const Host& host, const Block& block) const;
  bool learned(const Host& host, std::uint64_t block) const;

  // Learns one page of `host` carrying `blocks` (distinct); text_of(i) is the text of blocks[i],
  // asked for only when a block becomes learned.
  void add_page(std::string_view host, std::span<const std::uint64_t> blocks,
                const std::function<std::string_view(std::size_t)>& text_of);

  // mark() remembers the state; undo() returns to it (the hosts add_page() changed, added or
  // forgot since are restored), as often as needed until the next mark().
  void mark();
  void undo();

  // Hosts written or dropped since the last call (to be stored, or deleted when find() has
  // none), sorted.
  std::vector<std::string> take_changed();

  // A host's stored bytes and back. decode() refuses (false) bytes that are not a host's, and
  // keeps what it had.
  static std::string encode(const Host& host);
  bool decode(std::string_view name, std::string_view bytes);

  std::size_t hosts() const { return hosts_.size(); }
  // Every learned host, in name order.
  const std::map<std::string, Host, std::less<>>& all() const { return hosts_; }
  std::size_t memory_bytes() const;

 private:
  void forget_oldest();
  // Keeps a host's state as at the mark before its first change since (nullopt: it had none).
  void save(const std::string& name);
  void erase(const std::string& name);

  SiteRules rules_;
  std::map<std::string, Host, std::less<>> hosts_;
  std::set<std::pair<std::uint64_t, std::string>> by_age_;  // (last_seen, host)
  std::uint64_t sequence_ = 0;
  std::set<std::string> changed_;
  std::map<std::string, std::optional<Host>, std::less<>> saved_;  // since mark()
  std::uint64_t marked_sequence_ = 0;
};

// The host of a URL, lower-cased, without "www." and a port: "https://WWW.Example.com:8080/a"
// -> "example.com". Empty when the text is not an absolute http(s) URL with a host.
std::string host_of(std::string_view url);

}  // namespace neardup::learn
