/* base.c - logging through the environment, a seeded random generator, the
 * bump arena and the string table. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpupool/base.h"

void gp_logf(const struct gp_env *env, enum gp_log_level level, const char *fmt,
             ...)
{
    char buf[512];
    va_list ap;

    if (!env || !env->log || level > env->log_level)
        return;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    env->log(env->log_priv, level, buf);
}

/* ---- random: splitmix64 to seed xoshiro256** ---------------------------- */

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));

    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

void gp_rng_init(struct gp_rng *rng, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        rng->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t gp_rng_next(struct gp_rng *rng)
{
    uint64_t *s = rng->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;

    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double gp_rng_unit(struct gp_rng *rng)
{
    return (double)(gp_rng_next(rng) >> 11) * 0x1.0p-53;
}

/* ---- allocation ---------------------------------------------------------- */

void *gp_env_realloc(const struct gp_env *env, void *ptr, size_t size)
{
    if (env && env->realloc)
        return env->realloc(env->alloc_priv, ptr, size);
    if (size == 0) {
        free(ptr);
        return NULL;
    }
    return realloc(ptr, size);
}

void *gp_env_alloc(const struct gp_env *env, size_t size)
{
    return gp_env_realloc(env, NULL, size ? size : 1);
}

void *gp_env_calloc(const struct gp_env *env, size_t n, size_t size)
{
    void *p;

    if (size && n > SIZE_MAX / size)
        return NULL;
    if ((p = gp_env_alloc(env, n * size)))
        memset(p, 0, n * size);
    return p;
}

void gp_env_free(const struct gp_env *env, void *ptr)
{
    if (ptr)
        (void)gp_env_realloc(env, ptr, 0); /* frees: returns NULL */
}

/* ---- arena -------------------------------------------------------------- */

struct gp_arena_block {
    struct gp_arena_block *next;
    size_t size, used;
    max_align_t data[];
};

#define ARENA_BLOCK (64 * 1024)

void gp_arena_init(struct gp_arena *a, size_t cap)
{
    gp_arena_init_env(a, cap, NULL);
}

void gp_arena_init_env(struct gp_arena *a, size_t cap, const struct gp_env *env)
{
    a->head = NULL;
    a->used_total = 0;
    a->cap = cap ? cap : ((size_t)1 << 30);
    a->env = env;
}

void gp_arena_fini(struct gp_arena *a)
{
    struct gp_arena_block *b = a->head, *next;

    for (; b; b = next) {
        next = b->next;
        gp_env_free(a->env, b);
    }
    a->head = NULL;
    a->used_total = 0;
}

void gp_arena_reset(struct gp_arena *a)
{
    /* Keep the largest block and free the rest: blocks grow geometrically,
     * so after a few rounds one block holds a whole round's scratch and a
     * round touches no fresh pages. */
    struct gp_arena_block *b, *keep = a->head;

    if (!a->head)
        return;
    for (b = a->head; b; b = b->next)
        if (b->size > keep->size)
            keep = b;
    for (b = a->head; b;) {
        struct gp_arena_block *next = b->next;
        if (b != keep)
            gp_env_free(a->env, b);
        b = next;
    }
    keep->next = NULL;
    keep->used = 0;
    a->head = keep;
    a->used_total = 0;
}

void *gp_arena_alloc(struct gp_arena *a, size_t size)
{
    struct gp_arena_block *b = a->head;
    size_t align = sizeof(max_align_t);
    void *p;

    /* refuse before rounding: a huge size would wrap to a small one */
    if (size > a->cap || a->used_total + size > a->cap)
        return NULL;
    size = (size + align - 1) / align * align;
    if (size == 0)
        size = align;
    if (size > a->cap || a->used_total + size > a->cap)
        return NULL;
    if (!b || b->size - b->used < size) {
        size_t bsize = size > ARENA_BLOCK ? size : ARENA_BLOCK;

        if (b && b->size * 2 > bsize && b->size * 2 <= a->cap)
            bsize = b->size * 2; /* grow: the next reset keeps the largest */

        if (b && b->used == 0 && b->size < bsize) {
            /* an empty head that is too small: replace it */
            a->head = b->next;
            gp_env_free(a->env, b);
        }
        b = gp_env_alloc(a->env, sizeof(*b) + bsize);
        if (!b)
            return NULL;
        b->size = bsize;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    p = (char *)b->data + b->used;
    b->used += size;
    a->used_total += size;
    return p;
}

/* ---- string table ------------------------------------------------------- */

static uint32_t hash_bytes(const char *s, size_t len)
{
    uint32_t h = 2166136261u; /* FNV-1a */

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 16777619u;
    }
    return h;
}

void gp_strtab_init(struct gp_strtab *t)
{
    gp_strtab_init_env(t, NULL);
}

void gp_strtab_init_env(struct gp_strtab *t, const struct gp_env *env)
{
    memset(t, 0, sizeof(*t));
    t->env = env;
    gp_arena_init_env(&t->mem, (size_t)8 << 30, env);
}

void gp_strtab_fini(struct gp_strtab *t)
{
    gp_env_free(t->env, t->strs);
    gp_env_free(t->env, t->slots);
    gp_arena_fini(&t->mem);
    memset(t, 0, sizeof(*t));
}

static int grow_slots(struct gp_strtab *t)
{
    uint32_t n = t->nslots ? t->nslots * 2 : 64;
    uint32_t *slots = gp_env_calloc(t->env, n, sizeof(*slots));

    if (!slots)
        return GP_ENOMEM;
    for (uint32_t id = 1; id < t->nstrs; id++) {
        uint32_t h = hash_bytes(t->strs[id], strlen(t->strs[id]));
        uint32_t i = h & (n - 1);

        while (slots[i])
            i = (i + 1) & (n - 1);
        slots[i] = id;
    }
    gp_env_free(t->env, t->slots);
    t->slots = slots;
    t->nslots = n;
    return GP_OK;
}

uint32_t gp_strtab_find(const struct gp_strtab *t, const char *s, size_t len)
{
    uint32_t i;

    if (len == (size_t)-1)
        len = strlen(s);
    if (!t->nslots)
        return 0;
    i = hash_bytes(s, len) & (t->nslots - 1);
    while (t->slots[i]) {
        const char *c = t->strs[t->slots[i]];

        if (strncmp(c, s, len) == 0 && c[len] == '\0')
            return t->slots[i];
        i = (i + 1) & (t->nslots - 1);
    }
    return 0;
}

int gp_strtab_intern(struct gp_strtab *t, const char *s, size_t len,
                     uint32_t *id)
{
    uint32_t found, i;
    char *copy;

    if (len == (size_t)-1)
        len = strlen(s);
    if ((found = gp_strtab_find(t, s, len))) {
        *id = found;
        return GP_OK;
    }
    if (t->nstrs == 0) { /* slot 0 is the empty "no string" */
        t->cap = 64;
        if (!(t->strs = gp_env_alloc(t->env, t->cap * sizeof(*t->strs))))
            return GP_ENOMEM;
        t->strs[0] = t->empty;
        t->nstrs = 1;
    }
    if ((t->nstrs + 1) * 2 > t->nslots && grow_slots(t) != GP_OK)
        return GP_ENOMEM;
    if (t->nstrs == t->cap) {
        char **strs =
            gp_env_realloc(t->env, t->strs, t->cap * 2 * sizeof(*strs));

        if (!strs)
            return GP_ENOMEM;
        t->strs = strs;
        t->cap *= 2;
    }
    if (t->nstrs == UINT32_MAX)
        return GP_ERANGE;
    if (!(copy = gp_arena_alloc(&t->mem, len + 1)))
        return GP_ENOMEM;
    memcpy(copy, s, len);
    copy[len] = '\0';
    t->strs[t->nstrs] = copy;
    i = hash_bytes(copy, len) & (t->nslots - 1);
    while (t->slots[i])
        i = (i + 1) & (t->nslots - 1);
    t->slots[i] = t->nstrs;
    *id = t->nstrs++;
    return GP_OK;
}

const char *gp_strtab_get(const struct gp_strtab *t, uint32_t id)
{
    if (id == 0 || id >= t->nstrs)
        return "";
    return t->strs[id];
}
