/* tenants.h - reading tenant definitions from JSON (the schema the daemon's
 * API uses too; see docs/tenants.md). */
#ifndef GPUPOOL_TRACE_TENANTS_H
#define GPUPOOL_TRACE_TENANTS_H

#include "gpupool/core.h"

/* Who belongs to a tenant (the daemon's "users"; the simulator ignores
 * it). Without a "users" key a tenant has no members: only admins act in
 * it. "*" (alone or among names) lets everyone in. */
struct gp_tenant_users {
    bool listed;        /* the entry had a "users" key */
    bool everyone;      /* "*" was among them */
    const char **names; /* n user names (not "*"), interned in strs */
    size_t n;
};

struct gp_tenant_list {
    struct gp_tenant_spec *t;
    struct gp_tenant_users *users; /* per tenant, beside t */
    size_t n;
    struct gp_strtab strs; /* names live here */
};

void gp_tenant_list_init(struct gp_tenant_list *l);
void gp_tenant_list_fini(struct gp_tenant_list *l);
/* Limits of a tenants file (docs/tenants.md). */
#define GP_TENANTS_FILE_MAX (64u << 20) /* bytes */
#define GP_TENANTS_MAX 100000u          /* tenants */
#define GP_TENANT_NAME_MAX 128u         /* bytes of a name, a parent, a type */
#define GP_TENANT_USERS_MAX 10000u      /* users of one tenant */
#define GP_USER_NAME_MAX 63u            /* bytes of a user name */

/* Is s (len bytes) a user name a tenant may list: 1 to GP_USER_NAME_MAX
 * bytes of letters, digits, '_', '.', '-' (not first) and a final '$'
 * (the names useradd accepts), or "uid:N" for a uid without a name, or
 * "*"? NULL if so, else why not, in words. */
const char *gp_tenant_user_check(const char *s, size_t len);

/* Parse a tenants document; errors name "FILE: tenants[3].cap" or the
 * line of a syntax error. Names (and parents, GPU types) are 1 to
 * GP_TENANT_NAME_MAX bytes of UTF-8 without control characters; a tenant
 * may nest at most GP_TENANT_MAX_DEPTH levels deep (GP_ERANGE naming the
 * entry). Duplicate and parent checks cost O(1) per tenant (hashed). */
int gp_tenants_parse(struct gp_tenant_list *l, const char *buf, size_t len,
                     const char *name, struct gp_diag *diag);
int gp_tenants_load(struct gp_tenant_list *l, const char *path,
                    struct gp_diag *diag);

#endif
