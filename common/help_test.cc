#include "common/help.h"

#include <gtest/gtest.h>

namespace neardup {
namespace {

// A small command tree shaped like neardup's.
struct Tree {
  CLI::App root{"tool: does things", "tool"};
  std::string store, in = "-";
  int threads = 4;
  bool json = false;
  std::vector<std::string> files;
  Tree() {
    use_help_formatter(root);
    root.set_version_flag("--version", "tool 1");
    root.require_subcommand(1);
    CLI::App* dedup = root.add_subcommand("dedup", "Tag pages");
    dedup->add_option("--store", store, "index directory")->required()->option_text("DIR");
    dedup->add_option("--in", in, "input")->option_text("FILE");
    dedup->add_option("--threads", threads, "workers")->option_text("N")->check(CLI::Range(1, 16));
    dedup->add_flag("--json", json, "JSON output");
    set_examples(dedup, {"tool dedup --store /tmp/x"});
    CLI::App* stats = root.add_subcommand("stats", "Show statistics");
    stats->add_option("files", files, "files")->option_text("FILE");
  }
  std::expected<void, std::string> check(std::vector<std::string> args) {
    return check_arguments(root, args);
  }
};

TEST(ClosestMatch, SuggestsOnlyLikelyMisspellings) {
  const std::vector<std::string> commands{"dedup", "decode", "stats", "extract"};
  EXPECT_EQ(closest_match("dedpu", commands), "dedup");
  EXPECT_EQ(closest_match("stat", commands), "stats");
  EXPECT_EQ(closest_match("xyzzy", commands), "");
  EXPECT_EQ(closest_match("--stroe", {"--store", "--in"}), "--store");
  EXPECT_EQ(closest_match("--x", {"--in"}), "");  // one letter is no basis for a guess
}

TEST(CheckArguments, AnUnknownCommandSuggestsTheClosestOne) {
  Tree t;
  auto bad = t.check({"dedpu", "--store", "x"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "tool: unknown command 'dedpu'; did you mean 'dedup'? (see tool --help)");
}

TEST(CheckArguments, AMisspeltOptionIsNamedBeforeMissingRequiredOnes) {
  Tree t;
  auto bad = t.check({"dedup", "--stroe", "x"});
  ASSERT_FALSE(bad);
  EXPECT_EQ(
      bad.error(),
      "tool dedup: unknown option '--stroe'; did you mean '--store'? (see tool dedup --help)");
  auto root_flag = t.check({"--verison"});
  ASSERT_FALSE(root_flag);
  EXPECT_NE(root_flag.error().find("did you mean '--version'?"), std::string::npos);
}

TEST(CheckArguments, ValuesPositionalsAndHelpAreNotMistakenForNames) {
  Tree t;
  EXPECT_TRUE(t.check({"dedup", "--store", "--weird-dir-name", "--in=x.jsonl", "--json"}));
  EXPECT_TRUE(t.check({"stats", "a", "b", "--", "--not-an-option"}));
  EXPECT_TRUE(t.check({"dedup", "--threads", "-1"}));
  EXPECT_TRUE(t.check({"--help"}));
  EXPECT_TRUE(t.check({"--version"}));
  EXPECT_TRUE(t.check({"dedup", "-h"}));
}

TEST(CheckArguments, AMissingCommandListsTheCommands) {
  Tree t;
  auto bad = t.check({});
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "tool: a command is required, one of: dedup, stats (see tool --help)");
}

TEST(HelpFormatter, ShowsValueNamesDefaultsAndExamplesWithoutParserInternals) {
  Tree t;
  const std::string help = t.root.get_subcommand("dedup")->help();
  EXPECT_NE(help.find("--store DIR"), std::string::npos) << help;
  EXPECT_NE(help.find("index directory (required)"), std::string::npos) << help;
  EXPECT_NE(help.find("--threads N"), std::string::npos) << help;
  EXPECT_NE(help.find("[default: 4]"), std::string::npos) << help;
  EXPECT_NE(help.find("[default: -]"), std::string::npos) << help;
  EXPECT_NE(help.find("Examples:\n  tool dedup --store /tmp/x"), std::string::npos) << help;
  EXPECT_EQ(help.find("INT"), std::string::npos) << help;
  EXPECT_EQ(help.find("TEXT"), std::string::npos) << help;
}

TEST(ManPage, HasEveryCommandAndOptionInRoffWithEscapedDashes) {
  Tree t;
  const std::string man =
      render_man_page(t.root, "1", "1.0", {{"EXIT STATUS", "0 ok.\n\n  table\n"}});
  EXPECT_TRUE(man.starts_with(".TH TOOL 1 \"\" \"tool 1.0\" \"User Commands\"\n")) << man;
  EXPECT_NE(man.find(".SH NAME\ntool \\- does things\n"), std::string::npos) << man;
  EXPECT_NE(man.find(".SS \"tool dedup [OPTIONS]\""), std::string::npos) << man;
  EXPECT_NE(man.find("\\fB\\-\\-store\\fR \\fIDIR\\fR\nindex directory (required)"),
            std::string::npos)
      << man;
  EXPECT_NE(man.find(".SS \"tool stats [OPTIONS] [FILE...]\""), std::string::npos) << man;
  EXPECT_NE(man.find(".TP\n\\fIFILE\\fR\nfiles\n"), std::string::npos)
      << man;  // no "[default: []]"
  EXPECT_NE(man.find(".SH EXIT STATUS\n0 ok.\n.PP\n.PP\n.nf\n  table\n.fi\n"), std::string::npos)
      << man;
}

TEST(BashCompletion, CompletesCommandsOptionsAndDirectories) {
  Tree t;
  const std::string script = render_bash_completion(t.root);
  EXPECT_NE(script.find("compgen -W \"dedup stats --help -h --version\""), std::string::npos)
      << script;
  EXPECT_NE(script.find("case \"$prev\" in --store) COMPREPLY=($(compgen -d"), std::string::npos)
      << script;
  EXPECT_NE(script.find("case \"$prev\" in --in) COMPREPLY=($(compgen -f"), std::string::npos)
      << script;
  EXPECT_NE(script.find("complete -o filenames -F _tool tool"), std::string::npos) << script;
}

}  // namespace
}  // namespace neardup
