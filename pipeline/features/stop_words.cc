#include "pipeline/features/stop_words.h"

#include <algorithm>
#include <array>
#include <vector>

namespace neardup {
namespace {

// Articles, pronouns, prepositions, conjunctions, auxiliaries and particles only: words that
// carry topic (nouns, most verbs) stay out, so that two different articles do not look alike
// once their stop words are gone.
// A table: several words per line.
// clang-format off
constexpr std::string_view kStopWords[] = {
    // English
    "a", "about", "after", "all", "also", "an", "and", "any", "are", "as", "at", "be", "been",
    "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he",
    "her", "his", "how", "i", "if", "in", "into", "is", "it", "its", "more", "most", "no", "not",
    "of", "on", "or", "other", "our", "she", "so", "than", "that", "the", "their", "them", "then",
    "there", "these", "they", "this", "those", "to", "up", "was", "we", "were", "what", "when",
    "which", "who", "will", "with", "would", "you", "your",
    // German
    "aber", "als", "am", "an", "auch", "auf", "aus", "bei", "bis", "das", "dass", "dem", "den",
    "der", "des", "die", "ein", "eine", "einem", "einen", "einer", "eines", "er", "es", "für",
    "hat", "ich", "im", "ist", "mit", "nach", "nicht", "noch", "nur", "oder", "sich", "sie", "sind",
    "um", "und", "vom", "von", "vor", "war", "wie", "wird", "wurde", "zu", "zum", "zur",
    // French
    "au", "aux", "avec", "ce", "ces", "dans", "de", "des", "du", "elle", "en", "est", "et", "il",
    "ils", "la", "le", "les", "leur", "mais", "ne", "nous", "ou", "par", "pas", "pour", "que",
    "qui", "sa", "se", "ses", "son", "sont", "sur", "un", "une", "vous",
    // Spanish
    "al", "como", "con", "del", "el", "ella", "es", "esta", "este", "las", "lo", "los", "más",
    "para", "pero", "por", "se", "su", "sus", "una", "y", "ya",
    // Portuguese
    "ao", "às", "com", "da", "das", "do", "dos", "e", "ela", "ele", "em", "foi", "mas", "na", "nas",
    "no", "nos", "o", "os", "pela", "pelo", "ser", "seu", "sua", "um", "uma",
    // Polish
    "ale", "być", "był", "była", "było", "czy", "dla", "do", "i", "jak", "jest", "jego", "jej",
    "już", "ich", "ma", "na", "nie", "o", "od", "po", "przez", "się", "są", "tak", "także", "to",
    "w", "we", "z", "za", "że", "ze",
    // Russian
    "а", "без", "бы", "был", "была", "были", "было", "в", "во", "вы", "да", "для", "до", "его",
    "ее", "её", "же", "за", "и", "из", "или", "к", "как", "ко", "ли", "мы", "на", "не", "но", "о",
    "об", "он", "она", "они", "оно", "от", "по", "при", "с", "со", "так", "также", "то", "только",
    "у", "уже", "что", "чтобы", "это", "этот", "я",
    // Chinese
    "的", "了", "是", "在", "和", "与", "及", "或", "也", "都", "就", "而", "着", "之", "其", "这", "那", "这个", "那个",
    "一个", "我们", "他们", "你们", "它们", "他", "她", "它", "我", "你", "为", "以", "于", "对", "将", "被", "把", "从",
    "并", "但", "但是", "而且", "因为", "所以", "如果", "虽然", "还", "又", "很", "已", "已经", "地", "得", "所", "该", "此",
    "吗", "呢", "吧", "啊", "这些", "那些",
    // Japanese
    "の", "に", "は", "を", "た", "が", "で", "て", "と", "し", "れ", "さ", "ある", "いる", "も", "する", "から", "な",
    "こと", "として", "や", "れる", "など", "ない", "この", "ため", "その", "よう", "また", "という", "まで", "なる", "へ", "か",
    "だ", "これ", "によって", "より", "ず", "られる", "において", "ば", "なく", "しかし", "について", "です", "ます",
};
// clang-format on

struct StopWordSet {
  std::vector<std::string_view> sorted;
  StopWordSet() : sorted(std::begin(kStopWords), std::end(kStopWords)) {
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
};

}  // namespace

bool is_stop_word(std::string_view token) {
  static const StopWordSet set;
  return std::binary_search(set.sorted.begin(), set.sorted.end(), token);
}

std::span<const std::string_view> builtin_stop_words() { return kStopWords; }

}  // namespace neardup
