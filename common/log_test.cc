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

}  // namespace
}  // namespace neardup
