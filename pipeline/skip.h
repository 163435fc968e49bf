// Why a page was not fingerprinted. A skipped page is still output (status "skipped"); it is
// never an error and never stops a run.
#pragma once

#include <string>

namespace neardup {

struct Skip {
  std::string reason;  // a stable code: low_content, too_large, empty_body, not_text, ...
  std::string detail;  // free text for humans, may be empty
};

}  // namespace neardup
