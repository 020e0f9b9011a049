/* predict.c - run-time prediction from the history of similar jobs.
 *
 * Every key of every kind (user+name+gpus, ..., global) lives in one
 * open-addressing table (linear probing, load <= 0.7, grown by half, so
 * once grown the load stays above 0.46). A slot is 24 bytes
 * and carries its ring of recent durations: inline while it holds one
 * sample, then in a heap array that grows by about half up to `window`,
 * through sizes malloc rounds no further. A key seen once costs one slot
 * and no allocation; a key seen n times about 8 n bytes more (at most
 * 8 * window). A million learned jobs take about 50 bytes each
 * (docs/prediction.md has the arithmetic).
 *
 * learn() is all-or-nothing: the table grows and the bigger rings are
 * allocated first, and nothing is changed until nothing can fail.
 *
 * The median of an even count is the mean of the two middle values, rounded
 * down: the textbook median, so two samples predict their average rather
 * than one of them.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/predict.h"
#include "predict/predict_priv.h"

#define DEFAULT_WINDOW 32
#define DEFAULT_MIN_SAMPLES 3
#define DEFAULT_US (3600 * GP_US_PER_S)
#define MAX_WINDOW 255 /* ring positions are one byte */
#define MIN_SLOTS 64
#define MAX_SLOTS (UINT32_C(1) << 30)
#define NKINDS 7 /* key kinds: the sources up to GP_PRED_GLOBAL */

struct key {
    uint8_t kind; /* enum gp_predict_source, <= GP_PRED_GLOBAL */
    uint32_t f[3];
};

/* A slot. The ring's capacity is not stored: it is ring_cap(len). */
struct entry {
    union {
        int64_t one;   /* len == 1: the only sample, inline */
        int64_t *ring; /* len > 1 */
    } u;
    uint32_t f[3];
    uint8_t len;  /* samples held, <= window */
    uint8_t next; /* once len == window: the oldest, overwritten next */
    uint8_t kind; /* the key kind + 1; 0 = empty slot */
};
_Static_assert(sizeof(struct entry) <= 24, "a table slot stays 24 bytes");

struct gp_predictor {
    struct gp_predictor_config cfg;
    struct entry *slots;
    uint32_t nslots;
    uint32_t nkeys;
    size_t ring_bytes; /* heap bytes held by rings, allocator slack included */
    const struct gp_env *env; /* the allocator */
};

static const char *const source_names[] = {
    [GP_PRED_USER_NAME_GPUS] = "user+name+gpus",
    [GP_PRED_USER_NAME] = "user+name",
    [GP_PRED_USER_GPUS] = "user+gpus",
    [GP_PRED_USER] = "user",
    [GP_PRED_TENANT_GPUS] = "tenant+gpus",
    [GP_PRED_TENANT] = "tenant",
    [GP_PRED_GLOBAL] = "global",
    [GP_PRED_TIME_LIMIT] = "time_limit",
    [GP_PRED_DEFAULT] = "default",
    [GP_PRED_GIVEN] = "given",
};

const char *gp_predict_source_name(enum gp_predict_source s)
{
    return (unsigned)s < sizeof(source_names) / sizeof(source_names[0])
               ? source_names[s]
               : "?";
}

/* What malloc really takes for `size` bytes (glibc: an 8-byte header,
 * 16-byte granules, 32 at least). An estimate for the memory report. */
static size_t chunk_bytes(size_t size)
{
    size_t c = (size + 8 + 15) & ~(size_t)15;

    return c < 32 ? 32 : c;
}

/* ---- keys ---------------------------------------------------------------- */

/* The job's keys, most specific first; keys needing a string the job lacks
 * (id 0) are left out. Returns how many (1..NKINDS: global is always there). */
static size_t job_keys(const struct gp_job *job, struct key *out)
{
    size_t n = 0;
    uint32_t u = job->user, nm = job->name, g = job->demand.gpus;
    uint32_t t = job->tenant;

#define KEY(k, a, b, c)                                                        \
    do {                                                                       \
        out[n].kind = (k);                                                     \
        out[n].f[0] = (a);                                                     \
        out[n].f[1] = (b);                                                     \
        out[n].f[2] = (c);                                                     \
        n++;                                                                   \
    } while (0)
    if (u && nm) {
        KEY(GP_PRED_USER_NAME_GPUS, u, nm, g);
        KEY(GP_PRED_USER_NAME, u, nm, 0);
    }
    if (u) {
        KEY(GP_PRED_USER_GPUS, u, 0, g);
        KEY(GP_PRED_USER, u, 0, 0);
    }
    KEY(GP_PRED_TENANT_GPUS, t, 0, g);
    KEY(GP_PRED_TENANT, t, 0, 0);
    KEY(GP_PRED_GLOBAL, 0, 0, 0);
#undef KEY
    return n;
}

/* splitmix64's finalizer: every input bit moves every output bit. */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

static uint64_t key_hash(uint8_t kind, const uint32_t f[3])
{
    uint64_t h =
        mix64(((uint64_t)kind << 32 | f[0]) + UINT64_C(0x9e3779b97f4a7c15));

    return mix64(h ^ ((uint64_t)f[1] << 32 | f[2]));
}

static bool entry_is(const struct entry *e, const struct key *k)
{
    return e->kind == k->kind + 1 && e->f[0] == k->f[0] && e->f[1] == k->f[1] &&
           e->f[2] == k->f[2];
}

/* The slot holding k, or the empty slot where it would go. The table always
 * has an empty slot (load <= 0.7), so the probe ends. The table's size is
 * no power of two: the hash's top 32 bits scale to it (Lemire's
 * multiply-shift range reduction). */
static uint32_t probe(const struct entry *slots, uint32_t nslots,
                      const struct key *k)
{
    uint32_t i = (uint32_t)(((key_hash(k->kind, k->f) >> 32) * nslots) >> 32);

    while (slots[i].kind && !entry_is(&slots[i], k))
        if (++i == nslots)
            i = 0;
    return i;
}

static const struct entry *find(const struct gp_predictor *p,
                                const struct key *k)
{
    const struct entry *e = &p->slots[probe(p->slots, p->nslots, k)];

    return e->kind ? e : NULL;
}

static bool fits_load(uint64_t nkeys, uint64_t nslots)
{
    return nkeys * 10 <= nslots * 7;
}

/* Make room for `more` new keys at load <= 0.7. On failure the table is as
 * it was. */
static int reserve(struct gp_predictor *p, uint32_t more)
{
    uint64_t need = (uint64_t)p->nkeys + more;
    uint32_t n = p->nslots;
    struct entry *slots;

    if (fits_load(need, n))
        return GP_OK;
    while (!fits_load(need, n)) {
        if (n >= MAX_SLOTS)
            return GP_ENOMEM; /* the cap on this growable buffer */
        n += n / 2;
    }
    slots = gp_env_calloc(p->env, n, sizeof(*slots));
    if (!slots)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < p->nslots; i++) {
        const struct entry *e = &p->slots[i];
        struct key k;

        if (!e->kind)
            continue;
        k.kind = (uint8_t)(e->kind - 1);
        memcpy(k.f, e->f, sizeof(k.f));
        slots[probe(slots, n, &k)] = *e;
    }
    gp_env_free(p->env, p->slots);
    p->slots = slots;
    p->nslots = n;
    return GP_OK;
}

/* ---- rings --------------------------------------------------------------- */

/* Ring capacities past the inline one. Each is odd, so 8 * cap plus
 * malloc's 8-byte header is a whole number of its 16-byte granules, and
 * each is about 1.5 times the last, so a ring is at most a third empty. */
static const uint8_t cap_steps[] = {1,  3,  5,  7,  11,  15,  23,
                                    31, 47, 63, 95, 127, 191, 255};

/* The capacity of a ring holding len samples: the first step that holds
 * them, but never more than the window. */
static uint32_t ring_cap(uint32_t len, uint32_t window)
{
    size_t i = 0;

    while (cap_steps[i] < len)
        i++;
    return cap_steps[i] < window ? cap_steps[i] : window;
}

static const int64_t *samples(const struct entry *e)
{
    return e->len == 1 ? &e->u.one : e->u.ring;
}

/* The capacity the ring needs for one more sample, or 0 when it has room
 * already or sits at the window (the new sample overwrites the oldest). */
static uint32_t ring_growth(const struct entry *e, uint32_t window)
{
    uint32_t cap = ring_cap(e->len, window);

    return e->len < cap || cap >= window ? 0 : ring_cap(e->len + 1u, window);
}

/* Move the samples into `fresh` (ring_growth's capacity). The ring is
 * linear, not wrapped, until it reaches the window, so this is a copy. */
static void ring_install(struct gp_predictor *p, struct entry *e,
                         int64_t *fresh)
{
    uint32_t window = p->cfg.window;

    memcpy(fresh, samples(e), e->len * sizeof(*fresh));
    if (e->len > 1) {
        gp_env_free(p->env, e->u.ring);
        p->ring_bytes -= chunk_bytes(ring_cap(e->len, window) * sizeof(*fresh));
    }
    p->ring_bytes +=
        chunk_bytes(ring_cap(e->len + 1u, window) * sizeof(*fresh));
    e->u.ring = fresh;
}

/* Cannot fail: ring_install made the room (or the entry is new). */
static void ring_push(struct entry *e, uint32_t window, int64_t us)
{
    assert(window >= 1 && window <= MAX_WINDOW);
    if (e->len == 0) {
        e->u.one = us;
        e->len = 1;
    } else if (e->len < window) {
        /* len == 1 with a window of 1 never gets here */
        e->u.ring[e->len++] = us;
    } else if (window == 1) {
        e->u.one = us;
    } else {
        e->u.ring[e->next] = us;
        e->next = (uint8_t)((e->next + 1u) % window);
    }
}

/* The k-th smallest of a[0..n), 0-based (Hoare's selection). Afterwards
 * a[k] holds it, everything before k is <= it and everything after >= it. */
static int64_t select_kth(int64_t *a, int n, int k)
{
    int lo = 0, hi = n - 1;

    while (lo < hi) {
        int64_t pivot = a[lo + (hi - lo) / 2];
        int i = lo, j = hi;

        while (i <= j) {
            while (a[i] < pivot)
                i++;
            while (a[j] > pivot)
                j--;
            if (i <= j) {
                int64_t t = a[i];

                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break; /* a[j+1..i-1] all equal the pivot */
    }
    return a[k];
}

static int64_t median(const struct entry *e)
{
    int64_t a[MAX_WINDOW];
    int n = e->len, k = (n - 1) / 2;
    int64_t lo, hi;

    assert(n >= 1 && n <= MAX_WINDOW);
    memcpy(a, samples(e), (size_t)n * sizeof(a[0]));
    lo = select_kth(a, n, k);
    if (n % 2)
        return lo;
    hi = a[k + 1];
    for (int i = k + 2; i < n; i++)
        if (a[i] < hi)
            hi = a[i];
    return lo + (hi - lo) / 2; /* no overflow: 0 < lo <= hi */
}

/* ---- the API ------------------------------------------------------------- */

int gp_predictor_new(struct gp_predictor **out,
                     const struct gp_predictor_config *cfg,
                     const struct gp_env *env)
{
    struct gp_predictor *p;
    struct gp_predictor_config c = {0};

    if (!out)
        return GP_EINVAL;
    if (cfg)
        c = *cfg;
    if (!c.window)
        c.window = DEFAULT_WINDOW;
    if (!c.min_samples) /* a small window lowers the default with it */
        c.min_samples =
            c.window < DEFAULT_MIN_SAMPLES ? c.window : DEFAULT_MIN_SAMPLES;
    if (!c.default_us)
        c.default_us = DEFAULT_US;
    if (c.window > MAX_WINDOW || c.min_samples > c.window || c.default_us < 0)
        return GP_EINVAL;
    p = gp_env_calloc(env, 1, sizeof(*p));
    if (!p)
        return GP_ENOMEM;
    p->env = env;
    p->cfg = c;
    p->nslots = MIN_SLOTS;
    p->slots = gp_env_calloc(p->env, p->nslots, sizeof(*p->slots));
    if (!p->slots) {
        gp_env_free(p->env, p);
        return GP_ENOMEM;
    }
    *out = p;
    return GP_OK;
}

void gp_predictor_free(struct gp_predictor *p)
{
    if (!p)
        return;
    for (uint32_t i = 0; i < p->nslots; i++)
        if (p->slots[i].kind && p->slots[i].len > 1)
            gp_env_free(p->env, p->slots[i].u.ring);
    gp_env_free(p->env, p->slots);
    gp_env_free(p->env, p);
}

int64_t gp_predictor_predict(const struct gp_predictor *p,
                             const struct gp_job *job,
                             enum gp_predict_source *source)
{
    struct key keys[NKINDS];
    size_t n = job_keys(job, keys);
    enum gp_predict_source src;
    int64_t us;

    assert(p);
    for (size_t i = 0; i < n; i++) {
        const struct entry *e = find(p, &keys[i]);
        uint32_t need = keys[i].kind == GP_PRED_GLOBAL ? 1 : p->cfg.min_samples;

        if (e && e->len >= need) {
            if (source)
                *source = (enum gp_predict_source)keys[i].kind;
            return median(e);
        }
    }
    if (job->time_limit_us > 0) {
        src = GP_PRED_TIME_LIMIT;
        us = job->time_limit_us;
    } else {
        src = GP_PRED_DEFAULT;
        us = p->cfg.default_us;
    }
    if (source)
        *source = src;
    return us;
}

int gp_predictor_learn(struct gp_predictor *p, const struct gp_job *job,
                       int64_t actual_us)
{
    struct key keys[NKINDS];
    uint32_t at[NKINDS];
    int64_t *fresh[NKINDS] = {0};
    size_t n;
    int rc;

    if (!p || !job || actual_us <= 0)
        return GP_EINVAL;
    n = job_keys(job, keys);
    if ((rc = reserve(p, (uint32_t)n)) != GP_OK)
        return rc;
    /* Bigger rings for held keys that need them, not yet installed; new
     * keys start inline and need none. */
    for (size_t i = 0; i < n; i++) {
        uint32_t cap;

        at[i] = probe(p->slots, p->nslots, &keys[i]);
        if (!p->slots[at[i]].kind) {
            at[i] = UINT32_MAX;
            continue;
        }
        cap = ring_growth(&p->slots[at[i]], p->cfg.window);
        if (cap && !(fresh[i] = gp_env_alloc(p->env, cap * sizeof(*fresh[i]))))
            goto fail;
    }
    /* Nothing fails from here on. Held keys stay where they were found
     * (inserting never moves an entry); a new key probes again, since an
     * earlier new key of this job may have taken the slot it was headed for. */
    for (size_t i = 0; i < n; i++) {
        struct entry *e;

        if (at[i] != UINT32_MAX) {
            e = &p->slots[at[i]];
            if (fresh[i])
                ring_install(p, e, fresh[i]);
        } else {
            e = &p->slots[probe(p->slots, p->nslots, &keys[i])];
            e->kind = (uint8_t)(keys[i].kind + 1);
            memcpy(e->f, keys[i].f, sizeof(e->f));
            e->len = 0;
            e->next = 0;
            p->nkeys++;
        }
        ring_push(e, p->cfg.window, actual_us);
    }
    return GP_OK;

fail:
    for (size_t i = 0; i < n; i++)
        gp_env_free(p->env, fresh[i]);
    return GP_ENOMEM;
}

size_t gp_predictor_nkeys(const struct gp_predictor *p)
{
    return p ? p->nkeys : 0;
}

size_t gp__predictor_mem_bytes(const struct gp_predictor *p)
{
    if (!p)
        return 0;
    return chunk_bytes(sizeof(*p)) +
           chunk_bytes((size_t)p->nslots * sizeof(*p->slots)) + p->ring_bytes;
}
