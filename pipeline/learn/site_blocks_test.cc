#include "pipeline/learn/site_blocks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace neardup::learn {
namespace {

std::string_view text_of_block(std::size_t) { return "Subscribe to our newsletter"; }

// A page of host `host`: the blocks it always carries plus `own` of its own.
void add(SiteBoilerplate& sites, std::string_view host, std::vector<std::uint64_t> always,
         std::uint64_t own_from, int own) {
  for (int i = 0; i < own; ++i) always.push_back(own_from + static_cast<std::uint64_t>(i));
  sites.add_page(host, always, text_of_block);
}

TEST(SiteBoilerplate, ABlockOnEveryPageIsLearnedAfterMinPagesAndOwnParagraphsNever) {
  SiteBoilerplate sites({.min_pages = 8, .max_hosts = 10});
  for (int page = 0; page < 7; ++page) add(sites, "a.com", {1, 2}, 1000 + page * 100, 30);
  const SiteBoilerplate::Host* host = sites.find("a.com");
  ASSERT_NE(host, nullptr);
  EXPECT_EQ(host->pages, 7u);
  EXPECT_FALSE(sites.learned(*host, 1));  // seven pages: not yet
  add(sites, "a.com", {1, 2}, 9000, 30);
  host = sites.find("a.com");
  EXPECT_TRUE(sites.learned(*host, 1));
  EXPECT_TRUE(sites.learned(*host, 2));
  EXPECT_FALSE(sites.learned(*host, 9000));
  for (const auto& block : host->blocks) {
    if (block.hash == 1) {
      EXPECT_EQ(host->text(block.hash), "Subscribe to our newsletter");
    } else if (block.hash == 9000) {
      EXPECT_EQ(host->text(block.hash), "");
    }
  }
  // Another host learned nothing.
  EXPECT_EQ(sites.find("b.com"), nullptr);
}

TEST(SiteBoilerplate, ABlockOnlyAFewPagesCarryIsNotLearned) {
  SiteBoilerplate sites({.min_pages = 8, .max_hosts = 10});
  for (int page = 0; page < 200; ++page) {
    std::vector<std::uint64_t> always = {1};
    if (page % 20 == 0) always.push_back(2);  // on 5 % of pages: 10 of them
    add(sites, "a.com", always, 1000 + page * 100, 10);
  }
  const SiteBoilerplate::Host* host = sites.find("a.com");
  EXPECT_TRUE(sites.learned(*host, 1));
  EXPECT_FALSE(sites.learned(*host, 2));  // 10 >= min_pages, but below a tenth of 200
}

TEST(SiteBoilerplate, ARedesignIsLearnedAgainAndTheOldBlockForgotten) {
  SiteBoilerplate sites({.min_pages = 8, .max_hosts = 10});
  for (int page = 0; page < 2000; ++page) add(sites, "a.com", {1}, 1000 + page * 100, 20);
  EXPECT_TRUE(sites.learned(*sites.find("a.com"), 1));
  for (int page = 0; page < 3000; ++page) add(sites, "a.com", {2}, 900000 + page * 100, 20);
  const SiteBoilerplate::Host* host = sites.find("a.com");
  EXPECT_TRUE(sites.learned(*host, 2));
  EXPECT_FALSE(sites.learned(*host, 1));
  EXPECT_LE(host->blocks.size(), SiteBoilerplate::kSlots);
  EXPECT_LT(host->pages, SiteBoilerplate::kWindow);
}

TEST(SiteBoilerplate, PastMaxHostsTheLeastRecentlySeenHostIsForgotten) {
  SiteBoilerplate sites({.min_pages = 2, .max_hosts = 2});
  add(sites, "a.com", {1}, 10, 1);
  add(sites, "b.com", {1}, 10, 1);
  add(sites, "a.com", {1}, 10, 1);
  sites.take_changed();
  add(sites, "c.com", {1}, 10, 1);
  EXPECT_NE(sites.find("a.com"), nullptr);
  EXPECT_EQ(sites.find("b.com"), nullptr);
  EXPECT_NE(sites.find("c.com"), nullptr);
  EXPECT_EQ(sites.take_changed(), (std::vector<std::string>{"b.com", "c.com"}));
}

TEST(SiteBoilerplate, HostsRoundTripAndDamageIsRefused) {
  SiteBoilerplate sites({.min_pages = 2, .max_hosts = 10});
  for (int page = 0; page < 5; ++page) add(sites, "a.com", {1, 2}, 100 + page * 10, 3);
  const std::string bytes = SiteBoilerplate::encode(*sites.find("a.com"));
  SiteBoilerplate copy({.min_pages = 2, .max_hosts = 10});
  ASSERT_TRUE(copy.decode("a.com", bytes));
  EXPECT_EQ(*copy.find("a.com"), *sites.find("a.com"));
  for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
    SiteBoilerplate damaged({.min_pages = 2, .max_hosts = 10});
    EXPECT_FALSE(damaged.decode("a.com", bytes.substr(0, cut))) << cut;
  }
  // The next page of a reloaded host continues the same sequence.
  add(sites, "b.com", {1}, 10, 1);
  add(copy, "b.com", {1}, 10, 1);
  EXPECT_EQ(copy.find("b.com")->last_seen, sites.find("b.com")->last_seen);
}

TEST(SiteBoilerplate, LearnedTextIsCutOnACharacterBoundary) {
  SiteBoilerplate sites({.min_pages = 2, .max_hosts = 10});
  std::string long_text(SiteBoilerplate::kTextBytes - 1, 'a');
  long_text += "\xc3\xa9\xc3\xa9";  // é é across the cut
  for (int page = 0; page < 2; ++page) {
    const std::vector<std::uint64_t> blocks = {7};
    sites.add_page("a.com", blocks, [&](std::size_t) { return std::string_view(long_text); });
  }
  EXPECT_EQ(sites.find("a.com")->text(7), std::string(SiteBoilerplate::kTextBytes - 1, 'a'));
}

TEST(SiteBoilerplate, UndoRestoresChangedAddedAndForgottenHosts) {
  SiteBoilerplate sites({.min_pages = 2, .max_hosts = 2});
  add(sites, "a.com", {1}, 10, 1);
  add(sites, "b.com", {1}, 10, 1);
  const SiteBoilerplate::Host a = *sites.find("a.com"), b = *sites.find("b.com");
  sites.mark();
  for (int attempt = 0; attempt < 2; ++attempt) {
    add(sites, "b.com", {1}, 20, 1);  // changed
    add(sites, "c.com", {1}, 10, 1);  // added, forgetting a.com
    EXPECT_EQ(sites.find("a.com"), nullptr);
    sites.undo();
    ASSERT_NE(sites.find("a.com"), nullptr);
    EXPECT_EQ(*sites.find("a.com"), a);
    EXPECT_EQ(*sites.find("b.com"), b);
    EXPECT_EQ(sites.find("c.com"), nullptr);
  }
  // The next host learned takes the sequence number it would have taken without the undo.
  add(sites, "b.com", {1}, 20, 1);
  EXPECT_EQ(sites.find("b.com")->last_seen, b.last_seen + 1);
  // And a.com, the least recently seen, is the one a new host makes room from.
  add(sites, "c.com", {1}, 10, 1);
  EXPECT_EQ(sites.find("a.com"), nullptr);
}

TEST(HostOf, IsTheLowerCasedHostWithoutWwwOrPort) {
  EXPECT_EQ(host_of("https://WWW.Example.com:8080/a?b#c"), "example.com");
  EXPECT_EQ(host_of("http://user@news.example.org"), "news.example.org");
  EXPECT_EQ(host_of("http://[::1]:80/"), "[::1]");
  EXPECT_EQ(host_of("ftp://example.com/"), "");
  EXPECT_EQ(host_of("p00001"), "");
}

}  // namespace
}  // namespace neardup::learn
