/* tenancy.h - the daemon's tenants at run time: who belongs to each
 * (d->members, auth.h), and an admin's changes (POST and PATCH
 * /v1/tenants), given to the core and kept in the store.
 *
 * Key decisions:
 *  - The tenants file is the start; the store's tenants table holds every
 *    tenant an admin created or changed through the API, whole (weight,
 *    guarantee, cap, lend_limit, parent, users). At start the store's
 *    definition of a tenant wins over the file's: a change made through the
 *    API survives a restart (a line in the log says so for each).
 *  - A change is written to the store first (inside the loop's savepoint)
 *    and then given to the core; if the core refuses it, the savepoint
 *    undoes the write, so the store never holds what the core refused.
 *  - The loop thread only, like everything of struct daemon.
 */
#ifndef GPUPOOL_DAEMON_TENANCY_H
#define GPUPOOL_DAEMON_TENANCY_H

#include "daemon/daemon.h"

/* At start, after the tenants file's tenants are in the core: build
 * d->members from the file, then apply the store's tenants over them. A
 * stored tenant the core refuses now (its parent gone, ...) is logged and
 * left out. GP_ENOMEM, or the store's error. */
int gp_tenancy_init(struct daemon *d, struct gp_diag *diag);
/* SIGHUP: apply a tenants file read again over the running core, as a
 * start would: tenants new to the core are added, the others updated
 * (their users too), except those an admin defined through the API (the
 * store's definition wins). A change the core refuses, or a changed split
 * by GPU type, is logged and leaves that tenant as it was; a tenant that
 * left the file stays until a restart. GP_EIO when the store cannot be
 * read (nothing changed). */
int gp_tenancy_reload(struct daemon *d, struct gp_tenant_list *l);
/* Free d->members (NULL-safe, idempotent). */
void gp_tenancy_fini(struct daemon *d);

/* May `who` act in `tenant` (auth.h, gp_auth_may, with this daemon's
 * members and its open "default")? */
bool gp_tenancy_may(const struct daemon *d, const struct gp_identity *who,
                    const char *tenant);
/* Is the tenant defined (file, store, or the open "default")? */
bool gp_tenancy_is_defined(const struct daemon *d, const char *tenant);

/* A defined tenant as the API shows it: name, parent (or absent), weight,
 * guarantee, cap, lend_limit, users. NULL if not defined (or no memory). */
json_t *gp_tenancy_spec(const struct daemon *d, const char *name);

/* Create a tenant from a decoded request (gp_api_decode_tenant, create).
 * GP_EEXIST (it is defined), GP_EINVAL (cap below guarantee, lend_limit
 * above it, parent not defined, what the core refuses), GP_EIO (store);
 * diag->where names the field when there is one ("cap", "parent"). */
int gp_tenancy_create(struct daemon *d, json_t *req, int64_t now,
                      struct gp_diag *diag);
/* Change a defined tenant: the fields of req replace its own. GP_ENOENT
 * (not defined), otherwise as gp_tenancy_create. */
int gp_tenancy_update(struct daemon *d, const char *name, json_t *req,
                      int64_t now, struct gp_diag *diag);

#endif
