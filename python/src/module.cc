// neardup._neardup: the pipeline, the compare rule and read-only index lookups for Python
// (python/README.md; the typed interface is src/neardup/_neardup.pyi).
//
// Every call that runs the pipeline or reads the index releases the GIL, so Python threads run
// pages in parallel. Page bodies are read in place: a bytes object is immutable and a str's
// UTF-8 form is cached in it, and the caller's reference keeps either alive through the call;
// any other buffer (bytearray, memoryview) is copied first, since another thread may change it.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

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

// A read-only view of an index, answering from the snapshot taken when it was opened.
class ReadOnlyIndex {
 public:
  explicit ReadOnlyIndex(const std::string& path) {
    StoreConfig store;
    store.path = path;
    StoreResult<std::unique_ptr<Index>> opened;
    {
      py::gil_scoped_release release;
      opened = Index::open(store, {.read_only = true});
    }
    if (!opened) throw_store_error(opened.error());
    index_ = std::move(*opened);
    path_ = path;
  }

  Verdict lookup(const py::handle& page, std::string_view content_type,
                 const ConfigHandle* config) {
    Fingerprint fp = fingerprint_of(page, content_type, config);
    if (fp.page.skip) {
      return Verdict{.status = Verdict::Status::kSkipped, .reason = fp.page.skip->reason};
    }
    const Config& live = config != nullptr ? config->config : fp.config->config;
    std::optional<PageRequest> request = index_request(Page{}, fp.page, fp.config->scheme, live);
    const std::shared_ptr<Index> index = open();
    StoreResult<Verdict> verdict;
    {
      py::gil_scoped_release release;
      verdict = index->lookup(*request);
    }
    if (!verdict) throw_store_error(verdict.error());
    return *verdict;
  }

  std::optional<StoredPage> find(const std::string& id) {
    const std::shared_ptr<Index> index = open();
    StoreResult<std::optional<StoredPage>> found;
    {
      py::gil_scoped_release release;
      found = index->find(id);
    }
    if (!found) throw_store_error(found.error());
    return *found;
  }

  std::uint64_t documents() {
    const std::shared_ptr<Index> index = open();
    py::gil_scoped_release release;
    return index->stats().documents;
  }

  void close() { index_.reset(); }
  const std::string& path() const { return path_; }

 private:
  // The open index, shared with the call that uses it: a close() on another thread meanwhile
  // only drops this object's reference.
  std::shared_ptr<Index> open() const {
    if (!index_) throw py::value_error("index " + path_ + " is closed");
    return index_;
  }

  std::shared_ptr<Index> index_;
  std::string path_;
};

void bind_config(py::module_& m) {
  py::class_<ConfigHandle, std::shared_ptr<ConfigHandle>>(m, "Config")
      .def_static("default", [] { return std::const_pointer_cast<ConfigHandle>(default_config()); })
      .def_static(
          "load",
          [](const py::object& path) {
            const std::string file = py::str(py::module_::import("os").attr("fspath")(path));
            return std::const_pointer_cast<ConfigHandle>(parsed(load_config_file(file)));
          },
          py::arg("path"))
      .def_static(
          "from_yaml",
          [](const std::string& text) {
            return std::const_pointer_cast<ConfigHandle>(parsed(parse_config(text)));
          },
          py::arg("text"))
      .def_property_readonly("scheme", [](const ConfigHandle& c) { return c.scheme; })
      .def_property_readonly("max_distance",
                             [](const ConfigHandle& c) { return c.config.dedup.max_distance; })
      .def_property_readonly("min_similarity",
                             [](const ConfigHandle& c) { return c.config.dedup.min_similarity; })
      .def_property_readonly("minhash_enabled",
                             [](const ConfigHandle& c) { return c.config.minhash.enabled; })
      .def("settings",
           [](const ConfigHandle& c) {
             py::dict settings;
             for (const Setting& s : config_settings(c.config)) settings[py::str(s.path)] = s.value;
             return settings;
           })
      .def("to_yaml", [](const ConfigHandle& c) { return to_yaml(c.config); })
      .def("__eq__",
           [](const ConfigHandle& a, const py::object& b) {
             return py::isinstance<ConfigHandle>(b) &&
                    a.config == b.cast<const ConfigHandle&>().config;
           })
      .def("__repr__",
           [](const ConfigHandle& c) { return "<neardup.Config scheme " + c.scheme + ">"; });
}

void bind_fingerprint(py::module_& m) {
  py::class_<Fingerprint>(m, "Fingerprint")
      .def_property_readonly("skipped",
                             [](const Fingerprint& f) { return f.page.skip.has_value(); })
      .def_property_readonly("fingerprint",
                             [](const Fingerprint& f) -> std::optional<std::uint64_t> {
                               if (f.page.skip) return std::nullopt;
                               return f.page.fingerprint;
                             })
      .def_property_readonly("hex",
                             [](const Fingerprint& f) -> std::optional<std::string> {
                               if (f.page.skip) return std::nullopt;
                               return fingerprint_hex(f.page.fingerprint);
                             })
      .def_property_readonly("scheme", [](const Fingerprint& f) { return f.config->scheme; })
      .def_property_readonly("sketch",
                             [](const Fingerprint& f) { return sketch_list(f.page.sketch); })
      .def_property_readonly("skip_reason",
                             [](const Fingerprint& f) -> std::optional<std::string> {
                               if (!f.page.skip) return std::nullopt;
                               return f.page.skip->reason;
                             })
      .def_property_readonly("skip_detail",
                             [](const Fingerprint& f) -> std::optional<std::string> {
                               if (!f.page.skip) return std::nullopt;
                               return f.page.skip->detail;
                             })
      .def_property_readonly("charset",
                             [](const Fingerprint& f) { return none_if_empty(f.page.charset); })
      .def_property_readonly(
          "charset_source",
          [](const Fingerprint& f) { return none_if_empty(f.page.charset_source); })
      .def_property_readonly("feature_count",
                             [](const Fingerprint& f) { return f.page.feature_count; })
      .def_property_readonly(
          "config",
          [](const Fingerprint& f) { return std::const_pointer_cast<ConfigHandle>(f.config); })
      .def("__repr__", [](const Fingerprint& f) {
        if (f.page.skip) return "<neardup.Fingerprint skipped " + f.page.skip->reason + ">";
        return "<neardup.Fingerprint " + fingerprint_hex(f.page.fingerprint) + " " +
               f.config->scheme + ">";
      });
}

void bind_comparison(py::module_& m) {
  py::class_<Comparison>(m, "Comparison")
      .def_property_readonly("comparable", [](const Comparison& c) { return c.comparable; })
      .def_property_readonly("is_duplicate", &Comparison::near_duplicate)
      .def_property_readonly("distance",
                             [](const Comparison& c) -> std::optional<int> {
                               if (!c.comparable) return std::nullopt;
                               return c.distance;
                             })
      .def_property_readonly("similarity", [](const Comparison& c) { return c.similarity; })
      .def_property_readonly("shares_band", [](const Comparison& c) { return c.shares_band; })
      .def_property_readonly("method",
                             [](const Comparison& c) -> std::optional<std::string> {
                               if (!c.near_duplicate()) return std::nullopt;
                               return std::string(c.method());
                             })
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
  py::class_<Verdict>(m, "Verdict")
      .def_property_readonly("status",
                             [](const Verdict& v) { return std::string(status_name(v.status)); })
      .def_property_readonly(
          "is_duplicate", [](const Verdict& v) { return v.status == Verdict::Status::kDuplicate; })
      .def_property_readonly("matched", duplicate_only([](const Verdict& v) { return v.matched; }))
      .def_property_readonly("duplicate_of",
                             duplicate_only([](const Verdict& v) { return v.duplicate_of; }))
      .def_property_readonly("distance",
                             duplicate_only([](const Verdict& v) { return v.distance; }))
      .def_property_readonly("similarity",
                             [](const Verdict& v) -> std::optional<double> {
                               if (v.status != Verdict::Status::kDuplicate || v.similarity < 0)
                                 return std::nullopt;
                               return v.similarity;
                             })
      .def_property_readonly("method", duplicate_only([](const Verdict& v) {
                               return std::string(method_name(v.method));
                             }))
      .def_property_readonly("reason", [](const Verdict& v) { return none_if_empty(v.reason); })
      .def_property_readonly("candidates", [](const Verdict& v) { return v.candidates; })
      .def("__repr__", [](const Verdict& v) {
        std::string text = "<neardup.Verdict " + std::string(status_name(v.status));
        if (v.status == Verdict::Status::kDuplicate) text += " of " + v.duplicate_of;
        if (!v.reason.empty()) text += " " + v.reason;
        return text + ">";
      });
}

void bind_stored_page(py::module_& m) {
  py::class_<StoredPage>(m, "StoredPage")
      .def_property_readonly("id", [](const StoredPage& p) { return p.id; })
      .def_property_readonly("doc", [](const StoredPage& p) { return p.doc; })
      .def_property_readonly("scheme", [](const StoredPage& p) { return p.scheme; })
      .def_property_readonly("fingerprint", [](const StoredPage& p) { return p.fingerprint; })
      .def_property_readonly("hex",
                             [](const StoredPage& p) { return fingerprint_hex(p.fingerprint); })
      .def_property_readonly("sketch", [](const StoredPage& p) { return sketch_list(p.sketch); })
      .def_property_readonly("first_seen_ms", [](const StoredPage& p) { return p.first_seen_ms; })
      .def_property_readonly("stored_at_ms", [](const StoredPage& p) { return p.stored_at_ms; })
      .def_property_readonly("verdict", [](const StoredPage& p) { return p.verdict; })
      .def_property_readonly("cluster", [](const StoredPage& p) { return p.cluster; })
      .def("__repr__", [](const StoredPage& p) {
        return "<neardup.StoredPage " + p.id + " " + fingerprint_hex(p.fingerprint) + " cluster " +
               p.cluster + ">";
      });
}

void bind_index(py::module_& m) {
  py::class_<ReadOnlyIndex>(m, "Index")
      .def(py::init([](const py::object& path) {
             return std::make_unique<ReadOnlyIndex>(
                 py::str(py::module_::import("os").attr("fspath")(path)));
           }),
           py::arg("path"))
      .def("lookup", &ReadOnlyIndex::lookup, py::arg("page"), py::arg("content_type") = "",
           py::arg("config") = py::none())
      .def("find", &ReadOnlyIndex::find, py::arg("id"))
      .def("__len__", &ReadOnlyIndex::documents)
      .def("close", &ReadOnlyIndex::close)
      .def_property_readonly("path", &ReadOnlyIndex::path)
      .def("__enter__", [](py::object self) { return self; })
      .def("__exit__", [](ReadOnlyIndex& index, const py::args&) { index.close(); })
      .def("__repr__",
           [](const ReadOnlyIndex& index) { return "<neardup.Index " + index.path() + ">"; });
}

void define_module(py::module_& m) {
  m.doc() = "neardup: near-duplicate web page detection (fingerprints, comparisons, index lookups)";
  m.attr("__version__") = NEARDUP_VERSION;
  py::register_exception<StoreException>(m, "StoreError", PyExc_RuntimeError);
  bind_config(m);
  bind_fingerprint(m);
  bind_comparison(m);
  bind_verdict(m);
  bind_stored_page(m);
  bind_index(m);

  m.def(
      "fingerprint",
      [](const py::object& html, std::string_view content_type, const ConfigHandle* config) {
        return fingerprint_body(Body(html, content_type), config_or_default(config));
      },
      py::arg("html"), py::arg("content_type") = "", py::arg("config") = py::none());
  m.def(
      "extract",
      [](const py::object& html, std::string_view content_type, const ConfigHandle* config) {
        const Body body(html, content_type);
        const ConfigPtr c = config_or_default(config);
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
      py::arg("html"), py::arg("content_type") = "", py::arg("config") = py::none());
  m.def(
      "compare",
      [](const py::object& a, const py::object& b, std::string_view content_type,
         const ConfigHandle* config) {
        const Fingerprint fa = fingerprint_of(a, content_type, config);
        const Fingerprint fb = fingerprint_of(b, content_type, config);
        if (fa.config->scheme != fb.config->scheme) {
          throw py::value_error("the pages are of different schemes: " + fa.config->scheme +
                                " and " + fb.config->scheme);
        }
        const Config& rule = config != nullptr ? config->config : fa.config->config;
        return compare_pages(fa.page, fb.page, rule);
      },
      py::arg("a"), py::arg("b"), py::arg("content_type") = "", py::arg("config") = py::none());
}

}  // namespace
}  // namespace neardup::python

PYBIND11_MODULE(_neardup, m) { neardup::python::define_module(m); }
