#include "pipeline/denoise/html_outline.h"

#include <libxml/HTMLparser.h>
#include <libxml/parser.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <utility>

#include "common/ascii.h"
#include "pipeline/denoise/html_prescan.h"
#include "pipeline/denoise/html_vocabulary.h"

namespace neardup::denoise_internal {
namespace {

std::string_view as_view(const xmlChar* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

std::uint32_t fnv1a(std::string_view s) {
  std::uint32_t h = 2166136261u;
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return h == 0 ? 1 : h;
}

class OutlineBuilder {
 public:
  OutlineBuilder(std::uint32_t max_nodes, std::chrono::steady_clock::time_point deadline)
      : max_nodes_(max_nodes), deadline_(deadline) {}

  void parse(std::string_view html);
  Outline take() && { return std::move(out_); }

 private:
  // One open element. Counters below are derived from these bits so that end tags undo
  // exactly what start tags did.
  struct Open {
    std::int32_t element;  // -1 when not recorded (past max_nodes)
    std::int32_t owner;    // block owner for text directly inside
    std::uint8_t bits;
  };
  enum OpenBit : std::uint8_t {
    kOpenInvisible = 1,
    kOpenLink = 2,
    kOpenTitle = 4,
    kOpenH1 = 8,
    kOpenBlock = 16,
    kOpenCode = 32,
    kOpenFigure = 64,
  };

  static void on_start(void* ctx, const xmlChar* name, const xmlChar** attrs) {
    static_cast<OutlineBuilder*>(ctx)->start(name, attrs);
  }
  static void on_end(void* ctx, const xmlChar*) { static_cast<OutlineBuilder*>(ctx)->end(); }
  static void on_text(void* ctx, const xmlChar* ch, int len) {
    static_cast<OutlineBuilder*>(ctx)->characters(
        std::string_view(reinterpret_cast<const char*>(ch), static_cast<std::size_t>(len)));
  }
  static void on_ignored(void*, const xmlChar*, int) {}

  void start(const xmlChar* name, const xmlChar** attrs);
  void end();
  TagInfo tag_of(const xmlChar* name);
  void characters(std::string_view text);
  void break_block() {
    ++block_;
    last_space_ = true;
  }
  std::uint16_t classify(const xmlChar** attrs, std::int8_t& weight, std::uint32_t& class_hash,
                         bool& hidden);

  Outline out_;
  std::vector<Open> stack_;
  std::uint32_t max_nodes_;
  std::chrono::steady_clock::time_point deadline_;
  xmlParserCtxtPtr ctxt_ = nullptr;
  bool stopped_ = false;
  int invisible_ = 0, links_ = 0, title_ = 0, h1_ = 0, code_ = 0, figure_ = 0;
  bool title_seen_ = false, h1_seen_ = false;
  std::uint32_t block_ = 0;
  bool last_space_ = true;
  std::string scratch_, scratch2_;
  // lookup_tag's answers by the name's address: libxml2 hands a start tag's name from its
  // dictionary (or a string literal, for the tags it implies), so a name keeps its address for
  // the whole parse. The name is compared too: an address that held another name is a miss.
  struct CachedTag {
    const xmlChar* name = nullptr;
    TagInfo info;
  };
  std::array<CachedTag, 64> tag_cache_{};
};

void OutlineBuilder::parse(std::string_view html) {
  // xmlInitParser is idempotent but not safe to race in old libxml2; a function-local static
  // runs it exactly once.
  static const bool initialised = (xmlInitParser(), true);
  (void)initialised;
  if (html.empty()) return;
  if (html.size() > static_cast<std::size_t>(INT_MAX)) html = html.substr(0, INT_MAX);

  ctxt_ = htmlNewParserCtxt();
  if (ctxt_ == nullptr) return;
  // Our own SAX handler, copied over the context's: no xmlDoc is ever built. Error callbacks
  // stay null, which (with NOERROR/NOWARNING) keeps libxml2 quiet for this context only.
  xmlSAXHandler sax;
  std::memset(&sax, 0, sizeof sax);
  sax.startElement = &OutlineBuilder::on_start;
  sax.endElement = &OutlineBuilder::on_end;
  sax.characters = &OutlineBuilder::on_text;
  sax.ignorableWhitespace = &OutlineBuilder::on_text;  // spaces between inline tags separate words
  sax.cdataBlock = &OutlineBuilder::on_ignored;        // script and style bodies
  *ctxt_->sax = sax;
  ctxt_->userData = this;
  out_.text.reserve(html.size() / 4);
  out_.elements.reserve(std::min<std::size_t>(html.size() / 48, max_nodes_) + 16);
  out_.runs.reserve(html.size() / 64 + 16);
  // Forcing UTF-8 (and IGNORE_ENC) keeps a stale <meta charset> from re-decoding the text.
  constexpr int kOptions = HTML_PARSE_RECOVER | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |
                           HTML_PARSE_NONET | HTML_PARSE_IGNORE_ENC;
  htmlDocPtr doc = htmlCtxtReadMemory(ctxt_, html.data(), static_cast<int>(html.size()), nullptr,
                                      "UTF-8", kOptions);
  if (doc != nullptr) xmlFreeDoc(doc);  // not expected with this handler
  htmlFreeParserCtxt(ctxt_);
  ctxt_ = nullptr;
  while (!stack_.empty()) end();
  // Elements left open by a stopped parse.
  for (auto& e : out_.elements) {
    if (e.end == 0) e.end = static_cast<std::int32_t>(out_.elements.size());
  }
}

// Reads only the attributes in kOutlineAttributes (html_outline.h): the prescan drops the rest.
std::uint16_t OutlineBuilder::classify(const xmlChar** attrs, std::int8_t& weight,
                                       std::uint32_t& class_hash, bool& hidden) {
  std::uint16_t flags = 0;
  int w = 0;
  if (attrs == nullptr) return 0;
  for (const xmlChar** a = attrs; a[0] != nullptr; a += 2) {
    std::string_view name = as_view(a[0]);
    std::string_view value = as_view(a[1]);
    switch (name.size()) {
      case 2:
        if (name == "id") {
          lower_into(value, scratch_);
          const std::uint8_t bits = name_bits(scratch_);
          flags |= name_flags(bits);
          w += name_weight(bits);
        }
        break;
      case 3:
        if (name == "rel" && value == "author") flags |= kBylineClass;
        break;
      case 4:
        if (name == "role") {
          lower_into(value, scratch_);
          if (scratch_ == "menu" || scratch_ == "menubar" || scratch_ == "complementary" ||
              scratch_ == "navigation" || scratch_ == "alert" || scratch_ == "alertdialog" ||
              scratch_ == "dialog") {
            flags |= kUnlikelyClass;
          }
        }
        break;
      case 5:
        if (name == "class") {
          lower_into(value, scratch_);
          const std::uint8_t bits = name_bits(scratch_);
          flags |= name_flags(bits);
          w += name_weight(bits);
          class_hash = value.empty() ? 0 : fnv1a(value);
        } else if (name == "style") {
          if (style_hides(value, scratch2_)) hidden = true;
        }
        break;
      case 6:
        if (name == "hidden") hidden = true;
        break;
      case 8:
        if (name == "itemprop" && value.find("author") != value.npos) flags |= kBylineClass;
        break;
      case 11:
        if (name == "aria-hidden" && value == "true") hidden = true;
        break;
      default:
        break;
    }
  }
  weight = static_cast<std::int8_t>(w);
  return flags;
}

TagInfo OutlineBuilder::tag_of(const xmlChar* name) {
  CachedTag& cached = tag_cache_[(reinterpret_cast<std::uintptr_t>(name) >> 3) % tag_cache_.size()];
  const std::string_view view = as_view(name);
  if (cached.name != name || cached.info.name != view) cached = {name, lookup_tag(view)};
  return cached.info;
}

void OutlineBuilder::start(const xmlChar* name, const xmlChar** attrs) {
  if (stopped_) return;
  const TagInfo info = tag_of(name);
  const HtmlTag tag = info.tag;
  Open open{-1, stack_.empty() ? -1 : stack_.back().owner, 0};
  bool hidden = (info.traits & kHidden) != 0;

  if (tag == HtmlTag::kMeta && attrs != nullptr && out_.og_title.empty()) {
    std::string_view property, content;
    for (const xmlChar** a = attrs; a[0] != nullptr; a += 2) {
      std::string_view an = as_view(a[0]);
      if (an == "property" || an == "name") property = as_view(a[1]);
      if (an == "content") content = as_view(a[1]);
    }
    if (property == "og:title") append_collapsed(content, out_.og_title);
    trim_trailing_space(out_.og_title);
  }

  std::int8_t weight = 0;
  std::uint32_t class_hash = 0;
  std::uint16_t flags = classify(attrs, weight, class_hash, hidden);

  if (tag == HtmlTag::kTitle && !title_seen_ && invisible_ == 0) {
    title_seen_ = true;
    open.bits |= kOpenTitle;
    ++title_;
  }
  if (hidden) {
    open.bits |= kOpenInvisible;
    ++invisible_;
  }
  if (invisible_ > 0) flags |= kInvisible;
  if (code_ > 0) flags |= kInCode;
  if (figure_ > 0) flags |= kInFigure;
  if (info.traits & kBoilerplate) flags |= kBoilerplateTag;

  if (out_.elements.size() < max_nodes_) {
    const auto index = static_cast<std::int32_t>(out_.elements.size());
    OutlineElement& e = out_.elements.emplace_back();
    e.tag = tag;
    e.class_weight = weight;
    e.flags = flags;
    e.parent = stack_.empty() ? -1 : stack_.back().element;
    e.run_begin = static_cast<std::uint32_t>(out_.runs.size());
    e.class_hash = class_hash;
    if (e.parent >= 0) {
      OutlineElement& parent = out_.elements[static_cast<std::size_t>(e.parent)];
      if (parent.child_count < UINT16_MAX) ++parent.child_count;
      if (info.traits & kBlock) parent.flags |= kHasBlockChild;
    }
    open.element = index;
    if (info.traits & kBlock) open.owner = index;
    // The clock is read every 1024 elements: cheap, and fine-grained enough for a deadline in
    // milliseconds.
    if ((index & 1023) == 1023 && std::chrono::steady_clock::now() > deadline_) {
      out_.timed_out = true;
      stopped_ = true;
      xmlStopParser(ctxt_);
    }
  } else {
    out_.over_max_nodes = true;
    open.owner = -1;
  }

  if (tag == HtmlTag::kA) {
    open.bits |= kOpenLink;
    ++links_;
  }
  if (tag == HtmlTag::kH1 && !h1_seen_ && invisible_ == 0) {
    h1_seen_ = true;
    open.bits |= kOpenH1;
    ++h1_;
  }
  if (tag == HtmlTag::kCode || tag == HtmlTag::kPre) {
    open.bits |= kOpenCode;
    ++code_;
  }
  if (tag == HtmlTag::kFigure) {
    open.bits |= kOpenFigure;
    ++figure_;
  }
  if (info.traits & (kBlock | kBreak)) {
    open.bits |= kOpenBlock;
    break_block();
  }
  stack_.push_back(open);
}

void OutlineBuilder::end() {
  if (stack_.empty()) return;
  const Open open = stack_.back();
  stack_.pop_back();
  if (open.bits & kOpenInvisible) --invisible_;
  if (open.bits & kOpenLink) --links_;
  if (open.bits & kOpenTitle) {
    --title_;
    trim_trailing_space(out_.title);
  }
  if (open.bits & kOpenH1) {
    --h1_;
    trim_trailing_space(out_.first_h1);
  }
  if (open.bits & kOpenCode) --code_;
  if (open.bits & kOpenFigure) --figure_;
  if (open.bits & kOpenBlock) break_block();
  if (open.element >= 0) {
    OutlineElement& e = out_.elements[static_cast<std::size_t>(open.element)];
    e.end = static_cast<std::int32_t>(out_.elements.size());
    e.run_end = static_cast<std::uint32_t>(out_.runs.size());
  }
}

void OutlineBuilder::characters(std::string_view text) {
  if (stopped_) return;
  if (title_ > 0) append_collapsed(text, out_.title);
  if (invisible_ > 0) return;
  if (h1_ > 0) append_collapsed(text, out_.first_h1);

  const std::int32_t element = stack_.empty() ? -1 : stack_.back().element;
  const std::int32_t owner = stack_.empty() ? -1 : stack_.back().owner;
  std::string& buf = out_.text;
  const auto begin = static_cast<std::uint32_t>(buf.size());
  const Collapsed written = append_collapsed(text, buf, last_space_);
  last_space_ = written.space;
  const std::uint32_t chars = written.chars;
  const auto commas = static_cast<std::uint16_t>(written.commas);
  const auto end = static_cast<std::uint32_t>(buf.size());
  if (end == begin) return;
  if (!out_.runs.empty()) {
    TextRun& last = out_.runs.back();
    if (last.end == begin && last.element == element && last.block == block_) {
      last.end = end;
      last.chars += chars;
      last.commas = static_cast<std::uint16_t>(std::min<int>(last.commas + commas, UINT16_MAX));
      return;
    }
  }
  out_.runs.push_back(TextRun{begin, end, element, owner, block_, chars, commas, links_ > 0});
}

}  // namespace

void lower_into(std::string_view s, std::string& out) {
  out.assign(s);
  for (char& c : out) c = ascii_lower(c);
}

Outline parse_outline(std::string_view utf8_html, std::uint32_t max_nodes,
                      std::chrono::steady_clock::time_point deadline, bool prescan) {
  OutlineBuilder builder(max_nodes, deadline);
  thread_local std::string scratch;
  builder.parse(prescan ? prescan_html(utf8_html, scratch) : utf8_html);
  return std::move(builder).take();
}

}  // namespace neardup::denoise_internal
