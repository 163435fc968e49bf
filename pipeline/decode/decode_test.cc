#include "pipeline/decode/decode.h"

#include <gtest/gtest.h>
#include <unicode/ucnv.h>

#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "pipeline/decode/convert.h"
#include "pipeline/decode/detect.h"
#include "pipeline/decode/sniff.h"

namespace neardup {
namespace {

// Encodes UTF-8 text into the charset of ICU converter `converter`: the fixtures are built here,
// so the same text can be checked to come back from every charset.
std::string encode(const std::string& utf8, const char* converter) {
  std::string out(utf8.size() * 4 + 16, '\0');
  UErrorCode status = U_ZERO_ERROR;
  int32_t length = ucnv_convert(converter, "UTF-8", out.data(), static_cast<int32_t>(out.size()),
                                utf8.data(), static_cast<int32_t>(utf8.size()), &status);
  EXPECT_TRUE(U_SUCCESS(status)) << converter << ": " << u_errorName(status);
  out.resize(static_cast<std::size_t>(length));
  return out;
}

// A page whose body repeats the paragraphs, so that detection has a realistic amount of text.
std::string page(const std::string& head, const std::vector<std::string>& paragraphs) {
  std::string html = "<!DOCTYPE html>\n<html><head>" + head + "<title>" + paragraphs[0] +
                     "</title></head>\n<body>\n";
  for (int repeat = 0; repeat < 4; ++repeat) {
    for (const std::string& paragraph : paragraphs) html += "<p>" + paragraph + "</p>\n";
  }
  return html + "</body></html>\n";
}

std::string meta(const std::string& label) { return "<meta charset=\"" + label + "\">"; }

struct Sample {
  const char* language;
  std::vector<std::string> paragraphs;
};

const Sample kChinese{"simplified Chinese",
                      {"北京时间今天上午，国家统计局发布了最新的经济数据。",
                       "专家认为，消费市场继续恢复，就业形势总体稳定。",
                       "记者从有关部门了解到，明年将进一步扩大对外开放。"}};
const Sample kTraditional{"traditional Chinese",
                          {"台北時間今天上午，主計總處發布了最新的經濟數據。",
                           "專家認為，消費市場繼續恢復，就業情勢總體穩定。",
                           "記者從有關部門了解到，明年將進一步擴大對外開放。"}};
const Sample kJapanese{"Japanese",
                       {"東京都は今日の午前、新しい経済対策を発表しました。",
                        "専門家によると、消費はゆっくりと回復しているということです。",
                        "政府は来年度の予算案について、さらに議論を続ける方針です。"}};
const Sample kKorean{"Korean",
                     {"서울시는 오늘 오전 새로운 경제 대책을 발표했습니다.",
                      "전문가들은 소비가 천천히 회복되고 있다고 말했습니다.",
                      "정부는 내년도 예산안에 대해 논의를 계속할 방침입니다."}};
const Sample kRussian{"Russian",
                      {"Сегодня утром в Москве были опубликованы новые экономические данные.",
                       "По мнению экспертов, потребительский рынок продолжает восстанавливаться.",
                       "Правительство намерено продолжить обсуждение бюджета на следующий год."}};
const Sample kPolish{"Polish",
                     {"Wczoraj w Warszawie opublikowano ważne wiadomości dla społeczeństwa.",
                      "Zażółć gęślą jaźń: źródła podają, że gospodarka rośnie szybciej.",
                      "Rząd zamierza kontynuować dyskusję o budżecie na przyszły rok."}};
const Sample kGerman{"German",
                     {"Größere Übersicht über die Straßenbahn in München und Köln.",
                      "Die Bürger äußerten sich überwiegend zufrieden mit der Lösung.",
                      "Für nächstes Jahr plant die Regierung weitere Maßnahmen."}};
const Sample kGreek{"Greek",
                    {"Σήμερα το πρωί στην Αθήνα δημοσιεύθηκαν νέα οικονομικά στοιχεία.",
                     "Σύμφωνα με τους ειδικούς, η αγορά συνεχίζει να ανακάμπτει.",
                     "Η κυβέρνηση σκοπεύει να συνεχίσει τη συζήτηση για τον προϋπολογισμό."}};

struct Case {
  const Sample* sample;
  const char* encoder;  // ICU converter that writes the bytes
  const char* label;    // what the page declares
  const char* charset;  // what decode must report
};

// Legacy charsets with their usual labels.
const std::vector<Case> kLegacyCases{
    {&kChinese, "gbk", "gbk", "gbk"},
    {&kChinese, "gb18030", "gb18030", "gb18030"},
    {&kTraditional, "windows-950", "big5", "big5"},
    {&kJapanese, "windows-31j", "Shift_JIS", "shift_jis"},
    {&kJapanese, "euc-jp", "EUC-JP", "euc-jp"},
    {&kKorean, "windows-949", "euc-kr", "euc-kr"},
    {&kRussian, "windows-1251", "windows-1251", "windows-1251"},
    {&kRussian, "koi8-r", "koi8-r", "koi8-r"},
    {&kRussian, "iso-8859-5", "ISO-8859-5", "iso-8859-5"},
    {&kPolish, "iso-8859-2", "iso-8859-2", "iso-8859-2"},
    {&kGerman, "iso-8859-1", "iso-8859-1", "windows-1252"},
    {&kGerman, "iso-8859-15", "ISO-8859-15", "iso-8859-15"},
    {&kGreek, "iso-8859-7", "iso-8859-7", "iso-8859-7"},
};

void expect_text(const Decoded& decoded, const Sample& sample) {
  for (const std::string& paragraph : sample.paragraphs) {
    EXPECT_NE(decoded.text.find("<p>" + paragraph + "</p>"), std::string::npos)
        << "missing: " << paragraph;
  }
}

TEST(Decode, CorrectlyDeclaredLegacyCharsetsDecodeToTheOriginalText) {
  for (const Case& c : kLegacyCases) {
    SCOPED_TRACE(std::string(c.sample->language) + " in " + c.encoder);
    auto decoded = decode(encode(page(meta(c.label), c.sample->paragraphs), c.encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, c.charset);
    EXPECT_EQ(decoded->charset_source, "meta");
    expect_text(*decoded, *c.sample);
  }
}

TEST(Decode, UndeclaredLegacyCharsetsAreDetected) {
  for (const Case& c : kLegacyCases) {
    SCOPED_TRACE(std::string(c.sample->language) + " in " + c.encoder);
    auto decoded = decode(encode(page("", c.sample->paragraphs), c.encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset_source, "detected");
    expect_text(*decoded, *c.sample);
  }
}

TEST(Decode, LegacyMetaOverUtf8BytesDecodesAsUtf8) {
  for (const Case& c : kLegacyCases) {
    SCOPED_TRACE(std::string(c.label) + " label over UTF-8 " + c.sample->language);
    auto decoded = decode(page(meta(c.label), c.sample->paragraphs), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, "utf-8");
    EXPECT_EQ(decoded->charset_source, "detected");
    expect_text(*decoded, *c.sample);
  }
}

TEST(Decode, LegacyLabelOverAnotherLegacyCharsetIsOverruledByDetection) {
  const std::vector<Case> wrong{
      {&kRussian, "windows-1251", "iso-8859-1", "windows-1251"},
      {&kRussian, "koi8-r", "windows-1251", "koi8-r"},
      {&kTraditional, "windows-950", "gb2312", "big5"},
      {&kJapanese, "euc-jp", "Shift_JIS", "euc-jp"},
      {&kChinese, "gbk", "big5", "gb18030"},  // uchardet names GBK bytes by their superset
      {&kKorean, "windows-949", "iso-8859-1", "euc-kr"},
      {&kPolish, "iso-8859-2", "iso-8859-1", "iso-8859-2"},
  };
  for (const Case& c : wrong) {
    SCOPED_TRACE(std::string(c.label) + " label over " + c.encoder);
    auto decoded = decode(encode(page(meta(c.label), c.sample->paragraphs), c.encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, c.charset);
    EXPECT_EQ(decoded->charset_source, "detected");
    expect_text(*decoded, *c.sample);
  }
}

TEST(Decode, NarrowLabelOverSupersetBytesIsKept) {
  // 镕 and 喆 are in GBK but not GB2312; “ ” € are windows-1252 only; ① Ⅲ are NEC extensions.
  const Sample gbk_only{"GBK-only", {"朱镕基和张喆今天参观了新建的图书馆。"}};
  const Sample cp1252_only{"windows-1252-only", {"Er sagte: „Das kostet 5 € – „zu viel“.“"}};
  const Sample cp932_only{"windows-31j-only", {"①第Ⅲ章の概要と㈱の説明を読みました。"}};
  const std::vector<Case> narrow{
      {&gbk_only, "gbk", "gb2312", "gbk"},
      {&cp1252_only, "windows-1252", "iso-8859-1", "windows-1252"},
      {&cp932_only, "windows-31j", "shift_jis", "shift_jis"},
  };
  for (const Case& c : narrow) {
    SCOPED_TRACE(std::string(c.label) + " label over " + c.encoder);
    auto decoded = decode(encode(page(meta(c.label), c.sample->paragraphs), c.encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, c.charset);
    EXPECT_EQ(decoded->charset_source, "meta");
    expect_text(*decoded, *c.sample);
  }
}

TEST(Decode, ByteOrderMarkWinsOverHttpAndMeta) {
  std::string html = page(meta("windows-1251"), kRussian.paragraphs);
  std::string bytes = "\xEF\xBB\xBF";
  bytes += html;
  auto decoded = decode(bytes, "text/html; charset=windows-1251", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "utf-8");
  EXPECT_EQ(decoded->charset_source, "bom");
  EXPECT_EQ(decoded->text, html);  // BOM removed
}

TEST(Decode, Utf16And32ByteOrderMarksAreDecodedAndRemoved) {
  std::string html = page(meta("x-sjis"), kJapanese.paragraphs);
  const std::vector<std::pair<const char*, const char*>> boms{{"UTF-16LE", "utf-16le"},
                                                              {"UTF-16BE", "utf-16be"},
                                                              {"UTF-32LE", "utf-32le"},
                                                              {"UTF-32BE", "utf-32be"}};
  for (const auto& [encoder, charset] : boms) {
    SCOPED_TRACE(encoder);
    std::string with_bom = "\uFEFF";
    with_bom += html;
    auto decoded = decode(encode(with_bom, encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, charset);
    EXPECT_EQ(decoded->charset_source, "bom");
    EXPECT_EQ(decoded->text, html);
  }
}

TEST(Decode, Utf16WithoutByteOrderMarkIsRecognisedByItsZeroBytes) {
  std::string html = page(meta("utf-16"), kRussian.paragraphs);
  for (const char* encoder : {"UTF-16LE", "UTF-16BE", "UTF-32LE", "UTF-32BE"}) {
    SCOPED_TRACE(encoder);
    auto decoded = decode(encode(html, encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset_source, "detected");
    EXPECT_EQ(decoded->text, html);
  }
}

TEST(Decode, HttpCharsetTakesPrecedenceOverMeta) {
  std::string bytes = encode(page(meta("koi8-r"), kRussian.paragraphs), "windows-1251");
  auto decoded = decode(bytes, "text/html; charset=\"Windows-1251\"", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "windows-1251");
  EXPECT_EQ(decoded->charset_source, "http");
  expect_text(*decoded, kRussian);
}

TEST(Decode, UnknownHttpCharsetFallsBackToMeta) {
  std::string bytes = encode(page(meta("koi8-r"), kRussian.paragraphs), "koi8-r");
  auto decoded = decode(bytes, "text/html; charset=no-such-charset", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "koi8-r");
  EXPECT_EQ(decoded->charset_source, "meta");
}

TEST(Decode, MetaIsFoundWithAttributesInAnyOrderCaseAndQuoting) {
  const std::vector<std::string> heads{
      "<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=KOI8-R\">",
      "<meta content='text/html;charset=koi8-r' http-equiv='content-type'>",
      "<meta\ncontent=\"text/html; charset = 'koi8-r'\"\nhttp-equiv=Content-Type />",
      "<meta charset=koi8-r>",
      "<meta name=\"x\" charset=\"KOI8-R\" />",
      "<!-- <meta charset=\"utf-8\"> --><meta charset=\"koi8-r\">",
      "<script data-x=\"<meta charset=utf-8>\"></script><meta charset=koi8-r>",
  };
  for (const std::string& head : heads) {
    SCOPED_TRACE(head);
    auto decoded = decode(encode(page(head, kRussian.paragraphs), "koi8-r"), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, "koi8-r");
    EXPECT_EQ(decoded->charset_source, "meta");
  }
}

TEST(Decode, MetaContentWithoutHttpEquivDeclaresNothing) {
  std::string head = "<meta content=\"text/html; charset=iso-8859-5\">";
  std::string bytes = encode(page(head, {"plain ASCII text"}), "iso-8859-5");
  auto decoded = decode(bytes, "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset_source, "default");
}

TEST(Decode, MetaBeyondThePrescanWindowIsIgnored) {
  std::string html = "<html><head><!--" + std::string(5000, ' ') + "--><meta charset=koi8-r>";
  auto decoded = decode(html + "<p>ASCII only</p>", "", DecodeConfig{.prescan_bytes = 4096});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset_source, "default");
  decoded = decode(html + "<p>ASCII only</p>", "", DecodeConfig{.prescan_bytes = 8192});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "koi8-r");
}

TEST(Decode, XmlDeclarationDeclaresTheCharset) {
  std::string xml = "<?xml version=\"1.0\" encoding='windows-1251'?>\n<rss><item>" +
                    kRussian.paragraphs[1] + "</item></rss>\n";
  auto decoded = decode(encode(xml, "windows-1251"), "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "windows-1251");
  EXPECT_EQ(decoded->charset_source, "xml");
  EXPECT_EQ(decoded->text, xml);
}

TEST(Decode, MetaTakesPrecedenceOverXmlDeclaration) {
  std::string xml = "<?xml version=\"1.0\" encoding=\"iso-8859-5\"?>" +
                    page(meta("windows-1251"), kRussian.paragraphs);
  auto decoded = decode(encode(xml, "windows-1251"), "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "windows-1251");
  EXPECT_EQ(decoded->charset_source, "meta");
}

TEST(Decode, Utf16MetaOnAsciiCompatibleBytesMeansUtf8) {
  auto decoded = decode(page(meta("utf-16"), kRussian.paragraphs), "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "utf-8");
  EXPECT_EQ(decoded->charset_source, "meta");
  expect_text(*decoded, kRussian);
}

// A browser decodes a declared page only with the WHATWG labels' decoders: utf-7, utf-32,
// x-user-defined, the "replacement" labels and labels outside the standard are no declaration,
// and the bytes decide. (They were once decoded with: a windows-1251 page declaring utf-7 came
// out as mojibake.)
TEST(Decode, LabelsNoBrowserDecodesWithAreNoDeclaration) {
  std::string bytes = encode(page("", kRussian.paragraphs), "windows-1251");
  for (const char* label : {"utf-7", "UTF-32", "utf-32le", "x-user-defined", "hz-gb-2312",
                            "iso-2022-kr", "csiso2022kr", "iso-2022-cn", "ibm855", "cp855",
                            "mac-centraleurope"}) {
    SCOPED_TRACE(label);
    for (bool http : {false, true}) {
      std::string body = http ? bytes : meta(label) + bytes;
      std::string type = http ? std::string("text/html; charset=") + label : "";
      auto decoded = decode(body, type, {});
      ASSERT_TRUE(decoded.has_value());
      EXPECT_EQ(decoded->charset, "windows-1251");
      EXPECT_EQ(decoded->charset_source, "detected");
      expect_text(*decoded, kRussian);
    }
  }
  // The prescan passes over such a <meta> to the next one.
  auto decoded = decode(meta("utf-7") + meta("koi8-r") + encode(page("", kRussian.paragraphs),
                                                                "koi8-r"),
                        "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "koi8-r");
  EXPECT_EQ(decoded->charset_source, "meta");
}

TEST(Decode, Iso2022IsDetectedFromItsEscapeSequences) {
  const std::vector<Case> cases{{&kJapanese, "iso-2022-jp", "", "iso-2022-jp"},
                                {&kKorean, "iso-2022-kr", "", "iso-2022-kr"}};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.encoder);
    auto decoded = decode(encode(page("", c.sample->paragraphs), c.encoder), "", {});
    ASSERT_TRUE(decoded.has_value());
    EXPECT_EQ(decoded->charset, c.charset);
    expect_text(*decoded, *c.sample);
  }
}

TEST(Decode, EmptyBodyIsSkipped) {
  auto decoded = decode("", "text/html", {});
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().reason, "empty_body");
}

TEST(Decode, NonTextContentTypeIsSkipped) {
  for (const char* type : {"image/png", "IMAGE/JPEG; q=1", "application/octet-stream",
                           "application/pdf", "application/zip", "video/mp4", "audio/mpeg"}) {
    SCOPED_TRACE(type);
    auto decoded = decode("<html>text</html>", type, {});
    ASSERT_FALSE(decoded.has_value());
    EXPECT_EQ(decoded.error().reason, "not_text");
  }
  EXPECT_TRUE(decode("<html>text</html>", "application/xhtml+xml", {}).has_value());
}

TEST(Decode, BinaryBytesAreSkipped) {
  std::string binary;
  for (int i = 0; i < 4096; ++i) binary += static_cast<char>((i * 7919) % 256);
  auto decoded = decode(binary, "", {});
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().reason, "not_text");

  decoded = decode(std::string("\x89PNG\r\n\x1A\n", 8) + "IHDR", "text/html", {});
  ASSERT_FALSE(decoded.has_value());
  EXPECT_EQ(decoded.error().reason, "not_text");

  // A stray NUL in a page is not binary content.
  std::string html = page("", kGerman.paragraphs);
  html[100] = '\0';
  EXPECT_TRUE(decode(html, "", {}).has_value());
}

TEST(Decode, InvalidUtf8BecomesReplacementCharacters) {
  auto decoded = decode("<meta charset=utf-8><p>caf\xC3\xA9 \xFF ok \xE2\x82</p>", "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "utf-8");
  // One U+FFFD per maximal ill-formed subpart: \xFF, and the truncated \xE2\x82.
  EXPECT_EQ(decoded->text, "<meta charset=utf-8><p>caf\xC3\xA9 \xEF\xBF\xBD ok \xEF\xBF\xBD</p>");
}

TEST(Decode, MostlyUtf8WithAStrayByteStaysUtf8) {
  std::string html = page("", kRussian.paragraphs);
  std::size_t body = html.find("<body>");
  html = html.substr(0, body) + '\xE9' + html.substr(body);  // one Latin-1 é
  auto decoded = decode(html, "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "utf-8");
  expect_text(*decoded, kRussian);
  EXPECT_NE(decoded->text.find("\xEF\xBF\xBD<body>"), std::string::npos);
}

TEST(Decode, LegacyMetaOverMostlyUtf8BytesDecodesAsUtf8) {
  std::string html = page(meta("windows-1251"), kRussian.paragraphs);
  std::size_t body = html.find("<body>");
  html = html.substr(0, body) + '\xE9' + html.substr(body);  // one Latin-1 é
  auto decoded = decode(html, "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "utf-8");
  EXPECT_EQ(decoded->charset_source, "detected");
  expect_text(*decoded, kRussian);
}

TEST(Decode, ConcurrentCallsGiveTheSameResults) {
  std::vector<std::string> inputs;
  for (const Case& c : kLegacyCases) {
    inputs.push_back(encode(page(meta(c.label), c.sample->paragraphs), c.encoder));
    inputs.push_back(encode(page("", c.sample->paragraphs), c.encoder));
  }
  std::vector<std::string> expected;
  for (const std::string& input : inputs) expected.push_back(decode(input, "", {})->text);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 20; ++round) {
        for (std::size_t i = 0; i < inputs.size(); ++i) {
          auto decoded = decode(inputs[i], "", {});
          if (!decoded || decoded->text != expected[i]) ++mismatches[t];
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
}

TEST(Decode, InvalidLegacySequencesBecomeReplacementCharacters) {
  // 0xA1 0x0A: a lead byte without a valid trail. ICU would write U+001A for some charsets.
  auto decoded = decode("<meta charset=euc-jp><p>\xA4\xA2\xA1\n</p>", "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "euc-jp");
  EXPECT_NE(decoded->text.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(decoded->text.find('\x1A'), std::string::npos);
  EXPECT_NE(decoded->text.find("\xE3\x81\x82"), std::string::npos);  // あ
}

TEST(Decode, HugeInputsDecode) {
  constexpr std::size_t kSize = 30 * 1024 * 1024;
  std::string paragraph = "<p>" + kRussian.paragraphs[0] + "</p>\n";
  std::string html;
  html.reserve(kSize + paragraph.size());
  while (html.size() < kSize) html += paragraph;

  auto decoded = decode(html, "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "utf-8");
  EXPECT_EQ(decoded->text.size(), html.size());

  decoded = decode(encode(html, "windows-1251"), "", {});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "windows-1251");
  EXPECT_EQ(decoded->text, html);
}

TEST(Decode, AsciiWithoutDeclarationUsesTheDefaultCharset) {
  auto decoded = decode("<p>plain text</p>", "", DecodeConfig{.default_charset = "iso-8859-2"});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "iso-8859-2");
  EXPECT_EQ(decoded->charset_source, "default");
  EXPECT_EQ(decoded->text, "<p>plain text</p>");
}

TEST(Decode, WithoutDetectionDeclarationsAreTrusted) {
  DecodeConfig config{.detect = false};
  auto decoded = decode(page(meta("windows-1251"), kRussian.paragraphs), "", config);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "windows-1251");
  EXPECT_EQ(decoded->charset_source, "meta");

  decoded = decode(encode(page("", kRussian.paragraphs), "koi8-r"), "", config);
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->charset, "windows-1252");
  EXPECT_EQ(decoded->charset_source, "default");
}

TEST(CanonicalCharset, ResolvesWhatwgLabels) {
  const std::vector<std::pair<const char*, const char*>> labels{
      {"utf-8", "utf-8"},
      {"UTF8", "utf-8"},
      {"gb2312", "gbk"},
      {"x-gbk", "gbk"},
      {"chinese", "gbk"},
      {"GB18030", "gb18030"},
      {" latin1 ", "windows-1252"},
      {"ISO-8859-1", "windows-1252"},
      {"us-ascii", "windows-1252"},
      {"ascii", "windows-1252"},
      {"iso-8859-9", "windows-1254"},
      {"Shift_JIS", "shift_jis"},
      {"x-sjis", "shift_jis"},
      {"ms_kanji", "shift_jis"},
      {"windows-31j", "shift_jis"},
      {"euc-kr", "euc-kr"},
      {"ks_c_5601-1987", "euc-kr"},
      {"big5-hkscs", "big5"},
      {"koi8-r", "koi8-r"},
      {"koi8-u", "koi8-u"},
      {"cp1251", "windows-1251"},
      {"tis-620", "windows-874"},
      {"x-mac-ukrainian", "x-mac-cyrillic"},
      {"utf-16", "utf-16le"},
      {"unicodefffe", "utf-16be"},
      {"ibm866", "ibm866"},
  };
  for (const auto& [label, name] : labels) {
    EXPECT_EQ(canonical_charset(label), name) << label;
  }
}

TEST(CanonicalCharset, FallsBackToIcuForLabelsOutsideWhatwg) {
  EXPECT_EQ(canonical_charset("IBM855"), "ibm855");
  EXPECT_EQ(canonical_charset("cp855"), "ibm855");
  EXPECT_EQ(canonical_charset("cp936"), "gbk");  // an ICU alias of a WHATWG encoding
}

TEST(CanonicalCharset, UnknownLabelsGiveEmpty) {
  EXPECT_EQ(canonical_charset(""), "");
  EXPECT_EQ(canonical_charset("   "), "");
  EXPECT_EQ(canonical_charset("no-such-charset"), "");
}

// Events counted per call (non_ascii_bytes 1): a run of kanji and kana adds none, and what
// stands beside a run is judged against the run's last character and the one before it.
TEST(Implausibility, KanjiAndKanaRunsAddNothingAndTheirNeighboursCount) {
  using decode_internal::implausibility;
  EXPECT_EQ(implausibility("\u65E5\u672C\u8A9E\u306E\u30C6\u30AD\u30B9\u30C8", 1), 0);
  // Latin between kanji and katakana: two changes of script.
  EXPECT_EQ(implausibility("\u65E5\u672C\u8A9EA\u30C6\u30AD", 1), 2);
  // A longer ASCII run there (skipped eight bytes at a time): the same two, judged by its ends.
  EXPECT_EQ(implausibility("\u65E5\u672C\u8A9Eabcdefghij klmnopqrstuvwxyZ\u30C6\u30AD", 1), 2);
  EXPECT_EQ(implausibility("\u65E5\u672C\u8A9Eabcdefghij klmnopqrstuvwxy1\u30C6\u30AD", 1), 1);
  // Hangul after a run of kanji: one change of script.
  EXPECT_EQ(implausibility("\u65E5\u672C\u8A9E\uD55C\uAE00", 1), 1);
  // A symbol glued between the run's last kanji and another one.
  EXPECT_EQ(implausibility("\u65E5\u672C\u00BF\u8A9E", 1), 1);
  // U+FFFD inside a run; a private-use character after one.
  EXPECT_EQ(implausibility("\u65E5\uFFFD\u672C", 1), 4);
  EXPECT_EQ(implausibility("\u65E5\u672C\uE000", 1), 1);
}

// Decoding by the charset's tables (char_tables.h) where it can gives ICU's own text and error
// count: random bytes of ASCII runs (with the trail bytes of Shift_JIS, Big5 and GB18030: '@',
// digits, '\\', '~'; the controls IBM's Shift_JIS swaps; NUL), stray high bytes and valid
// multi-byte text, for single-byte, multi-byte and stateful charsets.
TEST(ConvertToUtf8, TheTablesGiveIcusTextAndErrors) {
  const char* converters[] = {"windows-1252", "windows-1251", "koi8-r",      "gb18030",
                              "big5-hkscs",   "euc-jp",       "windows-31j", "windows-949",
                              "iso-2022-jp",  "hz-gb-2312",   "UTF-16LE",    "iso-2022-kr"};
  const std::string ascii = std::string("<a href=\"x\">@09\\~ text</a>\n\x1A\x1C\x7F") + '\0';
  std::mt19937 rng(5);
  for (const char* converter : converters) {
    const std::string sample = converter == std::string("iso-2022-kr")
                                   ? std::string()
                                   : encode("\u65E5\u672C\u8A9E \u0416\u00E9 \uD55C", converter);
    for (int round = 0; round < 2000; ++round) {
      std::string bytes;
      for (int piece = rng() % 12; piece > 0; --piece) {
        switch (rng() % 4) {
          case 0:
          case 1:
            for (int n = rng() % 40; n > 0; --n) bytes += ascii[rng() % ascii.size()];
            break;
          case 2:
            for (int n = rng() % 4; n > 0; --n) bytes += static_cast<char>(0x80 + rng() % 0x80);
            break;
          default:
            bytes += sample;
        }
      }
      auto fast = decode_internal::convert_to_utf8(bytes, converter);
      auto whole = decode_internal::convert_to_utf8(bytes, converter, /*in_one_pass=*/true);
      ASSERT_TRUE(fast && whole) << converter;
      ASSERT_EQ(fast->text, whole->text) << converter << " round " << round;
      ASSERT_EQ(fast->errors, whole->errors) << converter << " round " << round;
    }
  }
}

// A charset's tables are read once and shared by the threads (convert.cc): threads that meet
// charsets no thread has met yet, all at the same moment, each get ICU's own text. (Charsets
// that no other test here converts, so that their tables are read during this test.)
TEST(ConvertToUtf8, ThreadsMeetingACharsetAtOnceShareItsTables) {
  const char* converters[] = {"ibm-1386", "ibm-970", "windows-1250", "ibm-943_P130-1999"};
  std::vector<std::string> inputs;
  for (const char* converter : converters) {
    inputs.push_back(
        encode("<p>\u65E5\u672C\u8A9E \u4E2D\u6587 \uD55C\uAD6D\uC5B4 "
               "\u0160\u00E9\u0107 abc</p>",
               converter));
  }
  constexpr int kThreads = 4;
  std::vector<std::vector<std::string>> texts(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      texts[t].resize(inputs.size());
      start.arrive_and_wait();
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        const std::size_t c = (i + t) % inputs.size();  // each thread starts on another charset
        auto converted = decode_internal::convert_to_utf8(inputs[c], converters[c]);
        texts[t][c] = converted ? converted->text : "(failed)";
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (std::size_t c = 0; c < inputs.size(); ++c) {
    auto whole = decode_internal::convert_to_utf8(inputs[c], converters[c], /*in_one_pass=*/true);
    ASSERT_TRUE(whole) << converters[c];
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(texts[t][c], whole->text) << converters[c];
  }
}

// More than 1 % of C0 controls (not \t \n \f \r SO SI ESC) make bytes binary: counted
// exactly across the counting blocks, wherever the controls are.
TEST(LooksBinary, CountsControlsOtherThanTheTextOnes) {
  using decode_internal::looks_binary;
  std::string sample(1000, 'a');
  for (std::size_t i = 0; i < 10; ++i) sample[i * 97] = '\x01';
  EXPECT_FALSE(looks_binary(sample));  // 10 in 1000: not more than 1 %
  sample[999] = '\x02';
  EXPECT_TRUE(looks_binary(sample));
  std::string text(1000, 'a');
  for (std::size_t i = 0; i < 1000; i += 7) text[i] = "\t\n\f\r\x0E\x0F\x1B"[i / 7 % 7];
  EXPECT_FALSE(looks_binary(text));
  EXPECT_TRUE(looks_binary(std::string(600, '\0')));
}

}  // namespace
}  // namespace neardup
