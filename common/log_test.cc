#include "common/log.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace neardup {
namespace {

const auto kTime = std::chrono::system_clock::time_point(std::chrono::milliseconds(1767322245678));

TEST(LogLine, UnderJournaldStartsWithTheSyslogPriorityAndHasNoTimestamp) {
  EXPECT_EQ(format_log_line(LogFormat::kText, true, spdlog::level::warn, "daemon", "slow x=1", kTime),
            "<4>warning daemon slow x=1\n");
  EXPECT_EQ(format_log_line(LogFormat::kText, true, spdlog::level::err, "store", "e", kTime),
            "<3>error store e\n");
  EXPECT_EQ(format_log_line(LogFormat::kText, true, spdlog::level::info, "d", "i", kTime),
            "<6>info d i\n");
  EXPECT_EQ(format_log_line(LogFormat::kText, true, spdlog::level::debug, "d", "x", kTime),
            "<7>debug d x\n");
  EXPECT_EQ(format_log_line(LogFormat::kText, true, spdlog::level::critical, "d", "x", kTime),
            "<2>critical d x\n");
}

TEST(LogLine, ElsewhereTextLinesStartWithALocalTimestamp) {
  std::string line = format_log_line(LogFormat::kText, false, spdlog::level::info, "daemon",
                                     "started", kTime);
  EXPECT_TRUE(line.ends_with(".678 info daemon started\n")) << line;
  EXPECT_EQ(line.find('<'), std::string::npos);
}

TEST(LogLine, JsonLinesAreOneObjectWithEscapedMessage) {
  std::string line = format_log_line(LogFormat::kJson, false, spdlog::level::warn, "daemon",
                                     "bad \"value\"\n\xff", kTime);
  ASSERT_TRUE(line.ends_with("\n"));
  auto object = nlohmann::json::parse(line);
  EXPECT_EQ(object["time"], "2026-01-02T02:50:45.678Z");
  EXPECT_EQ(object["level"], "warning");
  EXPECT_EQ(object["component"], "daemon");
  EXPECT_EQ(object["message"], "bad \"value\"\n\xef\xbf\xbd");
  std::string journal = format_log_line(LogFormat::kJson, true, spdlog::level::err, "d", "m", kTime);
  EXPECT_EQ(journal, "<3>{\"level\":\"error\",\"component\":\"d\",\"message\":\"m\"}\n");
}

TEST(LogLine, JsonLinesTurnTheMessagesTrailingPairsIntoFields) {
  auto object = nlohmann::json::parse(format_log_line(
      LogFormat::kJson, false, spdlog::level::info, "daemon",
      "started role=single partitions=4 lag=-2 ratio=0.5 exactly_once=false "
      "error=\"cannot open /x: \\\"y\\\" gone\"",
      kTime));
  EXPECT_EQ(object["message"], "started");
  EXPECT_EQ(object["role"], "single");
  EXPECT_EQ(object["partitions"], 4);
  EXPECT_EQ(object["lag"], -2);
  EXPECT_EQ(object["ratio"], 0.5);
  EXPECT_EQ(object["exactly_once"], false);
  EXPECT_EQ(object["error"], "cannot open /x: \"y\" gone");
}

TEST(LogLine, OnlyTrailingPairsBecomeFieldsAndTextLinesKeepThem) {
  LogFields split = split_log_fields("config x=1 is ignored");
  EXPECT_EQ(split.text, "config x=1 is ignored");
  EXPECT_TRUE(split.fields.empty());
  split = split_log_fields("revoked partition=3 with 12 un-acknowledged count=12");
  EXPECT_EQ(split.text, "revoked partition=3 with 12 un-acknowledged");
  ASSERT_EQ(split.fields.size(), 1u);
  EXPECT_EQ(split.fields[0].key, "count");
  // A quoted value that does not close before a space is not a pair.
  EXPECT_TRUE(split_log_fields("error=\"open").fields.empty());
  std::string text = format_log_line(LogFormat::kText, true, spdlog::level::info, "d",
                                     "started role=single", kTime);
  EXPECT_EQ(text, "<6>info d started role=single\n");
}

TEST(LogLine, PairsThatWouldOverwriteAFieldLeaveTheMessageWhole) {
  for (const char* message : {"x level=9", "x a=1 a=2", "x message=m"}) {
    auto object = nlohmann::json::parse(
        format_log_line(LogFormat::kJson, false, spdlog::level::info, "d", message, kTime));
    EXPECT_EQ(object["message"], message);
    EXPECT_EQ(object["level"], "info");
    EXPECT_EQ(object.size(), 4u);  // time, level, component, message
  }
}

}  // namespace
}  // namespace neardup
