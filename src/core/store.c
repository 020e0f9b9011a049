/* store.c - the job store.
 *
 * Key decision: jobs live in fixed chunks of 4,096, so a job's address
 * never changes and a million jobs cost no reallocation copies.
 */
#include "core/core_priv.h"

int gp__job_new(struct gp_core *c, struct gp_job **out)
{
    size_t chunk = c->njobs >> CHUNK_BITS;

    if (c->njobs >= UINT32_MAX - 1)
        return GP_ERANGE;
    if (chunk == c->nchunks) {
        struct gp_job **p = realloc(c->chunks, (chunk + 1) * sizeof(*p));
        if (!p)
            return GP_ENOMEM;
        c->chunks = p;
        if (!(c->chunks[chunk] = calloc(CHUNK, sizeof(struct gp_job))))
            return GP_ENOMEM;
        c->nchunks++;
    }
    *out = J(c, (uint32_t)c->njobs);
    memset(*out, 0, sizeof(**out));
    (*out)->id = (uint32_t)c->njobs++;
    return GP_OK;
}

void gp__jobs_free(struct gp_core *c)
{
    for (size_t i = 0; i < c->njobs; i++)
        gp_placement_fini(&J(c, (uint32_t)i)->where);
    for (size_t i = 0; i < c->nchunks; i++)
        free(c->chunks[i]);
    free(c->chunks);
}

const struct gp_job *gp_core_job(const struct gp_core *c, uint32_t id)
{
    return id < c->njobs ? J(c, id) : NULL;
}

size_t gp_core_njobs(const struct gp_core *c)
{
    return c->njobs;
}
