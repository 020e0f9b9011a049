/* tenants.h - reading tenant definitions from JSON (the schema the daemon's
 * API will use; see docs/tenants.md). */
#ifndef GPUPOOL_TRACE_TENANTS_H
#define GPUPOOL_TRACE_TENANTS_H

#include "gpupool/core.h"

struct gp_tenant_list {
    struct gp_tenant_spec *t;
    size_t n;
    struct gp_strtab strs; /* names live here */
};

void gp_tenant_list_init(struct gp_tenant_list *l);
void gp_tenant_list_fini(struct gp_tenant_list *l);
/* Parse a tenants document; errors name "FILE: tenants[3].cap" or the
 * line of a syntax error. */
int gp_tenants_parse(struct gp_tenant_list *l, const char *buf, size_t len,
                     const char *name, struct gp_diag *diag);
int gp_tenants_load(struct gp_tenant_list *l, const char *path,
                    struct gp_diag *diag);

#endif
