/* fuzz_tenants_json.c - the tenants file parser on any bytes. */
#include <stddef.h>
#include <stdint.h>

#include "trace/tenants.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct gp_tenant_list l;
    struct gp_diag diag;

    gp_tenant_list_init(&l);
    if (gp_tenants_parse(&l, (const char *)data, size, "fuzz.json", &diag) ==
        GP_OK) {
        /* what it accepted is consistent */
        for (size_t i = 0; i < l.n; i++)
            if (!l.t[i].name || (l.t[i].cap && l.t[i].cap < l.t[i].guarantee) ||
                l.t[i].lend_limit > l.t[i].guarantee)
                __builtin_trap();
    }
    gp_tenant_list_fini(&l);
    return 0;
}
