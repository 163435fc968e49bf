#include "pipeline/learn/site_blocks.h"

#include <algorithm>

#include "common/ascii.h"
#include "common/coding.h"

namespace neardup::learn {

std::string_view SiteBoilerplate::Host::text(std::uint64_t block) const {
  for (const auto& [hash, text] : texts) {
    if (hash == block) return text;
  }
  return {};
}

const SiteBoilerplate::Host* SiteBoilerplate::find(std::string_view host) const {
  auto it = hosts_.find(host);
  return it == hosts_.end() ? nullptr : &it->second;
}

bool SiteBoilerplate::learned(const Host& host, const Block& block) const {
  return block.count >= rules_.min_pages &&
         static_cast<double>(block.count) >= kMinShare * static_cast<double>(host.pages);
}

bool SiteBoilerplate::learned(const Host& host, std::uint64_t block) const {
  for (const Block& b : host.blocks) {
    if (b.hash == block) return learned(host, b);
  }
  return false;
}

void SiteBoilerplate::add_page(std::string_view name, std::span<const std::uint64_t> blocks,
                               const std::function<std::string_view(std::size_t)>& text_of) {
  save(std::string(name));
  auto it = hosts_.find(name);
  if (it == hosts_.end()) {
    if (hosts_.size() >= rules_.max_hosts) forget_oldest();
    it = hosts_.emplace(std::string(name), Host{}).first;
  } else {
    by_age_.erase({it->second.last_seen, it->first});
  }
  Host& host = it->second;
  host.last_seen = ++sequence_;
  by_age_.emplace(host.last_seen, it->first);
  changed_.insert(it->first);
  host.pages += 1;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    auto block = std::find_if(host.blocks.begin(), host.blocks.end(),
                              [&](const Block& b) { return b.hash == blocks[i]; });
    if (block == host.blocks.end()) {
      if (host.blocks.size() < kSlots) {
        host.blocks.push_back({});
        block = host.blocks.end() - 1;
      } else {
        block = std::min_element(host.blocks.begin(), host.blocks.end(),
                                 [](const Block& a, const Block& b) {
                                   return a.count != b.count ? a.count < b.count : a.last < b.last;
                                 });
      }
      std::erase_if(host.texts, [&](const auto& t) { return t.first == block->hash; });
      *block = Block{.hash = blocks[i]};
    }
    block->count += 1;
    block->last = host.pages;
    if (learned(host, *block) && host.text(block->hash).empty()) {
      const std::string_view whole = text_of(i);
      std::size_t cut = std::min(whole.size(), kTextBytes);
      // Not through the middle of a UTF-8 sequence.
      while (cut > 0 && cut < whole.size() &&
             (static_cast<unsigned char>(whole[cut]) & 0xC0) == 0x80) {
        --cut;
      }
      if (cut > 0) {
        auto at =
            std::lower_bound(host.texts.begin(), host.texts.end(), block->hash,
                             [](const auto& t, std::uint64_t hash) { return t.first < hash; });
        host.texts.emplace(at, block->hash, whole.substr(0, cut));
      }
    }
  }
  if (host.pages >= kWindow) {
    host.pages /= 2;
    for (Block& b : host.blocks) {
      b.count /= 2;
      b.last /= 2;
    }
    std::erase_if(host.blocks, [](const Block& b) { return b.count == 0; });
    std::erase_if(host.texts, [&](const auto& t) {
      return std::none_of(host.blocks.begin(), host.blocks.end(),
                          [&](const Block& b) { return b.hash == t.first; });
    });
  }
}

void SiteBoilerplate::forget_oldest() {
  if (by_age_.empty()) return;
  const std::string oldest = by_age_.begin()->second;
  save(oldest);
  changed_.insert(oldest);
  erase(oldest);
}

void SiteBoilerplate::erase(const std::string& name) {
  auto it = hosts_.find(name);
  if (it == hosts_.end()) return;
  by_age_.erase({it->second.last_seen, it->first});
  hosts_.erase(it);
}

void SiteBoilerplate::save(const std::string& name) {
  if (saved_.contains(name)) return;
  const Host* host = find(name);
  saved_.emplace(name, host ? std::optional(*host) : std::nullopt);
}

void SiteBoilerplate::mark() {
  saved_.clear();
  marked_sequence_ = sequence_;
}

void SiteBoilerplate::undo() {
  for (auto& [name, host] : saved_) {
    erase(name);
    if (host) {
      by_age_.emplace(host->last_seen, name);
      hosts_.emplace(name, std::move(*host));
    }
  }
  saved_.clear();
  sequence_ = marked_sequence_;
}

std::vector<std::string> SiteBoilerplate::take_changed() {
  std::vector<std::string> changed(changed_.begin(), changed_.end());
  changed_.clear();
  return changed;
}

std::string SiteBoilerplate::encode(const Host& host) {
  std::string out;
  coding::put_varint64(out, host.pages);
  coding::put_varint64(out, host.last_seen);
  coding::put_varint64(out, host.blocks.size());
  for (const Block& b : host.blocks) {
    coding::put_fixed64(out, b.hash);
    coding::put_varint64(out, b.count);
    coding::put_varint64(out, b.last);
    const std::string_view text = host.text(b.hash);
    coding::put_varint64(out, text.size());
    out += text;
  }
  return out;
}

bool SiteBoilerplate::decode(std::string_view name, std::string_view bytes) {
  coding::ByteReader in(bytes);
  Host host;
  const std::uint64_t pages = in.varint64();
  host.last_seen = in.varint64();
  const std::uint64_t count = in.varint64();
  if (!in.ok() || pages > UINT32_MAX || count > kSlots) return false;
  host.pages = static_cast<std::uint32_t>(pages);
  for (std::uint64_t i = 0; i < count; ++i) {
    Block b;
    b.hash = in.u64();
    const std::uint64_t seen = in.varint64(), last = in.varint64(), length = in.varint64();
    if (!in.ok() || seen > UINT32_MAX || last > UINT32_MAX || length > kTextBytes) return false;
    b.count = static_cast<std::uint32_t>(seen);
    b.last = static_cast<std::uint32_t>(last);
    if (length > 0) host.texts.emplace_back(b.hash, in.bytes(length));
    host.blocks.push_back(b);
  }
  if (!in.done()) return false;
  std::sort(host.texts.begin(), host.texts.end());
  if (auto old = hosts_.find(name); old != hosts_.end()) {
    by_age_.erase({old->second.last_seen, old->first});
    hosts_.erase(old);
  }
  sequence_ = std::max(sequence_, host.last_seen);
  by_age_.emplace(host.last_seen, std::string(name));
  hosts_.emplace(std::string(name), std::move(host));
  return true;
}

std::size_t SiteBoilerplate::memory_bytes() const {
  std::size_t bytes = 0;
  for (const auto& [name, host] : hosts_) {
    // A map node and a by_age_ node with their names, and the blocks.
    bytes += 2 * (name.size() + 64) + host.blocks.capacity() * sizeof(Block);
    bytes += host.texts.capacity() * sizeof(host.texts[0]);
    for (const auto& [hash, text] : host.texts) bytes += text.capacity() > 15 ? text.capacity() : 0;
  }
  return bytes;
}

std::string host_of(std::string_view url) {
  std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) return {};
  const std::string lowered_scheme = ascii_lowercase(url.substr(0, scheme));
  if (lowered_scheme != "http" && lowered_scheme != "https") return {};
  std::string_view rest = url.substr(scheme + 3);
  rest = rest.substr(0, rest.find_first_of("/?#"));
  if (auto at = rest.rfind('@'); at != std::string_view::npos) rest = rest.substr(at + 1);
  if (rest.starts_with('[')) {
    rest = rest.substr(0, rest.find(']') + 1);  // an IPv6 literal
  } else {
    rest = rest.substr(0, rest.find(':'));
  }
  std::string host = ascii_lowercase(rest);
  if (host.starts_with("www.")) host.erase(0, 4);
  return host;
}

}  // namespace neardup::learn
