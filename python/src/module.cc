// neardup._neardup: the pipeline, the compare rule and the index for Python (python/README.md;
// the docstrings here are help()'s text, the types are in src/neardup/_neardup.pyi).
//
// Every call that runs the pipeline or uses the index releases the GIL, so Python threads run
// pages in parallel. Page bodies are read in place: a bytes object is immutable and a str's
// UTF-8 form is cached in it, and the caller's reference keeps either alive through the call;
// any other buffer (bytearray, memoryview) is copied first, since another thread may change it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "config/config.h"
#include "pipeline/compare.h"
#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"
#include "python/src/index.h"
#include "python/src/values.h"

namespace neardup::python {
namespace {

// Docstrings start with the signature (Python's "name(...)\n--\n\n" convention, which
// inspect.signature() and help() read), since pybind11's are turned off: every parameter is an
// `object` to it.
constexpr const char* kFingerprintDoc = R"(fingerprint(html, content_type='', config=None)
--

Runs the pipeline on one page: decode, main text, features, SimHash and MinHash.

html is bytes (decoded as the page declares: BOM, content_type's charset, <meta>, detection),
or str (already text: read as UTF-8 whatever the page declares); bytearray and memoryview are
copied, then read as bytes. config: a neardup.Config, the defaults when None. Returns a
Fingerprint; a page the pipeline skips is not an error (Fingerprint.skipped, .skip_reason).)";

constexpr const char* kExtractDoc = R"(extract(html, content_type='', config=None)
--

The page's (title, main text), the text's paragraphs joined by newlines, as `neardup extract`.

("", "") when the body cannot be decoded as text (empty, binary), or is larger than the config's
input.max_body_bytes (10 MiB by default; fingerprint() skips it as too_large).)";

constexpr const char* kCompareDoc = R"(compare(a, b, content_type='', config=None)
--

Whether two pages are near-duplicates by the rule of `neardup compare`: SimHash within
dedup.max_distance, or MinHash sketches sharing an LSH band at dedup.min_similarity or above.

a and b are page bodies (fingerprinted under config, the defaults when None) or Fingerprints;
both must be of one scheme. The thresholds of config, else of a's config, decide. Returns a
Comparison.)";

void bind_config(py::module_& m) {
  py::class_<ConfigHandle, std::shared_ptr<ConfigHandle>>(
      m, "Config",
      "A validated, immutable neardup configuration (examples/neardup.yaml documents every key).")
      .def_static(
          "default", [] { return std::const_pointer_cast<ConfigHandle>(default_config()); },
          "default()\n--\n\nThe built-in defaults.")
      .def_static(
          "load",
          [](const py::object& path) {
            return std::const_pointer_cast<ConfigHandle>(
                parsed(load_config_file(path_arg(path, "path"))));
          },
          py::arg("path"),
          "load(path)\n--\n\nReads a YAML file. Raises ValueError naming the file, line and key "
          "of every error.")
      .def_static(
          "from_yaml",
          [](const py::object& text) {
            return std::const_pointer_cast<ConfigHandle>(
                parsed(parse_config(str_arg(text, "text"))));
          },
          py::arg("text"),
          "from_yaml(text)\n--\n\nParses YAML text. Raises ValueError naming the line and key of "
          "every error.")
      .def_property_readonly(
          "scheme", [](const ConfigHandle& c) { return c.scheme; },
          "The fingerprint scheme id (\"s-\" and 8 hex digits): equal ids, comparable signatures.")
      .def_property_readonly(
          "max_distance", [](const ConfigHandle& c) { return c.config.dedup.max_distance; },
          "dedup.max_distance: SimHash near-duplicates differ in at most this many bits.")
      .def_property_readonly(
          "min_similarity", [](const ConfigHandle& c) { return c.config.dedup.min_similarity; },
          "dedup.min_similarity: MinHash near-duplicates are at least this similar.")
      .def_property_readonly(
          "minhash_enabled", [](const ConfigHandle& c) { return c.config.minhash.enabled; },
          "minhash.enabled: whether pages get the second signature.")
      .def(
          "settings",
          [](const ConfigHandle& c) {
            py::dict settings;
            for (const Setting& s : config_settings(c.config)) settings[py::str(s.path)] = s.value;
            return settings;
          },
          "settings()\n--\n\nEvery key path and its value as canonical text.")
      .def(
          "to_yaml", [](const ConfigHandle& c) { return to_yaml(c.config); },
          "to_yaml()\n--\n\nThe whole configuration as YAML.")
      .def("__eq__",
           [](const ConfigHandle& a, const py::object& b) {
             return py::isinstance<ConfigHandle>(b) &&
                    a.config == b.cast<const ConfigHandle&>().config;
           })
      .def("__repr__",
           [](const ConfigHandle& c) { return "<neardup.Config scheme " + c.scheme + ">"; });
}

void bind_fingerprint(py::module_& m) {
  py::class_<Fingerprint>(m, "Fingerprint", "One page's signatures, or why it was skipped.")
      .def_property_readonly(
          "skipped", [](const Fingerprint& f) { return f.page.skip.has_value(); },
          "True when the pipeline skipped the page (skip_reason says why).")
      .def_property_readonly(
          "fingerprint",
          [](const Fingerprint& f) -> std::optional<std::uint64_t> {
            if (f.page.skip) return std::nullopt;
            return f.page.fingerprint;
          },
          "The 64-bit SimHash; None when skipped.")
      .def_property_readonly(
          "hex",
          [](const Fingerprint& f) -> std::optional<std::string> {
            if (f.page.skip) return std::nullopt;
            return fingerprint_hex(f.page.fingerprint);
          },
          "The SimHash as 16 lower-case hex digits; None when skipped.")
      .def_property_readonly(
          "scheme", [](const Fingerprint& f) { return f.config->scheme; },
          "The scheme id of the config it was computed under.")
      .def_property_readonly(
          "sketch", [](const Fingerprint& f) { return sketch_list(f.page.sketch); },
          "The MinHash values (16-bit each); empty when skipped or minhash.enabled is false.")
      .def_property_readonly(
          "sketch_upper", [](const Fingerprint& f) { return sketch_list(f.page.sketch_upper); },
          "Bits 16-31 of the minima the sketch's values come from, in its order, which a new "
          "index's band keys hash besides (wide band keys); empty with the sketch.")
      .def_property_readonly(
          "skip_reason",
          [](const Fingerprint& f) -> std::optional<std::string> {
            if (!f.page.skip) return std::nullopt;
            return f.page.skip->reason;
          },
          "low_content, too_large, empty_body, not_text, ...; None when fingerprinted.")
      .def_property_readonly(
          "skip_detail",
          [](const Fingerprint& f) -> std::optional<std::string> {
            if (!f.page.skip) return std::nullopt;
            return f.page.skip->detail;
          },
          "What made the page skipped, in words; None when fingerprinted.")
      .def_property_readonly(
          "charset", [](const Fingerprint& f) { return none_if_empty(f.page.charset); },
          "The charset the body was decoded from; None when decoding did not happen.")
      .def_property_readonly(
          "charset_source",
          [](const Fingerprint& f) { return none_if_empty(f.page.charset_source); },
          "How the charset was chosen: bom, http, meta, xml, detected or default.")
      .def_property_readonly(
          "feature_count", [](const Fingerprint& f) { return f.page.feature_count; },
          "The number of weighted features the SimHash was computed from.")
      .def_property_readonly(
          "config",
          [](const Fingerprint& f) { return std::const_pointer_cast<ConfigHandle>(f.config); },
          "The configuration the page was fingerprinted under.")
      .def("__repr__", [](const Fingerprint& f) {
        if (f.page.skip) return "<neardup.Fingerprint skipped " + f.page.skip->reason + ">";
        return "<neardup.Fingerprint " + fingerprint_hex(f.page.fingerprint) + " " +
               f.config->scheme + ">";
      });
}

void bind_comparison(py::module_& m) {
  py::class_<Comparison>(m, "Comparison",
                         "Two pages compared by the index's rule (as `neardup compare`).")
      .def_property_readonly(
          "comparable", [](const Comparison& c) { return c.comparable; },
          "False when either page was skipped (then is_duplicate is False).")
      .def_property_readonly("is_duplicate", &Comparison::near_duplicate,
                             "True when the pages are near-duplicates.")
      .def_property_readonly(
          "distance",
          [](const Comparison& c) -> std::optional<int> {
            if (!c.comparable) return std::nullopt;
            return c.distance;
          },
          "The SimHash Hamming distance; None when not comparable.")
      .def_property_readonly(
          "similarity", [](const Comparison& c) { return c.similarity; },
          "The estimated Jaccard similarity of the sketches; None without MinHash.")
      .def_property_readonly(
          "shares_band", [](const Comparison& c) { return c.shares_band; },
          "True when the sketches share an LSH band (the index would find one from the other).")
      .def_property_readonly(
          "method",
          [](const Comparison& c) -> std::optional<std::string> {
            if (!c.near_duplicate()) return std::nullopt;
            return std::string(c.method());
          },
          "simhash, minhash or both when is_duplicate; else None.")
      .def_property_readonly(
          "a_in_b", [](const Comparison& c) { return c.a_in_b; },
          "The estimated share of A's text found in B (its anchors); None without containment.")
      .def_property_readonly(
          "b_in_a", [](const Comparison& c) { return c.b_in_a; },
          "The estimated share of B's text found in A; None without containment.")
      .def_property_readonly(
          "contained",
          [](const Comparison& c) -> std::optional<std::string> {
            if (c.contained().empty()) return std::nullopt;
            return std::string(c.contained());
          },
          "a_in_b or b_in_a when one text is contained in the other (dedup.min_containment), "
          "as `neardup compare` says; else None.")
      .def_property_readonly(
          "paragraphs_shared", [](const Comparison& c) { return c.paragraphs_shared; },
          "Paragraphs both texts hold (by their tokens).")
      .def("__repr__", [](const Comparison& c) {
        if (!c.comparable) return std::string("<neardup.Comparison not comparable>");
        return "<neardup.Comparison distance " + std::to_string(c.distance) +
               (c.near_duplicate() ? " duplicate by " + std::string(c.method()) : " different") +
               ">";
      });
}

void define_module(py::module_& m) {
  py::options options;
  options.disable_function_signatures();  // the docstrings carry them (see kFingerprintDoc)
  m.doc() =
      "neardup: near-duplicate web page detection.\n\n"
      "The pipeline of the `neardup` command and daemon (charset decoding, main-text extraction, "
      "weighted word features, a 64-bit SimHash and a MinHash sketch), the comparison rule, and "
      "the index: insert pages and ask about them, in memory or in a store on disk.";
  m.attr("__version__") = NEARDUP_VERSION;
  py::register_exception<StoreException>(m, "StoreError", PyExc_RuntimeError).doc() =
      "An index that cannot be opened, read or written (not a neardup index, another "
      "format, another process writing it, a full disk).";
  bind_config(m);
  bind_fingerprint(m);
  bind_comparison(m);
  bind_index(m);

  constexpr const char* kHtmlParameters = "html, content_type='', config=None";
  m.def(
      "fingerprint",
      [](const py::object& html, const py::object& content_type, const py::object& config) {
        return fingerprint_body(Body(html, str_arg(content_type, "content_type")),
                                config_or_default(config_arg(config)));
      },
      py::arg("html"), py::arg("content_type") = "", py::arg("config") = py::none(),
      kFingerprintDoc);
  m.def("fingerprint", refuse_other_calls("fingerprint", kHtmlParameters, false));
  m.def(
      "extract",
      [](const py::object& html, const py::object& content_type, const py::object& config) {
        const Body body(html, str_arg(content_type, "content_type"));
        const ConfigPtr c = config_or_default(config_arg(config));
        // As fingerprint() skips it (too_large): a larger body is not decoded at all.
        if (body.bytes().size() > c->config.input.max_body_bytes) {
          return std::pair<std::string, std::string>();
        }
        py::gil_scoped_release release;
        auto decoded = decode(body.bytes(), body.content_type(), c->config.decode);
        if (!decoded) return std::pair<std::string, std::string>();
        MainText main_text = denoise(decoded->text, body.content_type(), c->config.denoise);
        return std::pair(std::move(main_text.title), joined_text(main_text));
      },
      py::arg("html"), py::arg("content_type") = "", py::arg("config") = py::none(), kExtractDoc);
  m.def("extract", refuse_other_calls("extract", kHtmlParameters, false));
  m.def(
      "compare",
      [](const py::object& a, const py::object& b, const py::object& content_type_arg,
         const py::object& config_object) {
        const std::string content_type = str_arg(content_type_arg, "content_type");
        const ConfigHandle* config = config_arg(config_object);
        const Fingerprint fa = fingerprint_of(a, content_type, config);
        const Fingerprint fb = fingerprint_of(b, content_type, config);
        if (fa.config->scheme != fb.config->scheme) {
          throw py::value_error("the pages are of different schemes: " + fa.config->scheme +
                                " and " + fb.config->scheme);
        }
        const Config& rule = config != nullptr ? config->config : fa.config->config;
        return compare_pages(fa.page, fb.page, rule);
      },
      py::arg("a"), py::arg("b"), py::arg("content_type") = "", py::arg("config") = py::none(),
      kCompareDoc);
  m.def("compare", refuse_other_calls("compare", "a, b, content_type='', config=None", false));
}

}  // namespace
}  // namespace neardup::python

PYBIND11_MODULE(_neardup, m) { neardup::python::define_module(m); }
