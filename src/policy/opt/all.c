/* all.c - the policies that solve an optimization problem, after the
 * core's: the lookup the programs use (gpupool/policies.h). */
#include <string.h>

#include "gpupool/policies.h"

extern const struct gp_policy_ops gp_policy_gavel;
extern const struct gp_policy_ops gp_policy_allox;

static const struct gp_policy_ops *const opt_policies[] = {
    &gp_policy_gavel,
    &gp_policy_allox,
    NULL,
};

const struct gp_policy_ops *gp_policy_at(size_t i)
{
    size_t n = 0;

    while (gp_policies[n])
        n++;
    if (i < n)
        return gp_policies[i];
    i -= n;
    for (size_t k = 0; opt_policies[k]; k++)
        if (k == i)
            return opt_policies[k];
    return NULL;
}

const struct gp_policy_ops *gp_policy_lookup(const char *name)
{
    const struct gp_policy_ops *p = gp_policy_find(name);

    if (p)
        return p;
    for (size_t k = 0; opt_policies[k]; k++)
        if (strcmp(opt_policies[k]->name, name) == 0)
            return opt_policies[k];
    return NULL;
}

bool gp_policy_colocates(const struct gp_policy_ops *ops,
                         const struct gp_kv *opts, size_t nopts)
{
    return ops->colocates ||
           (ops->colocates_with && ops->colocates_with(opts, nopts));
}
