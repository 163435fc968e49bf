// neardup.Index, neardup.Verdict and neardup.StoredPage (python/README.md): the index that pages
// are inserted into and asked about, in memory or on disk, and its answers.
#pragma once

#include <pybind11/pybind11.h>

namespace neardup::python {

// Adds Verdict, StoredPage and Index to the module.
void bind_index(pybind11::module_& m);

}  // namespace neardup::python
