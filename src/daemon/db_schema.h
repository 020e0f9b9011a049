/* db_schema.h - the store's numbered migrations (internal to the store and
 * its tests).
 *
 * Migration i (from 0) takes a store from version i to version i + 1; the
 * store's version is PRAGMA user_version. A migration is SQL run in one
 * transaction with the version bump; it never edits an earlier step: a
 * change is a new step, so every old store can be brought forward.
 */
#ifndef GPUPOOL_DAEMON_DB_SCHEMA_H
#define GPUPOOL_DAEMON_DB_SCHEMA_H

#include <stddef.h>

extern const char *const gp__db_migrations[];
extern const size_t gp__db_nmigrations;

#endif
