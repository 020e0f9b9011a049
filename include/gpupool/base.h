/* base.h - small things every module uses: time units, the environment the
 * core runs in, a bump arena for per-round scratch memory and a string table.
 *
 * Time is integer microseconds everywhere in the core (names end in _us).
 * The core never reads a clock: the world passes "now" in.
 */
#ifndef GPUPOOL_BASE_H
#define GPUPOOL_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpupool/err.h"

#define GP_US_PER_S INT64_C(1000000)
#define GP_TIME_NONE INT64_C(-1)
#define GP_TIME_MAX INT64_MAX

static inline double gp_us_to_s(int64_t us)
{
    return (double)us / 1e6;
}

/* a * b, or INT64_MAX / INT64_MIN where it would overflow: time x GPUs of
 * a 100-year run on 100,000 GPUs does not fit int64 microseconds. */
static inline int64_t gp_mul_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_mul_overflow(a, b, &r))
        return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
}

/* a + b, saturating likewise. */
static inline int64_t gp_add_sat(int64_t a, int64_t b)
{
    int64_t r;

    if (__builtin_add_overflow(a, b, &r))
        return a < 0 ? INT64_MIN : INT64_MAX;
    return r;
}

enum gp_log_level { GP_LOG_ERROR, GP_LOG_WARN, GP_LOG_INFO, GP_LOG_DEBUG };

/* Everything from outside the core comes through here: the log sink, the
 * random seed and the allocator. No globals, no clocks. */
struct gp_env {
    void (*log)(void *priv, enum gp_log_level level, const char *msg);
    void *log_priv;
    enum gp_log_level log_level;
    uint64_t seed;
    /* optional: the allocator, with realloc's contract (ptr NULL: a new
     * block; size 0: free ptr and return NULL). NULL = the C library's.
     * Every allocation of the core, its string tables, arenas, predictor
     * and policies goes through it; the cluster's own (nodes, indexes,
     * placement copies) does not. Tests fail the n-th allocation with it;
     * a daemon can account memory. */
    void *(*realloc)(void *priv, void *ptr, size_t size);
    void *alloc_priv;
};

/* Allocation through an environment (env may be NULL). gp_env_calloc
 * zeroes and refuses n * size that overflows; gp_env_realloc with size 0
 * frees. NULL when out of memory. */
void *gp_env_alloc(const struct gp_env *env, size_t size);
void *gp_env_calloc(const struct gp_env *env, size_t n, size_t size);
void *gp_env_realloc(const struct gp_env *env, void *ptr, size_t size);
void gp_env_free(const struct gp_env *env, void *ptr);

void gp_logf(const struct gp_env *env, enum gp_log_level level, const char *fmt,
             ...) __attribute__((format(printf, 3, 4)));

/* A deterministic random generator (splitmix64 seeded, xoshiro256**). */
struct gp_rng {
    uint64_t s[4];
};
void gp_rng_init(struct gp_rng *rng, uint64_t seed);
uint64_t gp_rng_next(struct gp_rng *rng);
/* Uniform double in [0, 1). */
double gp_rng_unit(struct gp_rng *rng);

/* Bump allocator. Memory lives until gp_arena_reset or gp_arena_fini.
 * Allocation returns NULL when out of memory or past the arena's cap. */
struct gp_arena {
    struct gp_arena_block *head;
    size_t used_total;
    size_t cap;               /* 0 = 1 GiB */
    const struct gp_env *env; /* its allocator (NULL = the C library) */
};
void gp_arena_init(struct gp_arena *a, size_t cap);
/* The same, allocating through env. */
void gp_arena_init_env(struct gp_arena *a, size_t cap,
                       const struct gp_env *env);
void gp_arena_fini(struct gp_arena *a);
void gp_arena_reset(struct gp_arena *a);
void *gp_arena_alloc(struct gp_arena *a, size_t size);

/* Interned strings: equal strings get the same id; ids are dense from 1,
 * 0 means "no string". Strings are stored once, NUL-terminated. */
struct gp_strtab {
    char **strs;    /* id -> string, strs[0] = "" */
    uint32_t nstrs; /* including the empty slot 0 */
    uint32_t cap;
    uint32_t *slots; /* open addressing: id or 0 */
    uint32_t nslots; /* power of two */
    struct gp_arena mem;
    const struct gp_env *env; /* its allocator (NULL = the C library) */
    char empty[1];            /* the string of id 0 */
};
void gp_strtab_init(struct gp_strtab *t);
/* The same, allocating through env. */
void gp_strtab_init_env(struct gp_strtab *t, const struct gp_env *env);
void gp_strtab_fini(struct gp_strtab *t);
/* Intern s (len bytes, or strlen when len is (size_t)-1). */
int gp_strtab_intern(struct gp_strtab *t, const char *s, size_t len,
                     uint32_t *id);
/* Look up without inserting; 0 when absent. */
uint32_t gp_strtab_find(const struct gp_strtab *t, const char *s, size_t len);
/* The string of an id; "" for 0 or an unknown id. */
const char *gp_strtab_get(const struct gp_strtab *t, uint32_t id);

#endif
