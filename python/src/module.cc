// neardup._neardup: the pipeline, the compare rule and the index for Python (python/README.md;
// the docstrings here are help()'s text, the types are in src/neardup/_neardup.pyi).
//
// Every call that runs the pipeline or uses the index releases the GIL, so Python threads run
// pages in parallel. Page bodies are read in place: a bytes object is immutable and a str's
// UTF-8 form is cached in it, and the caller's reference keeps either alive through the call;
// any other buffer (bytearray, memoryview) is copied first, since another thread may change it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "common/mutex.h"
#include "config/config.h"
#include "message/record.h"
#include "message/tag.h"
#include "pipeline/compare.h"
#include "pipeline/decode/decode.h"
#include "pipeline/denoise/denoise.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/pipeline.h"
#include "store/index.h"

namespace py = pybind11;

namespace neardup::python {
namespace {

// A validated Config and its scheme id, shared by the fingerprints computed under it.
// Python holds it by shared_ptr, so a call given one keeps it with shared_from_this().
struct ConfigHandle : std::enable_shared_from_this<ConfigHandle> {
  explicit ConfigHandle(Config c) : config(std::move(c)), scheme(scheme_id(config)) {}
  Config config;
  std::string scheme;
};
using ConfigPtr = std::shared_ptr<const ConfigHandle>;

const ConfigPtr& default_config() {
  static const ConfigPtr config = std::make_shared<const ConfigHandle>(Config{});
  return config;
}

ConfigPtr config_or_default(const ConfigHandle* config) {
  return config == nullptr ? default_config() : config->shared_from_this();
}

ConfigPtr parsed(std::expected<Config, std::string> config) {
  if (!config) throw py::value_error(config.error());
  return std::make_shared<const ConfigHandle>(std::move(*config));
}

// One page's pipeline result under the config it was computed with.
struct Fingerprint {
  PageFingerprint page;
  ConfigPtr config;
};

// A page body as bytes the pipeline can read without the GIL, and the Content-Type to decode it
// with. A str is already text: its UTF-8 form is decoded as UTF-8 whatever the page declares.
class Body {
 public:
  Body(const py::handle& html, std::string_view content_type) : content_type_(content_type) {
    if (PyBytes_Check(html.ptr())) {
      char* data = nullptr;
      Py_ssize_t size = 0;
      PyBytes_AsStringAndSize(html.ptr(), &data, &size);
      bytes_ = std::string_view(data, static_cast<std::size_t>(size));
    } else if (PyUnicode_Check(html.ptr())) {
      Py_ssize_t size = 0;
      const char* data = PyUnicode_AsUTF8AndSize(html.ptr(), &size);
      if (data == nullptr) throw py::error_already_set();
      bytes_ = std::string_view(data, static_cast<std::size_t>(size));
      content_type_ = utf8_content_type(content_type);
    } else if (PyObject_CheckBuffer(html.ptr())) {
      Py_buffer view;  // contiguous bytes, else BufferError
      if (PyObject_GetBuffer(html.ptr(), &view, PyBUF_SIMPLE) != 0) throw py::error_already_set();
      copy_.assign(static_cast<const char*>(view.buf), static_cast<std::size_t>(view.len));
      PyBuffer_Release(&view);
      bytes_ = copy_;
    } else {
      throw py::type_error("html must be bytes or str (or a bytes-like object), not " +
                           std::string(py::str(py::type::handle_of(html).attr("__name__"))));
    }
  }

  Body(const Body&) = delete;  // bytes_ may point into copy_
  Body& operator=(const Body&) = delete;

  std::string_view bytes() const { return bytes_; }
  std::string_view content_type() const { return content_type_; }

 private:
  // The media type of content_type (text/html when none) with charset=utf-8.
  static std::string utf8_content_type(std::string_view content_type) {
    std::string_view media = content_type.substr(0, content_type.find(';'));
    while (!media.empty() && (media.back() == ' ' || media.back() == '\t')) media.remove_suffix(1);
    return std::string(media.empty() ? "text/html" : media) + "; charset=utf-8";
  }

  std::string_view bytes_;
  std::string copy_;
  std::string content_type_;
};

Fingerprint fingerprint_body(const Body& body, const ConfigPtr& config) {
  py::gil_scoped_release release;
  return Fingerprint{fingerprint_page(body.bytes(), body.content_type(), config->config), config};
}

// A page argument: a Fingerprint as it is (it must be of config's scheme), else a body to
// fingerprint under config (the default config when None).
Fingerprint fingerprint_of(const py::handle& page, std::string_view content_type,
                           const ConfigHandle* config) {
  if (py::isinstance<Fingerprint>(page)) {
    Fingerprint fp = page.cast<Fingerprint>();
    if (config != nullptr && config->scheme != fp.config->scheme) {
      throw py::value_error("the fingerprint is of scheme " + fp.config->scheme +
                            ", the config's scheme is " + config->scheme);
    }
    return fp;
  }
  return fingerprint_body(Body(page, content_type), config_or_default(config));
}

py::object none_if_empty(const std::string& text) {
  return text.empty() ? py::object(py::none()) : py::object(py::str(text));
}

py::list sketch_list(const Sketch& sketch) {
  py::list values(sketch.size());
  for (std::size_t i = 0; i < sketch.size(); ++i) values[i] = py::int_(sketch[i]);
  return values;
}

// Raised for a store that cannot be opened or read (StoreError in Python).
struct StoreException : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] void throw_store_error(const StoreError& error) {
  if (error.code == StoreError::Code::kNotFound) {
    PyErr_SetString(PyExc_FileNotFoundError, error.message.c_str());
    throw py::error_already_set();
  }
  if (error.code == StoreError::Code::kInvalidArgument) throw py::value_error(error.message);
  throw StoreException(error.message);
}

// The store behind one neardup.Index. Held by shared_ptr: a call keeps it open while close()
// runs on another thread, and the last reference closes it (and removes a temporary one).
struct OpenStore {
  std::unique_ptr<Index> index;
  std::filesystem::path temporary;  // the directory of an index in memory, removed at the end
  // LMDB has one writer, and apply() and forget() are called by one thread at a time: Python
  // threads that insert at once (each without the GIL) take turns here. Queries do not.
  Mutex writer;

  OpenStore() = default;
  OpenStore(const OpenStore&) = delete;
  OpenStore& operator=(const OpenStore&) = delete;
  ~OpenStore() {
    index.reset();
    std::error_code ignored;  // a directory someone removed already is not an error here
    if (!temporary.empty()) std::filesystem::remove_all(temporary, ignored);
  }
};

// A directory of its own under $TMPDIR (else /tmp) for an index in memory.
std::filesystem::path make_temporary_directory() {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmpdir != nullptr && *tmpdir ? tmpdir : "/tmp") + "/neardup-index-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    throw StoreException("cannot make a directory for an index in memory: " + pattern + ": " +
                         std::strerror(errno));
  }
  return pattern;
}

// neardup.Index: a neardup index that pages are inserted into and asked about, in memory (a
// store in a temporary directory) or on disk; or a store opened read-only beside the process that
// writes it.
class PyIndex {
 public:
  PyIndex(const std::optional<std::string>& path, bool read_only, ConfigPtr config, bool sync)
      : config_(std::move(config)), read_only_(read_only) {
    if (read_only && !path) throw py::value_error("read_only needs the path of an existing index");
    auto store = std::make_shared<OpenStore>();
    StoreConfig store_config = config_->config.store;
    store_config.sync = sync;
    if (path) {
      store_config.path = *path;
    } else {
      store->temporary = make_temporary_directory();
      store_config.path = store->temporary.string();
    }
    path_ = store_config.path;
    StoreResult<std::unique_ptr<Index>> opened;
    {
      py::gil_scoped_release release;
      // A store opened read-only answers from the snapshot of its opening; one opened for
      // writing presizes nothing, as `neardup dedup` (store/index.h, OpenOptions).
      opened = Index::open(store_config, {.read_only = read_only, .presize_busy_deltas = false});
    }
    if (!opened) throw_store_error(opened.error());
    store->index = std::move(*opened);
    store_ = std::move(store);
  }

  Verdict insert(const std::string& id, const py::handle& page, std::string_view content_type,
                 const ConfigHandle* config) {
    if (id.empty()) throw py::value_error("id must not be empty");
    const Fingerprint fp = fingerprint_of(page, content_type, rule_config(config));
    if (fp.page.skip) return skipped(fp);
    IndexItem item{.page = request(fp, config, id)};
    const std::shared_ptr<OpenStore> store = open();
    StoreResult<std::vector<Verdict>> verdicts;
    {
      py::gil_scoped_release release;
      MutexLock lock(store->writer);
      verdicts = store->index->apply({&item, 1});
    }
    if (!verdicts) throw_store_error(verdicts.error());
    const Verdict& verdict = verdicts->front();
    if (verdict.status == Verdict::Status::kDeadLetter) {
      throw py::value_error("the index cannot take the page: " + verdict.detail);
    }
    return verdict;
  }

  Verdict query(const py::handle& page, std::string_view content_type, const ConfigHandle* config) {
    const Fingerprint fp = fingerprint_of(page, content_type, rule_config(config));
    if (fp.page.skip) return skipped(fp);
    const PageRequest page_request = request(fp, config, "");
    const std::shared_ptr<OpenStore> store = open();
    StoreResult<Verdict> verdict;
    {
      py::gil_scoped_release release;
      verdict = store->index->lookup(page_request);
    }
    if (!verdict) throw_store_error(verdict.error());
    return *verdict;
  }

  std::optional<StoredPage> find(const std::string& id) {
    const std::shared_ptr<OpenStore> store = open();
    StoreResult<std::optional<StoredPage>> found;
    {
      py::gil_scoped_release release;
      found = store->index->find(id);
    }
    if (!found) throw_store_error(found.error());
    return *found;
  }

  bool remove(const std::string& id) {
    const std::shared_ptr<OpenStore> store = open();
    StoreResult<std::size_t> forgotten;
    {
      py::gil_scoped_release release;
      MutexLock lock(store->writer);
      forgotten = store->index->forget({&id, 1});
    }
    if (!forgotten) throw_store_error(forgotten.error());
    return *forgotten > 0;
  }

  std::uint64_t documents() {
    const std::shared_ptr<OpenStore> store = open();
    py::gil_scoped_release release;
    return store->index->stats().documents;
  }

  // A read-only index opened again: newer pages become visible, and the old snapshot's pages are
  // let go.
  void refresh() {
    if (!read_only_) return;  // a writable index's queries read the newest state already
    open();
    *this = PyIndex(path_, true, config_, false);
  }

  void close() { store_.reset(); }
  const std::string& path() const { return path_; }
  bool read_only() const { return read_only_; }
  bool in_memory() const { return store_ && !store_->temporary.empty(); }
  const ConfigPtr& config() const { return config_; }

 private:
  std::shared_ptr<OpenStore> open() const {
    if (!store_) throw py::value_error("index " + path_ + " is closed");
    return store_;
  }

  // The config a body is fingerprinted under and whose thresholds decide: the call's, else the
  // index's.
  const ConfigHandle* rule_config(const ConfigHandle* config) const {
    return config != nullptr ? config : config_.get();
  }

  PageRequest request(const Fingerprint& fp, const ConfigHandle* config,
                      const std::string& id) const {
    // A Fingerprint keeps its own config; the thresholds are the call's or else the index's.
    const Config& live = rule_config(config)->config;
    return *index_request(Page{.id = id}, fp.page, fp.config->scheme, live);
  }

  static Verdict skipped(const Fingerprint& fp) {
    return Verdict{.status = Verdict::Status::kSkipped, .reason = fp.page.skip->reason};
  }

  ConfigPtr config_;
  bool read_only_;
  std::string path_;
  std::shared_ptr<OpenStore> store_;
};

// Arguments are taken as Python objects and converted here, so that a wrong one raises a short
// TypeError naming it: pybind11's own error for a call that fits no signature quotes the repr()
// of every argument, a page's whole body.
std::string type_name(const py::handle& value) {
  return py::str(py::type::handle_of(value).attr("__name__"));
}

std::string str_arg(const py::handle& value, const char* name) {
  if (!PyUnicode_Check(value.ptr())) {
    throw py::type_error(std::string(name) + " must be str, not " + type_name(value));
  }
  return value.cast<std::string>();
}

const ConfigHandle* config_arg(const py::handle& value) {
  if (value.is_none()) return nullptr;
  if (!py::isinstance<ConfigHandle>(value)) {
    throw py::type_error("config must be a neardup.Config or None, not " + type_name(value));
  }
  return &value.cast<const ConfigHandle&>();
}

std::string path_arg(const py::handle& value, const char* name) {
  if (!PyUnicode_Check(value.ptr()) && !py::hasattr(value, "__fspath__")) {
    throw py::type_error(std::string(name) + " must be a str or os.PathLike, not " +
                         type_name(value));
  }
  return py::str(py::module_::import("os").attr("fspath")(value));
}

// The last overload of a function: a call that fits none before it (a missing or misspelt
// argument) raises a TypeError naming the parameters and the types given, never the values.
std::function<void(py::args, py::kwargs)> refuse_other_calls(std::string function,
                                                             std::string parameters, bool method) {
  return [function = std::move(function), parameters = std::move(parameters), method](
             const py::args& args, const py::kwargs& kwargs) {
    std::string given;
    for (std::size_t i = method ? 1 : 0; i < args.size(); ++i) {
      if (!given.empty()) given += ", ";
      given += type_name(args[i]);
    }
    for (const auto& [key, value] : kwargs) {
      if (!given.empty()) given += ", ";
      given += std::string(py::str(key)) + "=" + type_name(value);
    }
    throw py::type_error(function + "() takes (" + parameters + "), not (" + given + ")");
  };
}

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

constexpr const char* kIndexDoc =
    R"(A neardup index: pages go in with insert(), questions go to query()
and is_duplicate().

    index = neardup.Index()                        # in memory: removed when closed
    for id, html in pages:
        verdict = index.insert(id, html)           # unique, duplicate (of what) or skipped
        if verdict.is_duplicate: ...

path=None keeps the index in memory (a store in a temporary directory, removed by close() or
when the object goes away). A path opens the store there for writing, creating it, as
`neardup dedup --store PATH` does: one process writes a store at a time, so this fails
(StoreError, naming the writer's pid) beside a running neardupd. read_only=True opens an
existing store beside its writer instead: queries then answer from the snapshot taken at
opening (refresh() takes a newer one), one LMDB read transaction held until refresh() or
close(); meanwhile the writer cannot reuse the pages freed since, so the store's file grows with
what is written: refresh() every few minutes in a long-lived reader. config: the neardup.Config bodies are fingerprinted
under, whose thresholds decide and whose store.* keys size a new store; pass the config the
store was written with. sync=True fsyncs every insert (a crash then loses none).
Raises FileNotFoundError (read_only, no index at path) or StoreError.)";

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
      .def("__repr__", [](const Comparison& c) {
        if (!c.comparable) return std::string("<neardup.Comparison not comparable>");
        return "<neardup.Comparison distance " + std::to_string(c.distance) +
               (c.near_duplicate() ? " duplicate by " + std::string(c.method()) : " different") +
               ">";
      });
}

void bind_verdict(py::module_& m) {
  const auto duplicate_only = [](auto field) {
    return [field](const Verdict& v) -> py::object {
      if (v.status != Verdict::Status::kDuplicate) return py::none();
      return py::cast(field(v));
    };
  };
  py::class_<Verdict>(m, "Verdict",
                      "What the index answered for a page: unique, duplicate (of what, by which "
                      "signature) or skipped.")
      .def_property_readonly(
          "status", [](const Verdict& v) { return std::string(status_name(v.status)); },
          "unique, duplicate or skipped.")
      .def_property_readonly(
          "is_duplicate", [](const Verdict& v) { return v.status == Verdict::Status::kDuplicate; },
          "True for a duplicate.")
      .def_property_readonly("matched", duplicate_only([](const Verdict& v) { return v.matched; }),
                             "duplicate: the id of the matched stored page; else None.")
      .def_property_readonly(
          "duplicate_of", duplicate_only([](const Verdict& v) { return v.duplicate_of; }),
          "duplicate: the id of the first-seen page of matched's cluster; else None.")
      .def_property_readonly("distance",
                             duplicate_only([](const Verdict& v) { return v.distance; }),
                             "duplicate: the Hamming distance to matched; else None.")
      .def_property_readonly(
          "similarity",
          [](const Verdict& v) -> std::optional<double> {
            if (v.status != Verdict::Status::kDuplicate || v.similarity < 0) return std::nullopt;
            return v.similarity;
          },
          "duplicate: the estimated Jaccard similarity to matched, when both have sketches.")
      .def_property_readonly("method", duplicate_only([](const Verdict& v) {
                               return std::string(method_name(v.method));
                             }),
                             "duplicate: the signatures that found it: simhash, minhash or both.")
      .def_property_readonly(
          "reason", [](const Verdict& v) { return none_if_empty(v.reason); },
          "skipped: the pipeline's reason code; else None.")
      .def_property_readonly(
          "candidates", [](const Verdict& v) { return v.candidates; },
          "Stored entries the probe compared with the page.")
      .def("__repr__", [](const Verdict& v) {
        std::string text = "<neardup.Verdict " + std::string(status_name(v.status));
        if (v.status == Verdict::Status::kDuplicate) text += " of " + v.duplicate_of;
        if (!v.reason.empty()) text += " " + v.reason;
        return text + ">";
      });
}

void bind_stored_page(py::module_& m) {
  py::class_<StoredPage>(m, "StoredPage", "A live page of the index.")
      .def_property_readonly(
          "id", [](const StoredPage& p) { return p.id; }, "Its id.")
      .def_property_readonly(
          "doc", [](const StoredPage& p) { return p.doc; },
          "Its document number: pages are numbered from 1 in order of storage.")
      .def_property_readonly(
          "scheme", [](const StoredPage& p) { return p.scheme; },
          "The scheme id it was fingerprinted under.")
      .def_property_readonly(
          "fingerprint", [](const StoredPage& p) { return p.fingerprint; }, "The 64-bit SimHash.")
      .def_property_readonly(
          "hex", [](const StoredPage& p) { return fingerprint_hex(p.fingerprint); },
          "The SimHash as 16 lower-case hex digits.")
      .def_property_readonly(
          "sketch", [](const StoredPage& p) { return sketch_list(p.sketch); },
          "The MinHash values; empty for a scheme without them.")
      .def_property_readonly(
          "first_seen_ms", [](const StoredPage& p) { return p.first_seen_ms; },
          "When its id was first seen, ms since the epoch.")
      .def_property_readonly(
          "stored_at_ms", [](const StoredPage& p) { return p.stored_at_ms; },
          "When it was stored, ms since the epoch.")
      .def_property_readonly(
          "verdict", [](const StoredPage& p) { return p.verdict; },
          "The verdict it got when it was stored (unique or duplicate).")
      .def_property_readonly(
          "cluster", [](const StoredPage& p) { return p.cluster; },
          "The id of the first-seen page of its cluster (its own id when unique).")
      .def("__repr__", [](const StoredPage& p) {
        return "<neardup.StoredPage " + p.id + " " + fingerprint_hex(p.fingerprint) + " cluster " +
               p.cluster + ">";
      });
}

void bind_index(py::module_& m) {
  constexpr const char* kPageParameters = "page, content_type='', config=None";
  py::class_<PyIndex>(m, "Index", kIndexDoc)
      .def(
          py::init([](const py::object& path, bool read_only, const py::object& config, bool sync) {
            std::optional<std::string> where;
            if (!path.is_none()) where = path_arg(path, "path");
            return std::make_unique<PyIndex>(where, read_only,
                                             config_or_default(config_arg(config)), sync);
          }),
          py::arg("path") = py::none(), py::kw_only(), py::arg("read_only") = false,
          py::arg("config") = py::none(), py::arg("sync") = false,
          "__init__($self, path=None, *, read_only=False, config=None, sync=False)\n--\n\n"
          "Opens or creates the index (the class's help says how each kind behaves).")
      .def(
          "insert",
          [](PyIndex& index, const py::object& id, const py::object& page,
             const py::object& content_type, const py::object& config) {
            return index.insert(str_arg(id, "id"), page, str_arg(content_type, "content_type"),
                                config_arg(config));
          },
          py::arg("id"), py::arg("page"), py::arg("content_type") = "",
          py::arg("config") = py::none(),
          R"(insert($self, id, page, content_type='', config=None)
--

Looks the page up and stores it under id, in one step: returns the Verdict it got, as
`neardup dedup` would tag it — unique, duplicate (duplicate_of, matched, by which signature), or
skipped (nothing is stored then). page: a body (bytes or str) or a Fingerprint of the index's
scheme. An id inserted again with the same page gets its first verdict back; with another page,
it is stored anew (a re-crawl). Raises ValueError on an empty id, StoreError when the store
cannot be written (read_only, a full disk).)")
      .def("insert",
           refuse_other_calls("Index.insert", "id, page, content_type='', config=None", true))
      .def(
          "query",
          [](PyIndex& index, const py::object& page, const py::object& content_type,
             const py::object& config) {
            return index.query(page, str_arg(content_type, "content_type"), config_arg(config));
          },
          py::arg("page"), py::arg("content_type") = "", py::arg("config") = py::none(),
          R"(query($self, page, content_type='', config=None)
--

The Verdict insert() would give the page now, without storing it: unique, duplicate
(duplicate_of: the first page of the cluster; matched: the stored page found, by which
signature, at what distance and similarity) or skipped. A stored copy of the page itself is a
match like any other. dedup.max_distance and dedup.min_similarity of config (else of the index's
config) decide.)")
      .def("query", refuse_other_calls("Index.query", kPageParameters, true))
      .def(
          "lookup",
          [](PyIndex& index, const py::object& page, const py::object& content_type,
             const py::object& config) {
            return index.query(page, str_arg(content_type, "content_type"), config_arg(config));
          },
          py::arg("page"), py::arg("content_type") = "", py::arg("config") = py::none(),
          "lookup($self, page, content_type='', config=None)\n--\n\nThe same as query() (the "
          "name `neardup lookup` uses).")
      .def("lookup", refuse_other_calls("Index.lookup", kPageParameters, true))
      .def(
          "is_duplicate",
          [](PyIndex& index, const py::object& page, const py::object& content_type,
             const py::object& config) {
            return index.query(page, str_arg(content_type, "content_type"), config_arg(config))
                       .status == Verdict::Status::kDuplicate;
          },
          py::arg("page"), py::arg("content_type") = "", py::arg("config") = py::none(),
          "is_duplicate($self, page, content_type='', config=None)\n--\n\nWhether query(page) "
          "finds a stored near-duplicate.")
      .def("is_duplicate", refuse_other_calls("Index.is_duplicate", kPageParameters, true))
      .def(
          "find",
          [](PyIndex& index, const py::object& id) { return index.find(str_arg(id, "id")); },
          py::arg("id"),
          "find($self, id)\n--\n\nThe live StoredPage under id (not superseded by a re-crawl, "
          "removed or past store.retention), or None.")
      .def(
          "remove",
          [](PyIndex& index, const py::object& id) { return index.remove(str_arg(id, "id")); },
          py::arg("id"),
          "remove($self, id)\n--\n\nRemoves the live page under id, as `neardup forget`: it is no "
          "longer matched or found. Returns whether there was one.")
      .def("__contains__",
           [](PyIndex& index, const py::object& id) {
             return PyUnicode_Check(id.ptr()) && index.find(id.cast<std::string>()).has_value();
           })
      .def("__len__", &PyIndex::documents,
           "The number of live pages stored (the newest state, also when read-only).")
      .def("refresh", &PyIndex::refresh,
           "refresh($self)\n--\n\nRead-only: opens the store again, so that queries see the pages "
           "stored since, and lets go of the old snapshot (which kept the writer from reusing "
           "the pages it read). Does nothing on an index open for writing.")
      .def("close", &PyIndex::close,
           "close($self)\n--\n\nCloses the index (an index in memory is removed). Later calls "
           "raise ValueError.")
      .def_property_readonly("path", &PyIndex::path,
                             "The store's directory (a temporary one for an index in memory).")
      .def_property_readonly("read_only", &PyIndex::read_only, "Whether it was opened read-only.")
      .def_property_readonly("in_memory", &PyIndex::in_memory,
                             "Whether it is a temporary store, removed when closed.")
      .def_property_readonly(
          "config",
          [](const PyIndex& index) {
            return std::const_pointer_cast<ConfigHandle>(index.config());
          },
          "The configuration pages are fingerprinted under and verdicts decided by.")
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](PyIndex& index, const py::args&) { index.close(); })
      .def("__repr__", [](const PyIndex& index) {
        return "<neardup.Index " + index.path() +
               (index.read_only()   ? " read-only"
                : index.in_memory() ? " in memory"
                                    : "") +
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
  bind_verdict(m);
  bind_stored_page(m);
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
