// A WARC response's page as an input record (docs/records.md), so that everything after the
// input — dedup, the daemon via `neardup produce --warc` — reads WARC pages exactly as it reads
// JSON lines.
#pragma once

#include <string>
#include <string_view>

#include "config/config.h"
#include "warc/warc_reader.h"

namespace neardup::warc {

// One JSON object, with the field names of `fields`:
//   url           WARC-Target-URI
//   id            WARC-Record-ID without angle brackets ("urn:uuid:..."); absent when missing,
//                 so that the id defaults to the url
//   body_base64   the decoded HTTP body, as raw bytes (its charset is read from them)
//   content_type  the HTTP Content-Type header, when present (its charset is a hint)
//   fetched_at    WARC-Date in epoch milliseconds; absent when missing or malformed
//   warc          {"file": FILE, "offset": N}: where the record is (passed through untouched;
//                 "in_member" is added inside a whole-file gzip stream)
std::string to_input_record(const WarcPage& page, const WarcOffset& where, std::string_view file,
                            const InputFields& fields);

}  // namespace neardup::warc
