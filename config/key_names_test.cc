// The document's shape from the key table, and the near-miss an unknown key's error names.
#include "config/key_names.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace neardup::config_keys {
namespace {

TEST(ConfigKeyNames, TheSchemaHoldsEveryKeyAndItsSections) {
  const Schema& s = schema();
  EXPECT_TRUE(s.is_leaf("features.ngram"));
  EXPECT_FALSE(s.is_leaf("features"));
  EXPECT_TRUE(s.sections.contains("features"));
  EXPECT_TRUE(s.sections.contains("input.fields"));
  const auto top = s.children("");
  EXPECT_NE(std::ranges::find(top, "features"), top.end());
  EXPECT_EQ(std::ranges::find(top, "ngram"), top.end());  // not at the top level
  const auto fields = s.children("input.fields");
  EXPECT_NE(std::ranges::find(fields, "url"), fields.end());
  EXPECT_TRUE(s.children("no.such.section").empty());
}

TEST(ConfigKeyNames, ANearMissNamesTheKeyMeantAndAFarOneNothing) {
  EXPECT_EQ(did_you_mean("features", "ngrams"), " (did you mean features.ngram?)");
  EXPECT_EQ(did_you_mean("", "featurez"), " (did you mean features?)");
  EXPECT_EQ(did_you_mean("features", "nrgam"), " (did you mean features.ngram?)");  // a swap
  // The same name in another section.
  EXPECT_EQ(did_you_mean("dedup", "ngram"), " (did you mean features.ngram?)");
  EXPECT_EQ(did_you_mean("", "features.ngram"),
            " (write sections as nested maps, not dotted keys)");
  EXPECT_EQ(did_you_mean("features", "completely_unrelated_name"), "");
  EXPECT_EQ(join_path("", "store"), "store");
  EXPECT_EQ(join_path("store", "tables"), "store.tables");
}

}  // namespace
}  // namespace neardup::config_keys
