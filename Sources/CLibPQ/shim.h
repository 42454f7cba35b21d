#ifndef CLIBPQ_SHIM_H
#define CLIBPQ_SHIM_H
// Debian installs libpq-fe.h under /usr/include/postgresql; pkg-config adds that directory, and the
// fallback keeps the build working when the pkg-config binary is missing.
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
#endif
