#include "pipeline/denoise/readability_rules.h"

namespace neardup::denoise_internal {

// Readability.js _initializeNode: a prior by tag.
double tag_prior(HtmlTag t) {
  switch (t) {
    case HtmlTag::kDiv:
      return 5;
    case HtmlTag::kPre:
    case HtmlTag::kTd:
    case HtmlTag::kBlockquote:
      return 3;
    case HtmlTag::kAddress:
    case HtmlTag::kOl:
    case HtmlTag::kUl:
    case HtmlTag::kDl:
    case HtmlTag::kDd:
    case HtmlTag::kDt:
    case HtmlTag::kLi:
    case HtmlTag::kForm:
      return -3;
    case HtmlTag::kTh:
      return -5;
    default:
      return is_heading(t) ? -5 : 0;
  }
}

// Paragraph-like owners whose text is scored (Readability.js DEFAULT_TAGS_TO_SCORE plus the
// divs it turns into paragraphs). List items and table headers are left out: scoring them
// lifts navigation lists.
bool scores_text(HtmlTag t) {
  switch (t) {
    case HtmlTag::kLi:
    case HtmlTag::kDt:
    case HtmlTag::kDd:
    case HtmlTag::kTh:
    case HtmlTag::kH1:
    case HtmlTag::kCaption:
    case HtmlTag::kFigcaption:
    case HtmlTag::kAddress:
    case HtmlTag::kOption:
    case HtmlTag::kSummary:
    case HtmlTag::kHtml:
    case HtmlTag::kHead:
    case HtmlTag::kTitle:
      return false;
    default:
      return true;
  }
}

// A container whose own loose text Readability would wrap in <p>s that score the container
// itself rather than its parent.
bool wraps_loose_text(const OutlineElement& e) {
  if (!(e.flags & kHasBlockChild)) return false;
  switch (e.tag) {
    case HtmlTag::kP:
    case HtmlTag::kPre:
    case HtmlTag::kTd:
    case HtmlTag::kBlockquote:
      return false;
    default:
      return !is_heading(e.tag);
  }
}

}  // namespace neardup::denoise_internal
