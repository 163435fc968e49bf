#include "common/help.h"

#include <algorithm>
#include <charconv>
#include <memory>
#include <sstream>

#include "common/edit_distance.h"

namespace neardup {
namespace {

constexpr std::string_view kExamplesHeading = "Examples:";

std::vector<const CLI::App*> commands_of(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App* sub) { return !sub->get_name().empty(); });
}

// "neardup dedup" for the dedup subcommand of neardup.
std::string command_path(const CLI::App& app) {
  std::string path = app.get_name();
  for (const CLI::App* parent = app.get_parent(); parent; parent = parent->get_parent()) {
    path = parent->get_name() + " " + path;
  }
  return path;
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& name : option->get_lnames()) names.push_back("--" + name);
    for (const auto& name : option->get_snames()) names.push_back("-" + name);
  }
  return names;
}

const CLI::Option* find_option(const CLI::App& app, std::string_view name) {
  for (const CLI::Option* option : app.get_options()) {
    for (const auto& long_name : option->get_lnames()) {
      if (name == "--" + long_name) return option;
    }
    for (const auto& short_name : option->get_snames()) {
      if (name == "-" + short_name) return option;
    }
  }
  return nullptr;
}

bool looks_numeric(std::string_view text) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size();
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  std::string match = closest_match(word, candidates);
  return match.empty() ? "" : "; did you mean '" + match + "'?";
}

// roff: a backslash is \e, a dash in an option name \-, and a line must not start with a dot
// or an apostrophe (control characters).
std::string roff(std::string_view text, bool dashes = false) {
  std::string out;
  bool line_start = true;
  for (char c : text) {
    if (line_start && (c == '.' || c == '\'')) out += "\\&";
    if (c == '\\') {
      out += "\\e";
    } else if (c == '-' && dashes) {
      out += "\\-";
    } else {
      out += c;
    }
    line_start = c == '\n';
  }
  return out;
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string out;
  for (const auto& word : words) {
    if (!out.empty()) out += separator;
    out += word;
  }
  return out;
}

void render_options_roff(std::ostringstream& out, const CLI::App& app,
                         const HelpFormatter& formatter) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->get_group().empty()) continue;  // hidden
    std::vector<std::string> names;
    for (const auto& name : option->get_snames())
      names.push_back("\\fB\\-" + roff(name, true) + "\\fR");
    for (const auto& name : option->get_lnames()) {
      names.push_back("\\fB\\-\\-" + roff(name, true) + "\\fR");
    }
    if (names.empty())
      names.push_back("\\fI" + roff(formatter.make_option_name(option, true)) + "\\fR");
    std::string value = value_name(*option);
    out << ".TP\n" << join(names, ", ");
    if (!value.empty() && !option->get_lnames().empty()) out << " \\fI" << roff(value) << "\\fR";
    out << "\n" << roff(formatter.make_option_desc(option)) << "\n";
  }
}

}  // namespace

std::string value_name(const CLI::Option& option) {
  if (!option.get_option_text().empty()) {
    std::string text = option.get_option_text();
    text.erase(0, text.find_first_not_of(' '));
    return text;
  }
  if (option.get_type_size() == 0) return "";
  std::string name = option.get_type_name();
  return name.substr(0, name.find(':'));
}

std::string HelpFormatter::make_option_name(const CLI::Option* option, bool is_positional) const {
  // A positional is shown by its value name: "FILE...", not "files".
  if (is_positional && !option->get_option_text().empty()) return value_name(*option);
  return CLI::Formatter::make_option_name(option, is_positional);
}

std::string HelpFormatter::make_option_opts(const CLI::Option* option) const {
  if (option->get_positional()) return "";  // make_option_name shows its value name
  std::string value = value_name(*option);
  return value.empty() ? "" : " " + value;
}

std::string HelpFormatter::make_option_desc(const CLI::Option* option) const {
  std::string desc = option->get_description();
  if (option->get_required()) desc += " (required)";
  if (option->get_expected_max() >= CLI::detail::expected_max_vector_size &&
      option->nonpositional()) {
    desc += " (repeatable)";
  }
  const std::string default_value = option->get_default_str();
  if (option->get_type_size() != 0 && !default_value.empty() && default_value != "[]") {
    desc += " [default: " + default_value + "]";
  }
  return desc;
}

std::string HelpFormatter::make_usage(const CLI::App* app, std::string name) const {
  std::string usage = CLI::Formatter::make_usage(app, std::move(name));
  if (auto at = usage.find("SUBCOMMAND"); at != std::string::npos) usage.replace(at, 10, "COMMAND");
  return usage;
}

void use_help_formatter(CLI::App& app) {
  app.formatter(std::make_shared<HelpFormatter>());
  app.option_defaults()->always_capture_default();
}

void set_examples(CLI::App* command, const std::vector<std::string>& examples) {
  std::string footer = command->get_footer();
  if (!footer.empty()) footer += "\n\n";
  footer += kExamplesHeading;
  for (const auto& example : examples) footer += "\n  " + example;
  command->footer(footer);
}

std::string closest_match(std::string_view word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_distance = 0;
  for (const auto& candidate : candidates) {
    std::size_t distance = edit_distance(word, candidate);
    if (best.empty() || distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  // Count only the letters: "--stroe" vs "--store" is a two-letter word problem, not seven.
  std::string_view letters = word.substr(std::min(word.find_first_not_of('-'), word.size()));
  if (best.empty() || best_distance > 2 || 2 * best_distance >= letters.size()) return "";
  return best;
}

std::expected<void, std::string> check_arguments(const CLI::App& root,
                                                 const std::vector<std::string>& args) {
  const CLI::App* current = &root;
  bool expect_command = !commands_of(root).empty();
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    if (arg == "-h" || arg == "--help" || (arg == "--version" && current == &root)) return {};
    if (arg.size() > 1 && arg[0] == '-' && !looks_numeric(arg)) {
      // "--name=value", "--name", "-x"; "-xVALUE" is checked by its first letter.
      std::string name = arg.starts_with("--") ? arg.substr(0, arg.find('=')) : arg.substr(0, 2);
      const CLI::Option* option = find_option(*current, name);
      if (!option) {
        return std::unexpected(command_path(*current) + ": unknown option '" + name + "'" +
                               did_you_mean(name, option_names(*current)) + " (see " +
                               command_path(*current) + " --help)");
      }
      const bool inline_value =
          arg.find('=') != std::string::npos || (!arg.starts_with("--") && arg.size() > 2);
      if (option->get_type_size() != 0 && !inline_value) ++i;  // its value
      continue;
    }
    if (!expect_command) continue;  // a positional argument
    const CLI::App* next = nullptr;
    std::vector<std::string> names;
    for (const CLI::App* sub : commands_of(*current)) {
      if (sub->check_name(arg)) next = sub;
      names.push_back(sub->get_name());
    }
    if (!next) {
      return std::unexpected(command_path(*current) + ": unknown command '" + arg + "'" +
                             did_you_mean(arg, names) + " (see " + command_path(*current) +
                             " --help)");
    }
    current = next;
    expect_command = !commands_of(*current).empty();
  }
  if (expect_command) {
    std::vector<std::string> names;
    for (const CLI::App* sub : commands_of(*current)) names.push_back(sub->get_name());
    return std::unexpected(command_path(*current) + ": a command is required, one of: " +
                           join(names, ", ") + " (see " + command_path(*current) + " --help)");
  }
  return {};
}

std::string render_man_page(const CLI::App& root, std::string_view section,
                            std::string_view version, const std::vector<ManSection>& extra) {
  HelpFormatter formatter;
  std::ostringstream out;
  std::string upper = root.get_name();
  std::ranges::transform(upper, upper.begin(), [](unsigned char c) { return std::toupper(c); });
  const auto commands = commands_of(root);
  out << ".TH " << upper << " " << section << " \"\" \"" << root.get_name() << " " << version
      << "\" \"" << (section == "8" ? "System Administration" : "User Commands") << "\"\n";
  std::string description = root.get_description();
  std::string summary = description.substr(
      description.find(": ") == std::string::npos ? 0 : description.find(": ") + 2);
  out << ".SH NAME\n" << root.get_name() << " \\- " << roff(summary) << "\n";
  out << ".SH SYNOPSIS\n.B " << root.get_name() << "\n"
      << (commands.empty() ? "[\\fIOPTIONS\\fR]\n"
                           : "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fIARGS\\fR]\n");
  out << ".SH DESCRIPTION\n" << roff(description) << "\n";
  out << ".SH OPTIONS\n";
  render_options_roff(out, root, formatter);
  if (!root.get_footer().empty()) out << ".PP\n.nf\n" << roff(root.get_footer()) << "\n.fi\n";
  if (!commands.empty()) out << ".SH COMMANDS\n";
  for (const CLI::App* command : commands) {
    std::string usage = formatter.make_usage(command, command_path(*command));
    usage = usage.substr(usage.find(':') + 2);
    while (!usage.empty() && usage.back() == '\n') usage.pop_back();
    out << ".SS \"" << roff(usage, true) << "\"\n" << roff(command->get_description()) << "\n";
    render_options_roff(out, *command, formatter);
    if (!command->get_footer().empty()) {
      out << ".PP\n.nf\n" << roff(command->get_footer()) << "\n.fi\n";
    }
  }
  for (const auto& [title, text] : extra) {
    out << ".SH " << roff(title) << "\n";
    std::istringstream paragraphs(text);
    std::string line;
    bool preformatted = false;
    while (std::getline(paragraphs, line)) {
      // Lines indented by two spaces are kept as they are (tables, commands).
      const bool indented = line.starts_with("  ");
      if (indented != preformatted) {
        out << (indented ? ".PP\n.nf\n" : ".fi\n");
        preformatted = indented;
      }
      if (line.empty()) {
        out << ".PP\n";
      } else {
        out << roff(line) << "\n";
      }
    }
    if (preformatted) out << ".fi\n";
  }
  return out.str();
}

std::string render_bash_completion(const CLI::App& root) {
  const std::string function = "_" + root.get_name();
  std::ostringstream out;
  auto options_case = [&](const CLI::App& app, std::string_view indent) {
    std::vector<std::string> files, dirs;
    for (const CLI::Option* option : app.get_options()) {
      std::string value = value_name(*option);
      const bool dir = value == "DIR", file = value == "FILE";
      if ((!dir && !file) || !option->nonpositional()) continue;
      for (const auto& name : option->get_lnames()) (dir ? dirs : files).push_back("--" + name);
    }
    if (!dirs.empty()) {
      out << indent << "case \"$prev\" in " << join(dirs, "|")
          << ") COMPREPLY=($(compgen -d -- \"$cur\")); return ;; esac\n";
    }
    if (!files.empty()) {
      out << indent << "case \"$prev\" in " << join(files, "|")
          << ") COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac\n";
    }
    std::vector<std::string> names;
    for (const auto& name : option_names(app)) names.push_back(name);
    out << indent << "opts=\"" << join(names, " ") << "\"\n";
  };
  out << "# bash completion for " << root.get_name() << " (generated from its --help)\n"
      << function << "() {\n"
      << "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd= opts= i\n";
  const auto commands = commands_of(root);
  if (!commands.empty()) {
    std::vector<std::string> names;
    for (const CLI::App* command : commands) names.push_back(command->get_name());
    out << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
        << "    case ${COMP_WORDS[i]} in -*) ;; *) cmd=${COMP_WORDS[i]}; break ;; esac\n"
        << "  done\n"
        << "  case $cmd in\n"
        << "    '')\n"
        << "      COMPREPLY=($(compgen -W \"" << join(names, " ") << " "
        << join(option_names(root), " ") << "\" -- \"$cur\"))\n"
        << "      return ;;\n";
    for (const CLI::App* command : commands) {
      out << "    " << command->get_name() << ")\n";
      options_case(*command, "      ");
      out << "      ;;\n";
    }
    out << "  esac\n";
  } else {
    options_case(root, "  ");
  }
  out << "  if [[ $cur == -* ]]; then\n"
      << "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
      << "  else\n"
      << "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
      << "  fi\n"
      << "}\n"
      << "complete -o filenames -F " << function << " " << root.get_name() << "\n";
  return out.str();
}

}  // namespace neardup
