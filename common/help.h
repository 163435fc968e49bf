// Command-line help in the manner of kcat and ripgrep, for `neardup` and `neardupd`:
//
//   - HelpFormatter: each option shows its value name (DIR, FILE, N), "(required)" and its
//     default, never the parser's internals ("INT:INT in [1 - 16]"); a command's footer holds
//     its examples (set_examples).
//   - check_arguments: before parsing, an unknown command or option is an error that suggests
//     the closest known name ("did you mean 'dedup'?"), instead of the parser's "A subcommand is
//     required" or "--store is required".
//   - render_man_page / render_bash_completion: a man page and a bash completion script made from
//     the same command tree, so they cannot drift from --help.
//
// Usage (the binary's main):
//   CLI::App app{...};
//   use_help_formatter(app);            // before adding options: defaults are captured
//   ... add subcommands and options; set_examples(sub, {...}) ...
//   if (auto bad = check_arguments(app, args); !bad) { std::cerr << bad.error(); return 2; }
//   app.parse(argc, argv);
#pragma once

#include <CLI/CLI.hpp>
#include <cstddef>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace neardup {

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() { column_width(32); }
  std::string make_option_name(const CLI::Option* option, bool is_positional) const override;
  std::string make_option_opts(const CLI::Option* option) const override;
  std::string make_option_desc(const CLI::Option* option) const override;
  std::string make_usage(const CLI::App* app, std::string name) const override;
};

// Installs HelpFormatter on `app` (subcommands added later inherit it) and makes every option
// added later capture its default value for the help.
void use_help_formatter(CLI::App& app);

// The value an option takes, as help and completion show it: its option_text if set, else its
// type name without the validator's description ("N" for "N:INT in [1 - 16]"); empty for flags.
std::string value_name(const CLI::Option& option);

// Sets `command`'s footer to an "Examples:" section, one command line per entry.
void set_examples(CLI::App* command, const std::vector<std::string>& examples);
// The examples set by set_examples (empty when none).
std::vector<std::string> examples_of(const CLI::App& command);

// The candidate closest to `word`, if it is close enough to be a likely misspelling (at most
// 2 edits, and fewer than half the word's length); empty otherwise. Ties: the first candidate.
std::string closest_match(std::string_view word, const std::vector<std::string>& candidates);

// Checks the command words and option names of `args` (argv without the program name) against
// the command tree rooted at `root`, which requires one subcommand when it has any. Returns the
// message for the first unknown command, unknown option or missing command, e.g.
//   "neardup: unknown command 'dedpu'; did you mean 'dedup'? (see neardup --help)"
//   "neardup dedup: unknown option '--stroe'; did you mean '--store'? (see neardup dedup --help)"
// Option values and everything after "--" are not checked; the parser checks the rest.
std::expected<void, std::string> check_arguments(const CLI::App& root,
                                                 const std::vector<std::string>& args);

// A man page (roff, man(7) macros) for `root`: NAME, SYNOPSIS, DESCRIPTION, OPTIONS, one
// subsection per subcommand with its options and examples, then the extra sections given
// (title -> body, plain text paragraphs separated by blank lines).
struct ManSection {
  std::string title;
  std::string text;
};
std::string render_man_page(const CLI::App& root, std::string_view section,
                            std::string_view version, const std::vector<ManSection>& extra);

// A bash completion script for `root`: command names, each command's options, and file or
// directory names for options whose value name is FILE or DIR (and for positionals).
std::string render_bash_completion(const CLI::App& root);

}  // namespace neardup
