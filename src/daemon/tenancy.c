/* tenancy.c - tenants at run time: members, an admin's changes, and the
 * store's copy of them (tenancy.h). */
#include "daemon/tenancy.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "daemon/decode.h"

static bool open_default(const struct daemon *d)
{
    return !(d->cfg.scheduler.tenants && *d->cfg.scheduler.tenants);
}

bool gp_tenancy_may(const struct daemon *d, const struct gp_identity *who,
                    const char *tenant)
{
    return gp_auth_may(d->members, open_default(d), who, tenant);
}

bool gp_tenancy_is_defined(const struct daemon *d, const char *tenant)
{
    return gp_auth_is_defined(d->members, open_default(d), tenant);
}

/* A tenants file entry's users as the members' array. */
static json_t *file_users(const struct gp_tenant_list *l, size_t i)
{
    json_t *a = json_array();
    const struct gp_tenant_users *u = l->users ? &l->users[i] : NULL;

    if (!a || !u)
        return a;
    if (u->everyone)
        json_array_append_new(a, json_string("*"));
    for (size_t k = 0; k < u->n; k++)
        json_array_append_new(a, json_string(u->names[k]));
    return a;
}

json_t *gp_tenancy_spec(const struct daemon *d, const char *name)
{
    const struct gp_tenant_info *ti;
    json_t *users = json_object_get(d->members, name), *o;
    uint32_t t;

    if (!users || gp_core_find_tenant(d->core, name, &t) != GP_OK)
        return NULL;
    ti = gp_core_tenant_info(d->core, t);
    o = json_pack("{ss sf si si si sO}", "name", name, "weight", ti->weight,
                  "guarantee", (int)ti->guarantee, "cap", (int)ti->cap,
                  "lend_limit", (int)ti->lend_limit, "users", users);
    if (o && ti->parent != GP_TENANT_NONE)
        json_object_set_new(
            o, "parent", json_string(gp_core_tenant_name(d->core, ti->parent)));
    return o;
}

static int64_t int_of(json_t *s, const char *key)
{
    return json_integer_value(json_object_get(s, key));
}

/* Give a whole definition (name, ..., users) to the core, then to the
 * members. Rules between fields are checked here to name the field. */
static int apply(struct daemon *d, json_t *s, bool create, struct gp_diag *diag)
{
    struct gp_tenant_spec t = {
        .name = json_string_value(json_object_get(s, "name")),
        .parent = json_string_value(json_object_get(s, "parent")),
        .weight = json_number_value(json_object_get(s, "weight")),
        .guarantee = (uint32_t)int_of(s, "guarantee"),
        .cap = (uint32_t)int_of(s, "cap"),
        .lend_limit = (uint32_t)int_of(s, "lend_limit"),
    };
    json_t *users = json_object_get(s, "users");
    uint32_t idx;
    int rc;

    if (!create && gp_core_find_tenant(d->core, t.name, &idx) == GP_OK &&
        gp_core_tenant_info(d->core, idx)->typed &&
        t.guarantee != gp_core_tenant_info(d->core, idx)->guarantee)
        return gp_diag_set(diag, GP_EINVAL, "guarantee",
                           "guarantee: tenant '%s' splits its guarantee of "
                           "%u by GPU type; change it in the tenants file",
                           t.name,
                           gp_core_tenant_info(d->core, idx)->guarantee);
    if (t.cap && t.cap < t.guarantee)
        return gp_diag_set(diag, GP_EINVAL, "cap",
                           "cap: %u is below the guarantee %u", t.cap,
                           t.guarantee);
    if (t.lend_limit > t.guarantee)
        return gp_diag_set(diag, GP_EINVAL, "lend_limit",
                           "lend_limit: %u is above the guarantee %u",
                           t.lend_limit, t.guarantee);
    if (create && t.parent && !json_object_get(d->members, t.parent))
        return gp_diag_set(diag, GP_EINVAL, "parent",
                           "parent: no tenant '%s' is defined", t.parent);
    rc = create ? gp_core_add_tenant(d->core, &t, diag)
                : gp_core_update_tenant(d->core, &t, diag);
    if (rc != GP_OK) {
        if (diag)
            snprintf(diag->where, sizeof(diag->where), "%s", t.name);
        return rc == GP_ENOMEM ? rc : GP_EINVAL;
    }
    if (json_object_set_new(d->members, t.name,
                            users ? json_deep_copy(users) : json_array()) != 0)
        return gp_diag_set(diag, GP_ENOMEM, t.name, "out of memory");
    return GP_OK;
}

/* The store keeps the whole definition; written before the core takes
 * it, inside the request's savepoint. */
static int persist(struct daemon *d, json_t *s, int64_t now,
                   struct gp_diag *diag)
{
    char *text = json_dumps(s, JSON_COMPACT | JSON_SORT_KEYS);
    struct gp_db_tenant row = {
        .name = json_string_value(json_object_get(s, "name")),
        .spec_json = text,
        .created_us = now,
        .updated_us = now,
    };
    int rc;

    if (!text)
        return gp_diag_set(diag, GP_ENOMEM, "tenant", "out of memory");
    rc = gp_db_tenant_upsert(d->db, &row, diag);
    free(text);
    return rc == GP_OK ? GP_OK : GP_EIO;
}

int gp_tenancy_create(struct daemon *d, json_t *req, int64_t now,
                      struct gp_diag *diag)
{
    const char *name = json_string_value(json_object_get(req, "name"));
    json_t *s;
    int rc;

    if (!name)
        return gp_diag_set(diag, GP_EINVAL, "name", "name: required");
    if (json_object_get(d->members, name))
        return gp_diag_set(diag, GP_EEXIST, "name",
                           "name: tenant '%s' exists (PATCH "
                           "/v1/tenants/NAME changes it)",
                           name);
    /* what is not given takes the defaults of a tenants file */
    if (!(s = json_pack("{sf si si si s[]}", "weight", 1.0, "guarantee", 0,
                        "cap", 0, "lend_limit", 0, "users")))
        return gp_diag_set(diag, GP_ENOMEM, "tenant", "out of memory");
    json_object_update(s, req);
    if ((rc = persist(d, s, now, diag)) == GP_OK)
        rc = apply(d, s, true, diag);
    json_decref(s);
    return rc;
}

int gp_tenancy_update(struct daemon *d, const char *name, json_t *req,
                      int64_t now, struct gp_diag *diag)
{
    json_t *s = gp_tenancy_spec(d, name);
    int rc;

    if (!s)
        return gp_diag_set(diag, GP_ENOENT, "name",
                           "no tenant '%s' is defined (POST /v1/tenants "
                           "defines one)",
                           name);
    json_object_update(s, req);
    if ((rc = persist(d, s, now, diag)) == GP_OK)
        rc = apply(d, s, false, diag);
    json_decref(s);
    return rc;
}

/* ---- start ------------------------------------------------------------------
 */

static int collect(void *priv, const struct gp_db_tenant *t)
{
    json_t *all = priv;

    return json_object_set_new(all, t->name, json_string(t->spec_json)) == 0
               ? 0
               : GP_ENOMEM;
}

int gp_tenancy_init(struct daemon *d, struct gp_diag *diag)
{
    json_t *stored;
    bool progress = true;
    int rc;

    if (!(d->members = json_object()) || !(stored = json_object()))
        return gp_diag_set(diag, GP_ENOMEM, "tenants", "out of memory");
    for (size_t i = 0; i < d->tenants.n; i++)
        if (json_object_set_new(d->members, d->tenants.t[i].name,
                                file_users(&d->tenants, i)) != 0) {
            json_decref(stored);
            return gp_diag_set(diag, GP_ENOMEM, "tenants", "out of memory");
        }
    if ((rc = gp_db_tenants_each(d->db, collect, stored, diag)) != GP_OK) {
        json_decref(stored);
        return rc;
    }
    /* parents first: apply what can be, until nothing more can */
    while (progress && json_object_size(stored)) {
        const char *name;
        json_t *text, *tmp;

        progress = false;
        json_object_foreach_safe(stored, tmp, name, text)
        {
            const char *spec = json_string_value(text);
            struct gp_diag why = {{0}, {0}};
            json_t *s = NULL;
            const char *parent;
            bool in_file = json_object_get(d->members, name) != NULL;

            if (gp_api_decode_tenant(spec, strlen(spec), true, &s, &why) !=
                    GP_OK ||
                strcmp(json_string_value(json_object_get(s, "name")), name)) {
                gp_dlog(d, GP_LOG_WARN,
                        "tenant %s: the store's definition is unreadable "
                        "(%s: %s); left out",
                        name, why.where, why.msg);
                json_decref(s);
                json_object_del(stored, name);
                progress = true;
                continue;
            }
            parent = json_string_value(json_object_get(s, "parent"));
            if (parent && !json_object_get(d->members, parent)) {
                json_decref(s);
                continue; /* perhaps after its parent, in a later pass */
            }
            if (apply(d, s, !in_file, &why) != GP_OK)
                gp_dlog(d, GP_LOG_WARN,
                        "tenant %s: the store's definition is refused now "
                        "(%s: %s); %s",
                        name, why.where, why.msg,
                        in_file ? "the tenants file's stays" : "left out");
            else if (in_file)
                gp_dlog(d, GP_LOG_INFO,
                        "tenant %s: the definition an admin gave through "
                        "the API replaces the tenants file's",
                        name);
            json_decref(s);
            json_object_del(stored, name);
            progress = true;
        }
    }
    {
        const char *name;
        json_t *text;

        json_object_foreach(stored, name, text)
        {
            (void)text;
            gp_dlog(d, GP_LOG_WARN,
                    "tenant %s: its parent is not defined; left out", name);
        }
    }
    json_decref(stored);
    return GP_OK;
}

/* ---- SIGHUP: the tenants file again ----------------------------------- */

static int collect_name(void *priv, const struct gp_db_tenant *t)
{
    return json_object_set_new(priv, t->name, json_true()) == 0 ? 0 : GP_ENOMEM;
}

/* Whether a tenant's type split in the file matches the core's. */
static bool same_split(const struct gp_core *core, uint32_t idx,
                       const struct gp_tenant_spec *t)
{
    const struct gp_tenant_info *ti = gp_core_tenant_info(core, idx);

    if (!ti->typed)
        return t->nby_type == 0;
    return t->nby_type > 0 && t->guarantee == ti->guarantee;
}

int gp_tenancy_reload(struct daemon *d, struct gp_tenant_list *l)
{
    json_t *stored = json_object(), *seen = json_object();
    struct gp_diag diag = {{0}, {0}};
    size_t changed = 0, added = 0, kept = 0, refused = 0;

    if (!stored || !seen ||
        gp_db_tenants_each(d->db, collect_name, stored, &diag) != GP_OK) {
        gp_dlog(d, GP_LOG_ERROR,
                "reload: tenants: cannot read the store's tenants (%s); "
                "nothing changed",
                diag.msg[0] ? diag.msg : "out of memory");
        json_decref(stored);
        json_decref(seen);
        return GP_EIO;
    }
    for (size_t i = 0; i < l->n; i++) {
        struct gp_tenant_spec t = l->t[i];
        struct gp_diag why = {{0}, {0}};
        uint32_t idx;
        int rc;

        json_object_set_new(seen, t.name, json_true());
        if (json_object_get(stored, t.name)) {
            kept++; /* an admin's definition: the store's wins */
            continue;
        }
        if (gp_core_find_tenant(d->core, t.name, &idx) != GP_OK) {
            rc = gp_core_add_tenant(d->core, &t, &why);
            added += rc == GP_OK;
        } else if (!same_split(d->core, idx, &t)) {
            rc = gp_diag_set(&why, GP_EINVAL, "guarantee",
                             "its guarantee by GPU type changed; that needs "
                             "a restart");
        } else {
            t.by_type = NULL; /* the parts stay (gp_core_update_tenant) */
            t.nby_type = 0;
            rc = gp_core_update_tenant(d->core, &t, &why);
            changed += rc == GP_OK;
        }
        if (rc != GP_OK) {
            refused++;
            gp_dlog(d, GP_LOG_WARN,
                    "reload: tenant %s: %s%s%s; it stays as it was", t.name,
                    why.where, why.where[0] ? ": " : "", why.msg);
            continue;
        }
        json_object_set_new(d->members, t.name, file_users(l, i));
    }
    {
        const char *name;
        json_t *v;

        json_object_foreach(d->members, name, v)
        {
            (void)v;
            if (!json_object_get(seen, name) && !json_object_get(stored, name))
                gp_dlog(d, GP_LOG_WARN,
                        "reload: tenant %s is no longer in the tenants "
                        "file; it stays until the daemon restarts",
                        name);
        }
    }
    gp_dlog(d, GP_LOG_INFO,
            "reload: tenants file: %zu added, %zu updated, %zu kept as an "
            "admin defined them, %zu refused",
            added, changed, kept, refused);
    json_decref(stored);
    json_decref(seen);
    return GP_OK;
}

void gp_tenancy_fini(struct daemon *d)
{
    json_decref(d->members);
    d->members = NULL;
}
