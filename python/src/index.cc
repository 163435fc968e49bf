#include "python/src/index.h"

#include <pybind11/stl.h>
#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "common/mutex.h"
#include "message/answers.h"
#include "message/tag.h"
#include "pipeline/fingerprint/fingerprint.h"
#include "pipeline/learn/finish.h"
#include "python/src/values.h"
#include "store/index.h"

namespace neardup::python {
namespace {

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
      // writing presizes and reads ahead nothing, as `neardup dedup` (store/index.h, OpenOptions).
      opened = Index::open(
          store_config,
          {.read_only = read_only, .presize_busy_deltas = false, .read_runs_ahead = false});
    }
    if (!opened) throw_store_error(opened.error());
    store->index = std::move(*opened);
    store_ = std::move(store);
  }

  Verdict insert(const std::string& id, const py::handle& page, std::string_view content_type,
                 const ConfigHandle* config) {
    if (id.empty()) throw py::value_error("id must not be empty");
    const Fingerprint fp = fingerprint_of(page, content_type, rule_config(config));
    refuse_learning("Index.insert", *fp.config);
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
    refuse_learning("Index.query", *fp.config);
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

  // explain_stored's object as a dict; an id without a live page (or a first page that matched
  // nothing, without `with`) is a KeyError.
  py::object explain(const std::string& id, const std::string& with) {
    const std::shared_ptr<OpenStore> store = open();
    StoreResult<nlohmann::json> explained;
    {
      py::gil_scoped_release release;
      explained = explain_stored(*store->index, id, with);
    }
    if (!explained && explained.error().code == StoreError::Code::kNotFound) {
      throw py::key_error(explained.error().message);
    }
    if (!explained) throw_store_error(explained.error());
    return py::module_::import("json").attr("loads")(explained->dump());
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

  // A scheme that learns from the crawl finishes pages at its index's writer, in order
  // (docs/configuration.md, "Learning from the crawl"), which the module does not: it would store
  // or compare signatures of another kind under the scheme's id.
  static void refuse_learning(std::string_view call, const ConfigHandle& config) {
    if (!learn::learns(config.config)) return;
    throw py::value_error(std::string(call) +
                          ": the config learns from the crawl "
                          "(features.weighting tfidf or denoise.site_boilerplate); apply its "
                          "pages with neardup dedup or neardupd");
  }

  static Verdict skipped(const Fingerprint& fp) {
    return Verdict{.status = Verdict::Status::kSkipped, .reason = fp.page.skip->reason};
  }

  ConfigPtr config_;
  bool read_only_;
  std::string path_;
  std::shared_ptr<OpenStore> store_;
};

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

void bind_verdict(py::module_& m) {
  const auto duplicate_only = [](auto field) {
    return [field](const Verdict& v) -> py::object {
      if (v.status != Verdict::Status::kDuplicate) return py::none();
      return py::cast(field(v));
    };
  };
  // A containment field as (id, share), or None.
  const auto related = [](Verdict::Related Verdict::*field) {
    return [field](const Verdict& v) -> std::optional<std::pair<std::string, double>> {
      const Verdict::Related& r = v.*field;
      if (r.id.empty()) return std::nullopt;
      return std::pair{r.id, r.share};
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
          "contained_in", related(&Verdict::contained_in),
          "(id, containment): the earlier page whose text holds most of this page's, with the "
          "share (containment.enabled); else None.")
      .def_property_readonly(
          "contains", related(&Verdict::contains),
          "(id, containment): the earlier page whose text this page holds most of, with the "
          "share (containment.enabled); else None.")
      .def_property_readonly(
          "paragraphs",
          [](const Verdict& v) -> std::optional<py::dict> {
            if (v.paragraphs == 0) return std::nullopt;
            py::dict d;
            d["total"] = v.paragraphs;
            d["seen"] = v.paragraphs_seen;
            d["first"] = v.paragraphs_from;
            return d;
          },
          "{'total', 'seen', 'first'}: the page's tracked paragraphs, how many an earlier page "
          "published first, and those pages (containment.enabled); else None.")
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

}  // namespace

void bind_index(py::module_& m) {
  bind_verdict(m);
  bind_stored_page(m);
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
          "explain",
          [](PyIndex& index, const py::object& id, const py::object& with) {
            return index.explain(str_arg(id, "id"),
                                 with.is_none() ? std::string() : str_arg(with, "with_id"));
          },
          py::arg("id"), py::arg("with_id") = py::none(),
          "explain($self, id, with_id=None)\n--\n\nWhy the stored page id matched another (the "
          "page it matched when stored, else its cluster's first page, or with_id), from the "
          "stored signatures, as `neardup show --explain --json`: a dict with 'a' and 'b' (the "
          "stored pages), 'simhash' (distance, k, blocks, tables), 'minhash' (similarity, "
          "bands, of, rows) and 'stored' (matched, method, distance, similarity). The index "
          "keeps no text: `neardup compare --explain` on the pages says what the texts share. "
          "KeyError when an id has no live page.")
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

}  // namespace neardup::python
