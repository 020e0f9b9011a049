/* prom.h - a writer of the Prometheus text exposition format, version
 * 0.0.4 (Content-Type: text/plain; version=0.0.4; charset=utf-8), for the
 * daemon's /metrics.
 *
 * The writer refuses what a scraper would refuse instead of emitting it:
 * bad metric and label names, label values or help text that are not
 * UTF-8, a family declared twice, samples outside their family. The first
 * error sticks in the buffer, with a diag, and later calls do nothing, so a
 * caller may write a whole page and check once (gp_prom_error). A line that
 * fails leaves nothing of itself in the buffer.
 *
 * Only counter, gauge and untyped families: histograms and summaries need
 * suffix and label rules (_bucket, le) the daemon has no use for yet.
 */
#ifndef GPUPOOL_PROM_H
#define GPUPOOL_PROM_H

#include <stddef.h>

#include "gpupool/base.h"
#include "gpupool/err.h"

/* The default and the hard limit of max_bytes. */
#define GP_PROM_MAX_DEFAULT ((size_t)16 << 20)

enum gp_prom_type { GP_PROM_COUNTER, GP_PROM_GAUGE, GP_PROM_UNTYPED };

/* Caller-owned; treat the fields as private. */
struct gp_prom_buf {
    char *text;
    size_t len, alloc, max;
    char **families; /* names declared so far, to refuse duplicates */
    size_t nfamilies, families_alloc;
    enum gp_prom_type type; /* of the last family */
    int err;                /* sticky: GP_OK or the first error */
    struct gp_diag diag;
    const struct gp_env *env;
};

/* max_bytes caps the text (0 = GP_PROM_MAX_DEFAULT); going past it is
 * GP_ERANGE. env gives the allocator (NULL = the C library) and must
 * outlive the buffer. Allocates nothing yet. */
void gp_prom_init(struct gp_prom_buf *b, size_t max_bytes,
                  const struct gp_env *env);
/* Free everything; b may then be initialised again. NULL: nothing. */
void gp_prom_fini(struct gp_prom_buf *b);
/* Empty the text, forget families and the sticky error; keep the memory
 * for the next page. */
void gp_prom_reset(struct gp_prom_buf *b);

/* Start a family: "# HELP name help" and "# TYPE name type". name must
 * match [a-zA-Z_:][a-zA-Z0-9_:]* and not have been declared since the last
 * reset; help (NULL = no HELP line) must be UTF-8 and is escaped (\ as \\,
 * newline as \n). GP_EINVAL, GP_EEXIST (declared twice), GP_ERANGE (cap),
 * GP_ENOMEM, or the sticky error. */
int gp_prom_family(struct gp_prom_buf *b, const char *name, const char *help,
                   enum gp_prom_type type);

/* One sample of the family most recently started, whose name must be
 * name: name{k="v",...} value. labels[i][0] is a label name
 * ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__", each at most once),
 * labels[i][1] a UTF-8 value, escaped (\ as \\, " as \", newline as \n).
 * labels may be NULL when nlabels is 0. Declare the array as
 * const char *const l[][2] = {{"gpu", "0"}}: ISO C before C23 does not
 * convert const char *l[][2] to this parameter. value: the shortest decimal
 * that reads back as the same double; NaN, +Inf, -Inf as such. A counter must
 * not be negative or NaN. GP_EINVAL, GP_ESTATE (no family, or another
 * family's name), GP_ERANGE, GP_ENOMEM, or the sticky error. */
int gp_prom_sample(struct gp_prom_buf *b, const char *name,
                   const char *const labels[][2], size_t nlabels, double value);

/* The sticky error (GP_OK when none); copies its diag when diag != NULL. */
int gp_prom_error(const struct gp_prom_buf *b, struct gp_diag *diag);

/* The text written so far, NUL-terminated ("" before any write); *len (if
 * not NULL) gets its length. Valid until the next call on b. */
const char *gp_prom_text(const struct gp_prom_buf *b, size_t *len);

#endif
