/* store.c - the job store: slots, handles, retirement, and the index of
 * external ids.
 *
 * Key decisions:
 *  - Jobs live in fixed chunks of 4,096 slots, so a job's address never
 *    changes and a million jobs cost no reallocation copies.
 *  - A job the world is done with is retired: its slot goes on a free list
 *    and its generation moves on, so a handle (slot and generation) kept
 *    by the world finds nothing rather than the next job in that slot. The
 *    store holds as many slots as jobs were ever alive at once: a core that
 *    has seen 10 million jobs with 10,000 alive holds 10,000 slots.
 *  - External ids are copied per job (not interned: they are as many as
 *    the jobs) and indexed by an open-addressing table of slots. Live jobs
 *    may share an id (traces repeat them): each has its own entry, and a
 *    lookup finds the newest live one.
 */
#include "core/core_priv.h"

#define EXT_EMPTY UINT32_MAX
#define EXT_TOMB (UINT32_MAX - 1)

static uint32_t ext_hash(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */

    while (*s)
        h = (h ^ (uint8_t)*s++) * 16777619u;
    return h;
}

/* Rebuild the index at `n` buckets (a power of two) without tombstones. */
static int ext_rehash(struct gp_core *c, uint32_t n)
{
    uint32_t *t = gp_env_alloc(c->env, (size_t)n * sizeof(*t));

    if (!t)
        return GP_ENOMEM;
    for (uint32_t i = 0; i < n; i++)
        t[i] = EXT_EMPTY;
    for (uint32_t i = 0; i < c->next_n; i++) {
        uint32_t s = c->ext_index[i], b;

        if (s == EXT_EMPTY || s == EXT_TOMB)
            continue;
        for (b = ext_hash(J(c, s)->ext) & (n - 1); t[b] != EXT_EMPTY;
             b = (b + 1) & (n - 1))
            ;
        t[b] = s;
    }
    gp_env_free(c->env, c->ext_index);
    c->ext_index = t;
    c->next_n = n;
    c->next_used = c->next_live;
    return GP_OK;
}

/* Index the job's external id. Every live job has its own entry, so
 * jobs sharing an id (traces repeat them) are all found: lookups take the
 * newest of them. */
static int ext_add(struct gp_core *c, struct gp_job *j)
{
    uint32_t b;
    int rc;

    if ((c->next_used + 1) * 2 > c->next_n) {
        uint32_t n = 64; /* a power of two, at least 4 x the live ids */

        while (n < c->next_live * 4) {
            if (n > UINT32_MAX / 4)
                return GP_ENOMEM;
            n *= 2;
        }
        if ((rc = ext_rehash(c, n)) != GP_OK)
            return rc;
    }
    for (b = ext_hash(j->ext) & (c->next_n - 1);
         c->ext_index[b] != EXT_EMPTY && c->ext_index[b] != EXT_TOMB;
         b = (b + 1) & (c->next_n - 1))
        ;
    if (c->ext_index[b] == EXT_EMPTY)
        c->next_used++;
    c->ext_index[b] = j->id;
    c->next_live++;
    return GP_OK;
}

static void ext_remove(struct gp_core *c, const struct gp_job *j)
{
    if (!c->next_n)
        return;
    for (uint32_t b = ext_hash(j->ext) & (c->next_n - 1);
         c->ext_index[b] != EXT_EMPTY; b = (b + 1) & (c->next_n - 1)) {
        if (c->ext_index[b] == j->id) {
            c->ext_index[b] = EXT_TOMB;
            c->next_live--;
            return;
        }
    }
}

/* The free list can hold every slot, and every slot has a place for the
 * memory of its external id: grown with the store. */
static int reserve_free(struct gp_core *c)
{
    uint32_t need = (uint32_t)c->njobs + 1, had = c->capext;
    int rc;

    if ((rc = gp__grow(c->env, (void **)&c->free_slots, &c->capfree,
                       sizeof(uint32_t), need)) ||
        (rc = gp__grow(c->env, (void **)&c->ext_mem, &c->capext, sizeof(char *),
                       need)))
        return rc;
    if (c->capext > had)
        memset(c->ext_mem + had, 0, (c->capext - had) * sizeof(char *));
    return GP_OK;
}

int gp__job_new(struct gp_core *c, const char *ext, struct gp_job **out)
{
    struct gp_job *j;
    uint32_t slot, gen = 0;
    char *copy = NULL;
    int rc;

    if ((rc = reserve_free(c)) != GP_OK)
        return rc;
    if (ext && *ext) {
        size_t len = strlen(ext);
        if (!(copy = gp_env_alloc(c->env, len + 1)))
            return GP_ENOMEM;
        memcpy(copy, ext, len + 1);
    }
    if (c->nfree > 0) {
        slot = c->free_slots[--c->nfree];
        gen = J(c, slot)->gen;
    } else {
        size_t chunk = c->njobs >> CHUNK_BITS;

        if (c->njobs >= UINT32_MAX - 2) {
            gp_env_free(c->env, copy);
            return GP_ERANGE;
        }
        if (chunk == c->nchunks) {
            struct gp_job **p =
                gp_env_realloc(c->env, c->chunks, (chunk + 1) * sizeof(*p));
            if (!p) {
                gp_env_free(c->env, copy);
                return GP_ENOMEM;
            }
            c->chunks = p;
            if (!(c->chunks[chunk] =
                      gp_env_calloc(c->env, CHUNK, sizeof(struct gp_job)))) {
                gp_env_free(c->env, copy);
                return GP_ENOMEM;
            }
            c->nchunks++;
        }
        slot = (uint32_t)c->njobs++;
    }
    j = J(c, slot);
    memset(j, 0, sizeof(*j));
    j->id = slot;
    j->gen = gen;
    j->seq = c->nsubmitted;
    j->ext = copy ? copy : "";
    c->ext_mem[slot] = copy;
    if (copy && (rc = ext_add(c, j)) != GP_OK) {
        gp_env_free(c->env, copy);
        c->ext_mem[slot] = NULL;
        j->ext = "";
        j->gen = gen + 1;
        j->retired = true;
        c->free_slots[c->nfree++] = slot; /* room: reserved above */
        return rc;
    }
    c->nsubmitted++;
    c->nalive++;
    *out = j;
    return GP_OK;
}

/* Give the slot back: the job is forgotten, its handle finds nothing. */
void gp__job_release(struct gp_core *c, struct gp_job *j)
{
    if (*j->ext)
        ext_remove(c, j);
    gp_env_free(c->env, c->ext_mem[j->id]);
    c->ext_mem[j->id] = NULL;
    gp_placement_fini(&j->where);
    j->ext = "";
    j->gen++;
    j->state = GP_JOB_CANCELLED;
    j->retired = true;
    c->free_slots[c->nfree++] = j->id;
    c->nalive--;
}

int gp__job_at(const struct gp_core *c, uint64_t handle, struct gp_job **out)
{
    uint32_t slot = (uint32_t)handle;
    struct gp_job *j;

    if (slot >= c->njobs)
        return GP_ENOENT;
    j = J(c, slot);
    if (j->retired || j->gen != (uint32_t)(handle >> 32))
        return GP_ENOENT;
    *out = j;
    return GP_OK;
}

int gp_core_retire(struct gp_core *c, uint64_t handle)
{
    struct gp_job *j;
    int rc;

    if ((rc = gp__job_at(c, handle, &j)) != GP_OK)
        return rc;
    if (!gp_job_is_done(j))
        return GP_ESTATE;
    gp__job_release(c, j);
    return GP_OK;
}

void gp__jobs_free(struct gp_core *c)
{
    for (size_t i = 0; i < c->njobs; i++) {
        gp_placement_fini(&J(c, (uint32_t)i)->where);
        gp_placement_fini(&J(c, (uint32_t)i)->dest); /* one mid-move */
        gp_env_free(c->env, c->ext_mem[i]);
    }
    gp_env_free(c->env, c->ext_mem);
    for (size_t i = 0; i < c->nchunks; i++)
        gp_env_free(c->env, c->chunks[i]);
    gp_env_free(c->env, c->chunks);
    gp_env_free(c->env, c->free_slots);
    gp_env_free(c->env, c->ext_index);
}

const struct gp_job *gp_core_job(const struct gp_core *c, uint64_t handle)
{
    struct gp_job *j;

    return gp__job_at(c, handle, &j) == GP_OK ? j : NULL;
}

int gp_core_find_job(const struct gp_core *c, const char *ext_id,
                     uint64_t *handle)
{
    const struct gp_job *best = NULL;

    if (!ext_id || !*ext_id || !c->next_n)
        return GP_ENOENT;
    for (uint32_t b = ext_hash(ext_id) & (c->next_n - 1);
         c->ext_index[b] != EXT_EMPTY; b = (b + 1) & (c->next_n - 1)) {
        uint32_t s = c->ext_index[b];

        if (s != EXT_TOMB && strcmp(J(c, s)->ext, ext_id) == 0 &&
            (!best || J(c, s)->seq > best->seq))
            best = J(c, s);
    }
    if (!best)
        return GP_ENOENT;
    *handle = gp_job_handle(best);
    return GP_OK;
}

size_t gp_core_njobs(const struct gp_core *c)
{
    return c->njobs;
}

size_t gp_core_nalive(const struct gp_core *c)
{
    return c->nalive;
}

uint64_t gp_core_nsubmitted(const struct gp_core *c)
{
    return c->nsubmitted;
}
