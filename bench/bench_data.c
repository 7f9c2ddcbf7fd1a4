/* Data-pipeline benchmark: decode + crop + augment + normalise through
 * rn_loader on the JPEGs listed in DIR/boxes.txt (bench/data_ref.py gen).
 *
 *   build/bench/bench_data DIR [WORKERS [BATCH [exact|fast|prep]]]   -> one JSON line with images/s
 *
 * exact (default): full-size JPEG decode; fast: rn_crop_cfg.fast_decode; prep: exact pixels from
 * prepared frames (data/image/prep.h) in DIR/prep, built first where missing (time and size reported).
 * WORKERS 0: one per core. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <errno.h>
#include <sys/stat.h>

#include "data/load/loader.h"
#include "data/image/prep.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Reads DIR/boxes.txt into an in-memory dataset (absolute paths, data_dir "/"). */
static int read_boxes(rn_dataset *ds, const char *dir)
{
    char path[4096], img[4096];
    snprintf(path, sizeof path, "%s/boxes.txt", dir);
    FILE *f = fopen(path, "r");
    if (!f) return fprintf(stderr, "bench_data: cannot open %s\n", path), -1;
    size_t cap = 1024, n = 0, pool_n = 0, pool_cap = 1 << 16;
    rn_sample *s = rn_xcalloc(cap, sizeof *s);
    char *pool = rn_xmalloc(pool_cap);
    float v[6];
    while (fscanf(f, "%4095s %f %f %f %f %f %f", img, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]) == 7) {
        if (n == cap) s = realloc(s, (cap *= 2) * sizeof *s);
        size_t len = strlen(img) + 1;
        while (pool_n + len > pool_cap) pool = realloc(pool, pool_cap *= 2);
        RN_ASSERT(s && pool);
        memcpy(pool + pool_n, img, len);
        s[n] = (rn_sample){.path_off = (uint32_t)pool_n, .bbox = {v[0], v[1], v[2], v[3]}, .k = 1.0f,
                           .root_img = {v[4], v[5], 3000.0f}, .root_vis = 1, .have_depth = 1};
        pool_n += len;
        n++;
    }
    fclose(f);
    *ds = (rn_dataset){.samples = s, .n = n, .strings = pool, .strings_len = pool_n, .data_dir = ""};
    snprintf(ds->name, sizeof ds->name, "bench");
    return n ? 0 : (fprintf(stderr, "bench_data: %s has no boxes\n", path), -1);
}

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Share of the workers' time per stage between two snapshots. From source files the
 * entropy decoding of the crop's rows is estimated at the skipped rows' rate (seconds per
 * row) and moved from the crop's decode to "entropy_decode"; from prepared frames it is
 * rn_huff's time (RN_CROP_STAGE_HUFF, every 16th MCU timed). */
static void print_stages(const rn_loader_stats *a, const rn_loader_stats *b, long images)
{
    double d[RN_CROP_NSTAGES], tot = 0;
    for (int k = 0; k < RN_CROP_NSTAGES; k++) tot += d[k] = b->stage_s[k] - a->stage_s[k];
    double skipped = (double)(b->rows_skipped - a->rows_skipped), read = (double)(b->rows_read - a->rows_read);
    double ent_rows = skipped > 0 ? d[RN_CROP_STAGE_SKIP] / skipped * read : 0;
    if (ent_rows > d[RN_CROP_STAGE_ROWS]) ent_rows = d[RN_CROP_STAGE_ROWS];
    tot = tot > 0 ? tot : 1;
    printf("\"ms_per_image_per_thread\": %.2f, \"stage_share\": {\"read\": %.3f, ", 1e3 * tot / (double)images,
           d[RN_CROP_STAGE_READ] / tot);
    printf("\"entropy_decode\": %.3f, \"idct_colour\": %.3f, ",
           (d[RN_CROP_STAGE_SKIP] + d[RN_CROP_STAGE_HUFF] + ent_rows) / tot, (d[RN_CROP_STAGE_ROWS] - ent_rows) / tot);
    printf("\"warp\": %.3f, \"normalise\": %.3f}, \"rows_skipped_per_image\": %.0f, \"rows_decoded_per_image\": %.0f, "
           "\"kb_read_per_image\": %.1f",
           d[RN_CROP_STAGE_WARP] / tot, d[RN_CROP_STAGE_NORM] / tot, skipped / (double)images, read / (double)images,
           (double)(b->bytes_read - a->bytes_read) / 1e3 / (double)images);
}

/* Prepared frames of every image in ds (once each); prints build time and size. */
static int prepare(const rn_dataset *ds, const char *dir)
{
    if (mkdir(dir, 0755) && errno != EEXIST) return fprintf(stderr, "bench_data: cannot create %s\n", dir), -1;
    double t0 = now();
    uint64_t bytes = 0, src = 0;
    int built = 0;
    for (size_t i = 0; i < ds->n; i++) {
        const char *path = ds->strings + ds->samples[i].path_off;
        char prep[4200];
        rn_prep_path(prep, sizeof prep, dir, path);
        rn_prep_info info;
        rn_err err = {0};
        if (rn_prep_build(path, prep, &info, &err)) return fprintf(stderr, "bench_data: %s\n", err.msg), -1;
        struct stat st;
        src += stat(path, &st) ? 0 : (uint64_t)st.st_size;
        bytes += info.bytes, built += info.built;
    }
    fprintf(stderr, "bench_data: prepared frames: %d built in %.2f s, %.1f MB for %zu images (sources %.1f MB)\n", built,
            now() - t0, bytes / 1e6, ds->n, src / 1e6);
    return 0;
}

static double run_epoch(rn_loader *ld, int epoch, long *images)
{
    rn_err err = {0};
    const rn_batch *b;
    double t0 = now();
    *images = 0;
    rn_loader_start(ld, epoch, 0, &err);
    int rc;
    while ((rc = rn_loader_next(ld, &b, &err)) == 1) *images += b->n;
    if (rc < 0) fprintf(stderr, "bench_data: %s\n", err.msg);
    return now() - t0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || (argc > 4 && strcmp(argv[4], "exact") && strcmp(argv[4], "fast") && strcmp(argv[4], "prep")))
        return fprintf(stderr, "usage: bench_data DIR [WORKERS [BATCH [exact|fast|prep]]]\n"), 2;
    rn_dataset ds;
    if (read_boxes(&ds, argv[1])) return 1;
    const rn_dataset *sets[1] = {&ds};
    rn_loader_cfg cfg;
    rn_loader_cfg_default(&cfg, sets, 1, RN_SPLIT_TRAIN);
    cfg.workers = argc > 2 ? atoi(argv[2]) : 2;
    cfg.batch = argc > 3 ? atoi(argv[3]) : 32;
    cfg.seed = 1;
    cfg.crop.fast_decode = argc > 4 && !strcmp(argv[4], "fast");
    char prep_dir[4200];
    snprintf(prep_dir, sizeof prep_dir, "%s/prep", argv[1]);
    if (argc > 4 && !strcmp(argv[4], "prep")) {
        if (prepare(&ds, prep_dir)) return 1;
        cfg.crop.prep_dir = prep_dir;
    }
    rn_loader *ld;
    rn_err err = {0};
    if (rn_loader_create(&ld, &cfg, &err)) return fprintf(stderr, "bench_data: %s\n", err.msg), 1;
    long images;
    run_epoch(ld, 0, &images); /* warm-up: page cache, allocations */
    rn_loader_stats s0, s1;
    rn_loader_stats_get(ld, &s0, NULL, 0);
    double c0 = cpu_seconds(), dt = run_epoch(ld, 1, &images), cpu = cpu_seconds() - c0;
    rn_loader_stats_get(ld, &s1, NULL, 0);
    printf("{\"pipeline\": \"rootnet\", \"prepared\": %d, \"fast_decode\": %d, \"workers\": %d, \"batch\": %d, \"images\": %ld, "
           "\"seconds\": %.3f, \"images_per_s\": %.1f, \"images_per_cpu_s\": %.1f, ", cfg.crop.prep_dir != NULL, cfg.crop.fast_decode,
           cfg.workers, cfg.batch, images, dt, images / dt, images / cpu);
    print_stages(&s0, &s1, images);
    printf("}\n");
    rn_loader_free(ld);
    free(ds.samples), free((void *)ds.strings);
    return 0;
}
