/* err.h - the one error vocabulary of gpupool.
 *
 * Every fallible function returns GP_OK (0) or a negative GP_E* code, and
 * writes an optional struct gp_diag that names the place (file:line, a JSON
 * field, a request) and says what was wrong in words a user can act on.
 */
#ifndef GPUPOOL_ERR_H
#define GPUPOOL_ERR_H

#include <stddef.h>

#define GP_ERR_MAP(X)                                                          \
    X(NOMEM, "out of memory")                                                  \
    X(INVAL, "invalid argument")                                               \
    X(NOENT, "no such object")                                                 \
    X(NOFIT, "request does not fit the cluster")                               \
    X(PARSE, "malformed input")                                                \
    X(IO, "i/o error")                                                         \
    X(RANGE, "value out of range")                                             \
    X(EXIST, "object already exists")                                          \
    X(STATE, "operation not allowed in this state")                            \
    X(PLAN, "scheduling plan rejected")

enum gp_err {
    GP_OK = 0,
    GP__ERR_FIRST = -1000,
#define X(name, msg) GP_E##name,
    GP_ERR_MAP(X)
#undef X
};

/* Where and why an error happened. Optional everywhere: pass NULL when only
 * the code matters. Functions fill it only when they return an error. */
struct gp_diag {
    char where[160]; /* "trace.csv:1042", "cluster.json: nodes[3].gpus" */
    char msg[320];
};

/* The short name of an error code ("PARSE"), never NULL. */
const char *gp_err_name(int err);
/* A sentence for an error code ("malformed input"), never NULL. */
const char *gp_err_str(int err);

/* Fill diag (if not NULL) and return err. printf-style message. */
int gp_diag_set(struct gp_diag *diag, int err, const char *where,
                const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* "where: msg" into buf, or the error's sentence when diag is empty. */
const char *gp_diag_format(const struct gp_diag *diag, int err, char *buf,
                           size_t len);

#endif
