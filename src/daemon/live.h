/* live.h - what changes while the daemon runs: the policy's options (an
 * admin's PUT /v1/policy/options, a SIGHUP that finds [policy] changed)
 * and the tenants file (SIGHUP).
 *
 * Key decisions:
 *  - New options go to the running core (gp_core_set_policy_options): the
 *    policy starts afresh with them, every job is ranked again and a round
 *    follows. A set the policy refuses changes nothing.
 *  - Latest wins between the file and the API. An admin's options are kept
 *    in the store (meta "policy_api") beside the file's options they
 *    replaced ("policy_file"). At start and at each SIGHUP, the admin's set
 *    stays in force while the file's [policy] is what it was then; once the
 *    file's [policy] changes, the file's set applies and the admin's is
 *    dropped. Each change is logged with where it came from.
 *  - A SIGHUP applies the tenants file as a start would, over the running
 *    core: new tenants are added, changed ones updated (running jobs are not
 *    touched: the policy's next rounds act on the new guarantees), a tenant
 *    an admin defined through the API keeps the store's definition. A
 *    tenant that left the file stays until a restart (its jobs need it).
 *  - The loop thread only, inside the loop's transaction.
 */
#ifndef GPUPOOL_DAEMON_LIVE_H
#define GPUPOOL_DAEMON_LIVE_H

#include "daemon/daemon.h"

/* At start, after the core is made with the file's options: apply the
 * admin's options if the store holds some made against the file's
 * current [policy]; record the file's. GP_EIO (store), GP_ENOMEM. */
int gp_live_policy_init(struct daemon *d, struct gp_diag *diag);
/* Apply a set of options (a JSON object of strings) from "api" (kept in
 * the store) or "file" (the store's admin set dropped). GP_EINVAL with
 * diag->where naming the key when the policy refuses it (nothing changed),
 * GP_EIO (store). */
int gp_live_policy_set(struct daemon *d, json_t *opts, const char *from,
                       struct gp_diag *diag);
/* GET /v1/policy: policy, placement, options in force, where they came
 * from ("file" or "api"), summary. */
json_t *gp_live_policy_json(const struct daemon *d);
/* SIGHUP found the config file valid (c): apply its [policy] if it changed
 * since the last one applied, and its tenants file. Problems are logged;
 * the daemon goes on with what it had. */
void gp_live_reload(struct daemon *d, const struct gp_config *c);
void gp_live_fini(struct daemon *d);

#endif
