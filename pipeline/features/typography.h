// typography: folds the typographic variants that differ between copies of one text, so that
// they tokenise alike. features runs it on the UTF-16 text before ICU's nfkc_cf normalisation.
//
// Two steps, in this order:
// 1. UTF-8 read as windows-1252 (mojibake) is repaired: a run of characters that are the
//    windows-1252 (or ISO-8859-1) readings of the bytes of one UTF-8 sequence becomes that
//    character again, for the sequences that text really shows: leads C2-C5 (Latin-1 and
//    Latin Extended-A: "Ã©" -> "é", "Å‚" -> "ł", "Â©" -> "©") and E2 80-84 (punctuation, "€"
//    and "™": "â€™" -> "’", "â€”" -> "—"). "â€" before anything else is the right double quote
//    whose third byte (0x9D, undefined in windows-1252) was lost, and "Â" before a space is a
//    no-break space read as windows-1252. Text that was read wrongly twice is repaired twice.
//    Other leads are left alone: "ß“" or "É”" in correct German or French text would also
//    read as a UTF-8 sequence.
// 2. Single characters are folded: apostrophes and single quotes (’ ‘ ‚ ‛ ′ ‵ ʼ ´ `) to ',
//    double quotes (“ ” „ ‟ ″ ‶ « » ‹ ›) to ", dashes and minus signs (‐ ‑ ‒ – — ― − ﹘ ﹣ －)
//    to -. The apostrophe is the one that matters: ICU keeps "don’t" and "don't" as one word
//    each, but different words; quotes and dashes are not words and only keep the folded text
//    uniform.
// nfkc_cf already covers the rest of the typography: the ellipsis becomes "...", no-break,
// narrow and figure spaces become spaces, and zero-width spaces, joiners, the word joiner,
// the byte order mark and soft hyphens are removed.
//
// Pure: no state; any number of threads may call at once.
#pragma once

#include <cstddef>
#include <span>

namespace neardup {

// Folds text in place and returns its new length (never longer: every fold maps one or more
// UTF-16 code units to one). Text without any foldable character is left untouched.
std::size_t fold_typography(std::span<char16_t> text);

}  // namespace neardup
