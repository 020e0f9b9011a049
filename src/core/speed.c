/* speed.c - the table of measured throughputs behind the speed model.
 *
 * Key decision: classes are few (tens) and a class has few figures (GPU
 * types x measured scales), so a class keeps a small array searched
 * linearly; classes are found through the string table. A rate is asked
 * once per start, not on any hot path.
 *
 * Pair figures (co-location) are many more (Gavel's give 976, a pair of
 * classes on a type): one array sorted by (lower class id, higher class
 * id, type id, gpus), found by binary search. Each pair is stored once
 * with its figures in id order, so both orders of asking meet the same
 * entry.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/heap.h"
#include "gpupool/speed.h"

struct figure {
    uint32_t type; /* strtab id */
    uint32_t gpus;
    bool spread; /* measured with the gang spread over nodes */
    double tput; /* 0: cannot run there (gp_speed_table_set_none) */
};

struct klass {
    struct figure *f;
    uint32_t n, cap;
};

/* Two classes packed onto the same GPUs; a <= b (strtab ids). */
struct pair {
    uint32_t a, b, type, gpus;
    double tput[2]; /* [0] of a, [1] of b, while both run */
};

struct gp_speed_table {
    struct gp_strtab strs;
    uint32_t reference;    /* strtab id of the reference type */
    struct klass *classes; /* by strtab id of the class name */
    uint32_t ncls, capcls;
    size_t nclasses;    /* with figures */
    struct pair *pairs; /* sorted by (a, b, type, gpus) */
    uint32_t npairs, cappairs;
};

int gp_speed_table_new(struct gp_speed_table **out, const char *reference)
{
    struct gp_speed_table *t;

    if (!reference || !*reference)
        return GP_EINVAL;
    if (!(t = calloc(1, sizeof(*t))))
        return GP_ENOMEM;
    gp_strtab_init(&t->strs);
    if (gp_strtab_intern(&t->strs, reference, (size_t)-1, &t->reference)) {
        gp_speed_table_free(t);
        return GP_ENOMEM;
    }
    *out = t;
    return GP_OK;
}

void gp_speed_table_free(struct gp_speed_table *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->ncls; i++)
        free(t->classes[i].f);
    free(t->classes);
    free(t->pairs);
    gp_strtab_fini(&t->strs);
    free(t);
}

/* tput 0 records "cannot run" (set_none); set and set_spread refuse it. */
static int set_figure(struct gp_speed_table *t, const char *job_class,
                      const char *gpu_type, uint32_t gpus, bool spread,
                      double tput)
{
    uint32_t cls, type;
    struct klass *k;
    int rc;

    if (!job_class || !*job_class || !gpu_type || !*gpu_type || gpus < 1 ||
        !isfinite(tput) || tput < 0)
        return GP_EINVAL;
    if ((rc = gp_strtab_intern(&t->strs, job_class, (size_t)-1, &cls)) ||
        (rc = gp_strtab_intern(&t->strs, gpu_type, (size_t)-1, &type)))
        return rc;
    if (cls >= t->ncls) {
        if ((rc = gp__grow(NULL, (void **)&t->classes, &t->capcls,
                           sizeof(*t->classes), cls + 1)))
            return rc;
        memset(t->classes + t->ncls, 0,
               (cls + 1 - t->ncls) * sizeof(*t->classes));
        t->ncls = cls + 1;
    }
    k = &t->classes[cls];
    for (uint32_t i = 0; i < k->n; i++) {
        if (k->f[i].type == type && k->f[i].gpus == gpus &&
            k->f[i].spread == spread) {
            k->f[i].tput = tput;
            return GP_OK;
        }
    }
    if ((rc = gp__grow(NULL, (void **)&k->f, &k->cap, sizeof(*k->f), k->n + 1)))
        return rc;
    if (k->n == 0)
        t->nclasses++;
    k->f[k->n++] = (struct figure){type, gpus, spread, tput};
    return GP_OK;
}

int gp_speed_table_set(struct gp_speed_table *t, const char *job_class,
                       const char *gpu_type, uint32_t gpus, double tput)
{
    if (!(tput > 0))
        return GP_EINVAL;
    return set_figure(t, job_class, gpu_type, gpus, false, tput);
}

int gp_speed_table_set_none(struct gp_speed_table *t, const char *job_class,
                            const char *gpu_type, uint32_t gpus)
{
    return set_figure(t, job_class, gpu_type, gpus, false, 0);
}

int gp_speed_table_set_spread(struct gp_speed_table *t, const char *job_class,
                              const char *gpu_type, uint32_t gpus, double tput)
{
    if (gpus < 2 || !(tput > 0))
        return GP_EINVAL; /* one GPU is on one node */
    return set_figure(t, job_class, gpu_type, gpus, true, tput);
}

static const struct klass *class_of(const struct gp_speed_table *t,
                                    const char *job_class)
{
    uint32_t cls;

    if (!t || !job_class || !*job_class)
        return NULL;
    cls = gp_strtab_find(&t->strs, job_class, (size_t)-1);
    return cls && cls < t->ncls && t->classes[cls].n ? &t->classes[cls] : NULL;
}

/* The figure that stands for `gpus` GPUs of the type: the one at
 * `gpus`, else at the nearest measured scale below it, else at the
 * smallest; NULL without any figure of the type. */
static const struct figure *figure_for(const struct klass *k, uint32_t type,
                                       uint32_t gpus, bool spread)
{
    const struct figure *below = NULL, *smallest = NULL;

    for (uint32_t i = 0; i < k->n; i++) {
        const struct figure *f = &k->f[i];

        if (f->type != type || f->spread != spread)
            continue;
        if (f->gpus == gpus)
            return f;
        if (f->gpus < gpus && (!below || f->gpus > below->gpus))
            below = f;
        if (!smallest || f->gpus < smallest->gpus)
            smallest = f;
    }
    return below ? below : smallest;
}

/* That figure scaled linearly to `gpus`; 0 without one, or where the
 * class cannot run. */
static double tput_of(const struct klass *k, uint32_t type, uint32_t gpus,
                      bool spread)
{
    const struct figure *f = figure_for(k, type, gpus, spread);

    return f ? f->tput * gpus / f->gpus : 0;
}

bool gp_speed_table_can_run(const struct gp_speed_table *t,
                            const char *job_class, const char *gpu_type,
                            uint32_t gpus)
{
    const struct klass *k = class_of(t, job_class);
    const struct figure *f;
    uint32_t type;

    if (!k || !gpu_type || gpus < 1 ||
        !(type = gp_strtab_find(&t->strs, gpu_type, (size_t)-1)))
        return true;
    f = figure_for(k, type, gpus, false);
    return !f || f->tput > 0;
}

double gp_speed_table_throughput(const struct gp_speed_table *t,
                                 const char *job_class, const char *gpu_type,
                                 uint32_t gpus)
{
    const struct klass *k = class_of(t, job_class);
    uint32_t type;

    if (!k || !gpu_type || gpus < 1)
        return 0;
    type = gp_strtab_find(&t->strs, gpu_type, (size_t)-1);
    return type ? tput_of(k, type, gpus, false) : 0;
}

double gp_speed_table_rate_spread(const struct gp_speed_table *t,
                                  const char *job_class, const char *gpu_type,
                                  uint32_t gpus, uint32_t asked, bool spread,
                                  bool *measured)
{
    const struct klass *k = class_of(t, job_class);
    uint32_t type;
    double here = 0, ref;

    if (measured)
        *measured = false;
    if (!k || !gpu_type || gpus < 1 || asked < 1)
        return 0;
    if (!(type = gp_strtab_find(&t->strs, gpu_type, (size_t)-1)))
        return 0;
    if (spread && gpus > 1 && (here = tput_of(k, type, gpus, true)) > 0 &&
        measured)
        *measured = true;
    if (!(here > 0))
        here = tput_of(k, type, gpus, false);
    ref = tput_of(k, t->reference, asked, false);
    return here > 0 && ref > 0 ? here / ref : 0;
}

double gp_speed_table_rate(const struct gp_speed_table *t,
                           const char *job_class, const char *gpu_type,
                           uint32_t gpus, uint32_t asked)
{
    return gp_speed_table_rate_spread(t, job_class, gpu_type, gpus, asked,
                                      false, NULL);
}

static int cmp_u32(uint32_t x, uint32_t y)
{
    return (x > y) - (x < y);
}

static int cmp_pair(const struct pair *p, const struct pair *key)
{
    int c = cmp_u32(p->a, key->a);

    if (!c)
        c = cmp_u32(p->b, key->b);
    if (!c)
        c = cmp_u32(p->type, key->type);
    return c ? c : cmp_u32(p->gpus, key->gpus);
}

/* The index of the first pair not below key (== npairs past the end). */
static uint32_t pair_lower_bound(const struct gp_speed_table *t,
                                 const struct pair *key)
{
    uint32_t lo = 0, hi = t->npairs;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;

        if (cmp_pair(&t->pairs[mid], key) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int gp_speed_table_set_pair(struct gp_speed_table *t, const char *class_a,
                            const char *class_b, const char *gpu_type,
                            uint32_t gpus, double tput_a, double tput_b)
{
    struct pair key = {0};
    uint32_t a, b, i;
    bool swap;
    int rc;

    if (!class_a || !*class_a || !class_b || !*class_b || !gpu_type ||
        !*gpu_type || gpus < 1 || !isfinite(tput_a) || tput_a <= 0 ||
        !isfinite(tput_b) || tput_b <= 0)
        return GP_EINVAL;
    if ((rc = gp_strtab_intern(&t->strs, class_a, (size_t)-1, &a)) ||
        (rc = gp_strtab_intern(&t->strs, class_b, (size_t)-1, &b)) ||
        (rc = gp_strtab_intern(&t->strs, gpu_type, (size_t)-1, &key.type)))
        return rc;
    swap = a > b;
    key.a = swap ? b : a;
    key.b = swap ? a : b;
    key.gpus = gpus;
    key.tput[0] = swap ? tput_b : tput_a;
    key.tput[1] = swap ? tput_a : tput_b;
    i = pair_lower_bound(t, &key);
    if (i < t->npairs && cmp_pair(&t->pairs[i], &key) == 0) {
        t->pairs[i] = key;
        return GP_OK;
    }
    if ((rc = gp__grow(NULL, (void **)&t->pairs, &t->cappairs,
                       sizeof(*t->pairs), t->npairs + 1)))
        return rc;
    /* figures mostly come in id order (a sorted source): this moves
     * little */
    memmove(t->pairs + i + 1, t->pairs + i,
            (t->npairs - i) * sizeof(*t->pairs));
    t->pairs[i] = key;
    t->npairs++;
    return GP_OK;
}

int gp_speed_table_pair(const struct gp_speed_table *t, const char *class_a,
                        const char *class_b, const char *gpu_type,
                        uint32_t gpus, double *tput_a, double *tput_b)
{
    struct pair key = {0};
    const struct pair *p;
    uint32_t a, b, i;
    bool swap;

    if (!t || !class_a || !class_b || !gpu_type || gpus < 1)
        return GP_ENOENT;
    a = gp_strtab_find(&t->strs, class_a, (size_t)-1);
    b = gp_strtab_find(&t->strs, class_b, (size_t)-1);
    key.type = gp_strtab_find(&t->strs, gpu_type, (size_t)-1);
    if (!a || !b || !key.type)
        return GP_ENOENT;
    swap = a > b;
    key.a = swap ? b : a;
    key.b = swap ? a : b;
    key.gpus = gpus;
    i = pair_lower_bound(t, &key);
    if (i >= t->npairs || cmp_pair(&t->pairs[i], &key) != 0)
        return GP_ENOENT;
    p = &t->pairs[i];
    if (tput_a)
        *tput_a = p->tput[swap];
    if (tput_b)
        *tput_b = p->tput[!swap];
    return GP_OK;
}

size_t gp_speed_table_npairs(const struct gp_speed_table *t)
{
    return t->npairs;
}

const char *gp_speed_table_reference(const struct gp_speed_table *t)
{
    return gp_strtab_get(&t->strs, t->reference);
}

size_t gp_speed_table_nclasses(const struct gp_speed_table *t)
{
    return t->nclasses;
}
