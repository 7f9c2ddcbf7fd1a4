/* Flag rows of the commands that read a dataset's annotations through its cache (data/sets/cache.h):
 *
 *   rn_flag flags[] = {RN_FLAG_STR("--data-dir", &dir, "..."), RN_CACHE_DIR_FLAG(&cache_dir), {0}};
 */
#ifndef RN_CLI_DATA_FLAGS_H
#define RN_CLI_DATA_FLAGS_H

#include "cli/args.h"

#define RN_CACHE_DIR_FLAG(p)                                                                   \
    RN_FLAG_STR("--cache-dir", (p), "cache folder, created if missing (default next to the "   \
                                    "annotations, or the per-user cache when that is not writable)")

#endif
