/* policies.h - every policy gpupool has, for the programs that look one up
 * by name: the core's (gp_policies, core.h) and the ones that solve an
 * optimization problem each round (src/policy/opt), which use the solver
 * library (solver.h) and so live outside the core, in the library
 * gpupool_policy_opt.
 */
#ifndef GPUPOOL_POLICIES_H
#define GPUPOOL_POLICIES_H

#include <stdbool.h>
#include <stddef.h>

#include "gpupool/core.h"

/* The policy named `name`, or NULL. */
const struct gp_policy_ops *gp_policy_lookup(const char *name);
/* The i-th policy (the core's first, in gp_policies order), NULL past the
 * last: for (i = 0; (p = gp_policy_at(i)); i++). */
const struct gp_policy_ops *gp_policy_at(size_t i);
/* Does the policy, with these options, start jobs on devices other jobs
 * hold (gp_policy_ops.colocates, colocates_with)? A world that gives a
 * GPU to one job at a time (Slurm) refuses it. */
bool gp_policy_colocates(const struct gp_policy_ops *ops,
                         const struct gp_kv *opts, size_t nopts);

#endif
