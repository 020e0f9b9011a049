/* decode.h - the API's request bodies, decoded and checked without a
 * daemon: pure functions from bytes to clean JSON, or an error that names
 * the field. The API (api.c) calls them before anything changes;
 * fuzz/fuzz_api.c feeds them any bytes.
 *
 * Errors: GP_EPARSE (not JSON, an unknown field, a wrong type, a bad
 * string), GP_ERANGE (a number out of range), GP_ENOMEM. diag->where is
 * the field ("body", "gpus", "jobs[3].env.X", "users[2]") and diag->msg a
 * sentence that begins with it. Nothing is written to the out-parameter on
 * an error.
 */
#ifndef GPUPOOL_DAEMON_DECODE_H
#define GPUPOOL_DAEMON_DECODE_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "gpupool/err.h"

#define GP_API_MAX_BATCH 1000         /* jobs of one submit */
#define GP_API_MAX_ARGS 1024          /* command words */
#define GP_API_MAX_ENV 256            /* environment variables */
#define GP_API_MAX_OPTIONS 64         /* policy options */
#define GP_API_MAX_GUARANTEE 10000000 /* GPUs, as in a tenants file */

/* POST /v1/jobs: one job object, or {"jobs": [1 to GP_API_MAX_BATCH job
 * objects]} (docs/api.md has the fields). On success *jobs_out is the
 * clean request with its defaults filled (gpus 1, or 0 with gpu_milli;
 * tenant "default"; name = the program's base name): a JSON object for
 * one job, an array of them for a batch. Decoding a clean request again
 * gives it back unchanged. */
int gp_api_decode_submit(const char *body, size_t len, json_t **jobs_out,
                         struct gp_diag *diag);

/* POST /v1/tenants (create: "name" required, "parent" allowed) and PATCH
 * /v1/tenants/NAME (neither): an object of the fields given, each checked
 * alone - weight (a number in (0, 1e6]), guarantee, cap, lend_limit
 * (integers of GPUs, 0 to GP_API_MAX_GUARANTEE), users (user names, "*" =
 * everyone; tenants.h). Rules between fields (cap >= guarantee, ...) are
 * checked by the caller once merged with what the tenant has. A PATCH
 * must change something. */
int gp_api_decode_tenant(const char *body, size_t len, bool create,
                         json_t **out, struct gp_diag *diag);

/* PUT /v1/policy/options: {"key": "value", ...}, at most
 * GP_API_MAX_OPTIONS keys of 1 to 64 bytes ([a-z0-9_.-]); values are
 * strings of at most 1024 printable bytes (an integer, a real or a bool is
 * taken as its text). *out maps every key to a string. */
int gp_api_decode_policy_options(const char *body, size_t len, json_t **out,
                                 struct gp_diag *diag);

#endif
